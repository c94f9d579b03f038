"""The research knobs: settings a benchmark chose, which a user has no reason to change. They are fields of the
one ``Settings`` (read as ``settings.note_weight``), written under ``[experimental]`` in botbin.toml; a key of an
older file at the top level still works, with a warning that names the file and the key (config.py). Each field's
docstring says what chose its value.
"""

from __future__ import annotations

from pydantic import Field

from botbin.config_model import Section


class ExperimentalSettings(Section):
    """Research knobs: ranking weights, decay curves and the thresholds of consolidation and conversations."""

    # -- ranking (index/ranking.py) ------------------------------------------------------------------------------
    note_weight: float = Field(
        default=0.7,
        ge=0.0,
        description="weight of the query's similarity to a chunk's whole note (its mean chunk vector), averaged "
        "into the score; `0` ranks chunks alone",
    )
    """Weight of the note-level cosine (query against the note's mean chunk vector) in a chunk's score. A chunk is
    judged with its note: a short section that happens to share words with the query no longer beats the note that
    is about it. With ``neighbour_weight``, chosen on two Obsidian help question sets at once (bench/README.md)."""
    neighbour_weight: float = Field(
        default=0.4,
        ge=0.0,
        description="weight of the query's similarity to the chunks just before and after a chunk in its note, "
        "averaged into the score; `0` turns it off",
    )
    """Weight of the mean cosine of the chunk's neighbours in its note (the chunks before and after it): the context
    a chunk that ends at its section's boundary no longer carries in its own text (see bench/README.md)."""
    # -- agent recall (search/recency.py) ------------------------------------------------------------------------
    recency_weight: float = Field(
        default=0.15, ge=0.0, le=1.0, description="agent recall: weight of recency decay (the rest weighs similarity)"
    )
    """Weight of recency decay in agent recall (MCP search, context tier 4); see search/recency.py."""
    scope_weight: float = Field(
        default=0.10,
        ge=0.0,
        le=1.0,
        description="agent recall: weight of scope preference (instruction > durable > daily notes)",
    )
    """Weight of scope preference (instruction > durable > daily notes) in agent recall; with ``recency_weight`` at
    most 1 (config_rules.py)."""
    daily_half_life_h: float = Field(default=72.0, gt=0.0, description="hours for a daily note's recency to halve")
    """Hours for a daily note's recency to halve (memory/YYYY-MM-DD.md)."""
    durable_half_life_h: float = Field(
        default=2160.0, gt=0.0, description="hours for any other note's recency to halve; instruction notes never decay"
    )
    """Hours for any other note's recency to halve (90 days); instruction notes never decay."""
    # -- memo lifecycle (memory/) --------------------------------------------------------------------------------
    reinforcement_stretch: float = Field(
        default=1.0, ge=0.0, description="half-life gained per retrieval of a memo (`h·(1 + stretch·count)`)"
    )
    """How much each retrieval stretches a memo's half-life: h = half_life * (1 + stretch * count)."""
    decay_weight: float = Field(
        default=0.1, ge=0.0, le=1.0, description="weight of memo decay in search ranking; `0` turns it off"
    )
    """Weight of a memo's decay score in search ranking: score * (1 - w + w * decay); 0 turns it off."""
    consolidate_min_reinforcement: int = Field(
        default=3, gt=0, description="`botbin consolidate`: retrievals that make a memo durable"
    )
    """A memo retrieved this many times is a consolidation candidate."""
    consolidate_duplicate_cosine: float = Field(
        default=0.85, ge=0.0, le=1.0, description="`botbin consolidate`: cosine at which memos of different notes recur"
    )
    """Memos of different notes this similar (cosine) recur, and consolidate together."""
    distill_min_centroid: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="an abstractive root is kept only this close (cosine) to its sources' centroid",
    )
    """Abstractive output is kept only if its cosine to the sources' centroid is at least this..."""
    distill_min_coverage: float = Field(
        default=0.5, ge=0.0, le=1.0, description="...and this close (cosine) to each of its sources"
    )
    """...and its cosine to every single source is at least this; else the extractive result is used."""
    # -- conversation memory (memory/conversation/) --------------------------------------------------------------
    drift_cosine: float = Field(
        default=0.25,
        ge=0.0,
        le=1.0,
        description="a turn whose cosine to the buffer's centroid is under this distils the buffer first (FileRAG)",
    )
    """A turn whose cosine to the buffer's centroid is under this distils the buffer first (topic drift; FileRAG)."""
    duplicate_block_cosine: float = Field(
        default=0.92,
        ge=0.0,
        le=1.0,
        description="a distilled block this similar to one already in the soul file is skipped (FileRAG)",
    )
    """A distilled block this similar (cosine) to an existing one is skipped as a near-duplicate (FileRAG)."""
    admission_threshold: float = Field(
        default=0.35,
        ge=0.0,
        le=1.0,
        description="admission-gate score (0..1) a turn needs to become a bullet; rules are kept regardless",
    )
    """Turns whose admission-gate score (in [0, 1]) reaches this are promoted into a distilled block; chosen on
    LoCoMo conversations 0-4 against 0.4 (memory/conversation/gate.py; bench/bench_locomo_ingest.py)."""
