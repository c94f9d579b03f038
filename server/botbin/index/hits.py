"""What a search of an index takes and gives: the query, hits, and the chunk references the memo lifecycle reads."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.index.ranking import MAX_HITS_PER_NOTE, NEIGHBOUR_WEIGHT, NOTE_WEIGHT
from botbin.wire.requests import SearchFilters


@dataclass(frozen=True, eq=False)
class IndexQuery:
    """One search of an index backend (the embedded MemoryIndex, the team database's PostgresIndex), whole: the
    search pipeline (search/pipeline.py) resolves a SearchRequest and the settings into it."""

    query: str
    """The query text (its BM25 terms; may be empty)."""
    query_vector: npt.NDArray[np.float32] | None
    """float32 (dim,), normalized; None ranks by BM25 alone (the keyword fallback)."""
    k: int = 10
    """Hits wanted."""
    alpha: float = 0.7
    """Weight of the cosine in the hybrid score, in [0, 1]."""
    filters: SearchFilters = field(default_factory=SearchFilters)
    best_per_note: bool = False
    """A cap of 1 hit per note."""
    max_hits_per_note: int = MAX_HITS_PER_NOTE
    """At most this many hits of one note (0: no cap)."""
    note_weight: float = NOTE_WEIGHT
    """Weight of the query's cosine to the chunk's note (its mean chunk vector), averaged into the score."""
    neighbour_weight: float = NEIGHBOUR_WEIGHT
    """Weight of the query's cosine to the chunks around it, averaged into the score."""
    exempt_daily: bool = False
    """The per-note cap leaves daily notes alone (index/daily.py)."""
    skip_paths: frozenset[str] = frozenset()
    """Notes left out by path (the search pipeline's: notes deleted or no longer tracked since the last sync)."""

    @property
    def unfiltered(self) -> bool:
        """True when every chunk may be returned (no filter, no note left out)."""
        return not self.skip_paths and self.filters == SearchFilters()

    @property
    def note_filtered(self) -> bool:
        """True when each note must be asked (a note-level filter, or notes left out)."""
        return bool(self.skip_paths) or self.filters.note_level

    def admits_note(self, path: str, tags: Iterable[str], date: str | None) -> bool:
        """Whether a note is neither left out nor stopped by a note-level filter (SearchFilters.admits_note)."""
        return path not in self.skip_paths and self.filters.admits_note(path, tags, date)

    def admits(self, path: str, tags: Iterable[str], date: str | None, kind: str) -> bool:
        """Whether a chunk of kind ``kind`` in the note (``path``, ``tags``, ``date``) passes."""
        return path not in self.skip_paths and self.filters.admits(path, tags, date, kind)


@dataclass(frozen=True)
class Hit:
    """One search result."""

    path: str
    """Relative POSIX path of the note."""
    start_line: int
    """0-based first line of the chunk."""
    end_line: int
    """0-based line after the chunk (exclusive)."""
    heading_path: tuple[str, ...]
    kind: str
    title: str
    snippet: str
    """The chunk's sentence that best matches the query, as plain one-line text (index/snippet.py)."""
    text: str
    """The chunk's full text."""
    score: float
    """Hybrid score, alpha * cosine + (1 - alpha) * bm25, averaged with the note's and the neighbours' cosine
    (ranking.add_context)."""
    cosine: float
    """Cosine similarity of query and chunk embeddings, in [-1, 1]."""
    bm25: float
    """The keyword weight in the score, in [0, 1] (ranking.keyword_weight): the raw BM25 score over that of a full
    keyword match, the query's best chunk's but at least a share of the query's matchable IDF mass, so the best
    of weak matches stays under 1."""
    date: str | None = None
    """The note's date (frontmatter or file name), ISO 8601, if it has one."""
    instruction: bool = False
    """True when the note is an instruction note (MEMORY.md, AGENTS.md, ...)."""
    text_md5: str = ""
    """MD5 hex of the chunk's embedded text: with ``path``, the chunk's memo key (memory/)."""
    snippet_start_line: int = 0
    """0-based note line where the snippet's sentence starts (within the chunk's lines)."""
    snippet_end_line: int = 0
    """0-based note line after the snippet's sentence (exclusive)."""
    components: tuple[tuple[str, float], ...] = ()
    """How later ranking stages made ``score`` (search/pipeline.py): ``hybrid`` (the index's score), ``decay``
    (the memo's retention factor), ``recency`` and ``scope`` (agent recall), in the order applied."""
    namespace: str | None = None
    """The team-database namespace the hit comes from (backend postgres); None for the embedded index."""
    bm25_share: float = 0.0
    """The chunk's raw BM25 score as a share of the most the query could score (the sum of its terms' IDF,
    LexicalIndex.idf_mass, unknown terms included), in [0, 1]: an absolute keyword match, unlike ``bm25``, which is
    1 for a query's best chunk that holds enough of its known terms (the relevance floor, search/pipeline.py,
    reads this one)."""
    note_cosine: float = 0.0
    """Cosine of the query and the chunk's note (its normalized mean chunk vector); 0 without a query vector."""
    neighbour_cosine: float = 0.0
    """Mean cosine of the query and the chunks before and after it in its note (its own cosine when it has
    none); 0 without a query vector. With ``note_cosine``, the terms ranking.add_context averaged into ``score``."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "headingPath": list(self.heading_path),
            "kind": self.kind,
            "title": self.title,
            "snippet": self.snippet,
            "snippetStartLine": self.snippet_start_line,
            "snippetEndLine": self.snippet_end_line,
            "score": round(self.score, 6),
            "cosine": round(self.cosine, 6),
            "bm25": round(self.bm25, 6),
            "bm25Share": round(self.bm25_share, 6),
        }
        if self.namespace is not None:
            out["namespace"] = self.namespace
        if self.components:
            out["components"] = {name: round(value, 6) for name, value in self.components}
        return out


@dataclass(frozen=True)
class ChunkRef:
    """One indexed chunk as the memo lifecycle sees it (memory/): its key, place and note facts."""

    path: str
    text_md5: str
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after the chunk (exclusive)."""
    kind: str
    text: str
    tags: tuple[str, ...]
    date: str | None
    """The note's date (frontmatter or file name), ISO 8601."""
    created_at: str | None
    """When the note was first synced, ISO 8601."""
    instruction: bool
    row: int
    """Row of the chunk's embedding in ``MemoryIndex.matrix()``."""
