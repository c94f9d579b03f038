"""Settings: defaults, then botbin.toml, then BOTBIN_* environment variables, then overrides (later wins).

Invalid values never stop the work: each one falls back to its default and yields a warning that names
the source (file, variable or flag) and the reason.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botbin.config_rules import DEFAULT_ROOTS_NOTE, check_ranges
from botbin.config_rules import WORKSPACE_PATH_KEYS as WORKSPACE_PATH_KEYS  # re-exported
from botbin.config_rules import path_glob as path_glob
from botbin.config_rules import safe_globs as safe_globs
from botbin.config_rules import unsafe_glob_reason as unsafe_glob_reason
from botbin.config_rules import windows_path_reason as windows_path_reason

CONFIG_FILE = "botbin.toml"
#: Bot-BIN's MEMORY.md and memory/ notes, plus the instruction files agents read (AGENTS.md, CLAUDE.md).
DEFAULT_INCLUDE: tuple[str, ...] = ("MEMORY.md", "AGENTS.md", "CLAUDE.md", "memory/**/*.md")
VAULT_INCLUDE: tuple[str, ...] = ("**/*.md",)
#: Instruction notes (their list items are hard rules; see directives/partition.py); MEMORY.md is memory.
DEFAULT_INSTRUCTION_NOTES: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md", "**/AGENTS.md", "**/CLAUDE.md")
#: The daily notes ``remember`` writes: ``memory/YYYY-MM-DD.md`` and its continuations ``memory/YYYY-MM-DD-N.md``
#: (agent/remember.py).
DAILY_NOTE_GLOBS: tuple[str, ...] = (
    "memory/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].md",
    "memory/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-[0-9]*.md",
)
#: Folders never scanned, whatever the globs say.
ALWAYS_EXCLUDED_DIRS: frozenset[str] = frozenset({".git", ".obsidian", ".trash", "node_modules"})


EMBED_BATCH_SIZE = 8
"""Texts per model call by default: the ``batch_size`` setting's default and the embedders' (a sync embeds shortest
first, and each batch pads to its longest text). On 2 CPU cores the help vault's 1,735 chunks took 19-21 s in
batches of 4-8, 26.5 s in batches of 32 and 33 s in batches of 64 through ONNX Runtime; torch 5.6 s against 7.3 s
at 32 on 600 of them (bench/README.md)."""


@dataclass(frozen=True)
class Settings:
    """Every botbin setting; the keys are the same in botbin.toml, BOTBIN_<KEY> and LSP options."""

    include: tuple[str, ...] = DEFAULT_INCLUDE
    """Globs (relative POSIX paths, ``**`` spans folders) of tracked notes."""
    exclude: tuple[str, ...] = ()
    """Globs of notes never tracked; the output folder and ALWAYS_EXCLUDED_DIRS are always excluded. Each is
    also read as a .gitignore line: ``Archive`` or ``Archive/`` excludes every folder of that name (and
    ``*.tmp.md`` such notes at any depth); a pattern with a slash inside is relative to the workspace."""
    instruction_notes: tuple[str, ...] = DEFAULT_INSTRUCTION_NOTES
    """Globs (relative POSIX paths, ``**`` spans folders, any case) of instruction notes, written for the agent:
    their list items and frontmatter are hard rules and their imperatives count. A note with frontmatter
    ``botbin: instructions`` is one too. Every other note (MEMORY.md included) gives rules only from explicit
    obligations and prohibitions ("never", "must", "do not")."""
    vault: bool = False
    """Vault mode: track every ``**/*.md`` note (replaces ``include``)."""
    output_dir: str = "memory/aifbin"
    """Folder, relative to the workspace, that receives the ``.aif-bin`` files and the state file."""
    model: str | None = None
    """A sentence-transformers folder (relative to the workspace, or absolute; or one that ships its ONNX export as
    ``onnx/model.onnx``); None means the bundled all-MiniLM-L6-v2. A change migrates the index in the background
    while the current one answers (workspace/migration.py); a folder that is no model is reported and not used."""
    alpha: float = 0.7
    """Weight of cosine similarity in the hybrid score, in [0, 1] (Bot-BIN paper §6.3; on SciFact train,
    bench/bench_scifact.py, nDCG@10 is flat from 0.68 to 0.76, so the paper's value stays; see bench/README.md)."""
    top_k: int = 10
    """Hits returned by a search unless the caller says otherwise."""
    max_hits_per_note: int = 2
    """At most this many hits of one note in a search's results, so one long note cannot fill the top k;
    0 lifts the cap (index/ranking.py MAX_HITS_PER_NOTE). Daily notes are exempt: each entry is its own memory
    (index/daily.py)."""
    note_weight: float = 0.7
    """Weight of the query's cosine to a chunk's whole note (its mean chunk vector) averaged into the hybrid
    score; 0 ranks chunks alone (index/ranking.py NOTE_WEIGHT, measured in bench/README.md)."""
    neighbour_weight: float = 0.4
    """Weight of the query's mean cosine to the chunks before and after a chunk in its note, averaged into the
    hybrid score; 0 turns it off (index/ranking.py NEIGHBOUR_WEIGHT)."""
    rerank_model: str | None = None
    """A sentence-transformers CrossEncoder folder (relative to the workspace, or absolute) that re-scores the best
    ``rerank_top_n`` hits of each search (search/rerank.py); None, the default, keeps the fused order. No
    cross-encoder ships with botbin."""
    rerank_top_n: int = 20
    """Hits the cross-encoder re-scores per search (the fused best ones)."""
    rerank_budget_ms: int = 300
    """Milliseconds re-scoring may take per search; past them it gives up and the fused order stands (the model
    itself loads once per process, outside this budget)."""
    target_tokens: int = 256
    """Most model tokens in one chunk, heading prefix and [CLS]/[SEP] included (MiniLM reads 256)."""
    overlap_tokens: int = 32
    """Tokens of context repeated from the previous chunk when a long section is split."""
    min_tokens: int = 50
    """Pieces smaller than this are merged with a neighbour of the same section and dated entry when the result
    still fits; a short section or entry stays a chunk of its own (chunking.py)."""
    max_note_bytes: int = 5_000_000
    """Notes larger than this (bytes) are skipped with a message; raise it to index them."""
    follow_symlinks: bool = False
    """Follow symbolic links (notes and folders) whose real target lies outside the workspace; when False
    they are skipped with a warning, and ``remember`` does not write through them. Links that stay inside
    the workspace are always followed; a folder is walked at most once through links, so a link loop never
    hangs the scan."""
    batch_size: int = EMBED_BATCH_SIZE
    """Chunks per embedding batch (the embedders' default too: ``EMBED_BATCH_SIZE``)."""
    compress: bool = False
    """zlib-compress the chunk block of written AIF-BIN files (flag bit 0)."""
    load_cache: bool = True
    """Keep a load cache of the index (``index-cache.npz`` beside the state file; never for an encrypted store):
    a start reads it instead of decoding and tokenizing every AIF-BIN file (index/load_cache.py)."""
    lock_timeout_s: float = 10.0
    """Seconds to wait for another process's sync lock before giving up."""
    debounce_ms: int = 400
    """Quiet time before ``botbin watch`` syncs a burst of file changes."""
    recency_weight: float = 0.15
    """Weight of recency decay in agent recall (MCP search, context tier 4); see search/recency.py."""
    scope_weight: float = 0.10
    """Weight of scope preference (instruction > durable > daily notes) in agent recall."""
    daily_half_life_h: float = 72.0
    """Hours for a daily note's recency to halve (memory/YYYY-MM-DD.md)."""
    durable_half_life_h: float = 2160.0
    """Hours for any other note's recency to halve (90 days); instruction notes never decay."""
    encryption: bool = False
    """Encrypt the chunk blocks (text, embeddings, note source) with AES-256-GCM; the passphrase comes from
    BOTBIN_PASSPHRASE, a terminal prompt or the editor's setting, and is never written to disk."""
    kdf_time_cost: int = 3
    """Argon2id passes when a store is first encrypted (RFC 9106 section 4, second recommended option)."""
    kdf_memory_kib: int = 65536
    """Argon2id memory in KiB when a store is first encrypted (64 MiB, RFC 9106)."""
    kdf_parallelism: int = 4
    """Argon2id lanes when a store is first encrypted (RFC 9106)."""
    # -- memory lifecycle (memory/; DESIGN section 8) -----------------------------------------
    decay_half_life_days: float = 30.0
    """Days for an unretrieved memo's decay score to halve (memory/retention.py: half-life regression,
    Settles & Meeder 2016, with the half-life stretched by each retrieval)."""
    reinforcement_stretch: float = 1.0
    """How much each retrieval stretches a memo's half-life: h = half_life * (1 + stretch * count)."""
    decay_weight: float = 0.1
    """Weight of a memo's decay score in search ranking: score * (1 - w + w * decay); 0 turns it off."""
    prune_threshold: float = 0.05
    """``botbin prune`` archives memos whose decay score is under this (0.05 is about 4.3 half-lives)."""
    consolidate_min_reinforcement: int = 3
    """A memo retrieved this many times is a consolidation candidate."""
    consolidate_duplicate_cosine: float = 0.85
    """Memos of different notes this similar (cosine) recur, and consolidate together."""
    roots_note: str = DEFAULT_ROOTS_NOTE
    """The note ``botbin consolidate`` writes durable roots to (inside its own marked block)."""
    distill_endpoint: str | None = None
    """An OpenAI-compatible base URL (e.g. http://localhost:8080/v1) for abstractive distillation; None
    keeps it extractive and offline. The key, if any, comes from BOTBIN_DISTILL_API_KEY."""
    distill_model: str = "local"
    """Model name sent to ``distill_endpoint``."""
    distill_min_centroid: float = 0.8
    """Abstractive output is kept only if its cosine to the sources' centroid is at least this..."""
    distill_min_coverage: float = 0.5
    """...and its cosine to every single source is at least this; else the extractive result is used."""
    # -- conversation memory (memory/conversation/) ---------------------------------------------------
    turn_buffer_size: int = 5
    """Turns buffered before they are distilled into the soul file (FileRAG)."""
    drift_cosine: float = 0.25
    """A turn whose cosine to the buffer's centroid is under this distils the buffer first (topic drift; FileRAG)."""
    duplicate_block_cosine: float = 0.92
    """A distilled block this similar (cosine) to an existing one is skipped as a near-duplicate (FileRAG)."""
    admission_threshold: float = 0.35
    """Turns whose admission-gate score (in [0, 1]) reaches this are promoted into a distilled block; chosen on
    LoCoMo conversations 0-4 against 0.4 (memory/conversation/gate.py; bench/bench_locomo_ingest.py)."""
    soul_dir: str = "memory/soul"
    """Folder of the per-user soul files (``<user>.md``), inside the workspace."""
    # -- team memory (index/postgres/, docs/postgres.md) ---------------------------------------------------
    backend: str = "embedded"
    """Where search reads from: "embedded" (the AIF-BIN files, in memory) or "postgres" (the team database;
    ``botbin sync`` still writes the AIF-BIN files, then publishes the changed notes)."""
    postgres_url: str | None = None
    """libpq URL of the team database (also BOTBIN_POSTGRES_URL); its password is never shown."""
    namespace: str | None = None
    """The namespace this workspace publishes into; None: the workspace folder's name."""
    search_namespaces: tuple[str, ...] = ()
    """Namespaces a search spans (``search --namespace a,b``); empty: ``namespace`` alone."""
    postgres_ef_search: int = 100
    """HNSW ``ef_search`` of the team database's searches (bench/bench_postgres.py: recall@10 >= 0.99)."""
    postgres_timeout_s: int = 5
    """Seconds to connect to the team database; a statement may run six times as long."""
    postgres_publish: bool = True
    """False: this workspace only reads the team database (a role granted read alone); ``sync`` publishes
    nothing."""

    @property
    def written_globs(self) -> tuple[str, ...]:
        """Globs of the notes botbin writes itself: the daily notes of ``remember``, everything under
        ``soul_dir`` (conversations) and ``roots_note`` (consolidation). They are memory, never instruction
        notes, whatever ``instruction_notes`` or their frontmatter say: what they hold came from an agent or a
        conversation, and a remembered line must never become a hard rule (directives/partition.py)."""
        return (*DAILY_NOTE_GLOBS, f"{self.soul_dir.strip('/')}/**", self.roots_note)

    @property
    def instruction_globs(self) -> tuple[str, ...]:
        """``instruction_notes``, then one ``!glob`` per ``written_globs`` (a ``!`` glob excludes): what every
        instruction-note test of this workspace is given (directives/partition.py ``is_instruction_path``)."""
        return (*self.instruction_notes, *(f"!{g}" for g in self.written_globs))

    @property
    def tracked_globs(self) -> tuple[str, ...]:
        """The include globs in force (vault mode tracks every note)."""
        return VAULT_INCLUDE if self.vault else self.include


@dataclass(frozen=True)
class LoadedSettings:
    """Settings together with the warnings raised while reading them."""

    settings: Settings
    warnings: tuple[str, ...] = field(default=())


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
_DEFAULTS = Settings()
#: ``instruction_globs`` of the default settings.
DEFAULT_INSTRUCTION_GLOBS: tuple[str, ...] = _DEFAULTS.instruction_globs


def _coerce(key: str, value: Any) -> Any:
    """Convert one raw value (TOML, env string or flag) to the type of Settings.<key>.

    Raises ValueError with the reason when it does not fit.
    """
    default = getattr(_DEFAULTS, key)
    if key in ("include", "exclude", "instruction_notes", "search_namespaces"):
        if isinstance(value, str):
            value = [p.strip() for p in value.split(",") if p.strip()]
        if not isinstance(value, list | tuple) or not all(isinstance(p, str) for p in value):
            raise ValueError("expected a list of glob strings")
        return tuple(value)
    if key in ("model", "rerank_model", "distill_endpoint", "postgres_url", "namespace"):
        if value in (None, ""):
            return None
        if not isinstance(value, str):
            reasons = {"model": "expected a folder path", "rerank_model": "expected a folder path"}
            raise ValueError({**reasons, "namespace": "expected a name"}.get(key, "expected a URL"))
        return value
    if isinstance(default, bool):
        if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            return value.strip().lower() in ("1", "true", "yes", "on")
        if not isinstance(value, bool):
            raise ValueError("expected true or false")
        return value
    if isinstance(default, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"expected a {type(default).__name__}") from None
        if isinstance(default, int):
            if not number.is_integer():
                raise ValueError("expected a whole number")
            return int(number)
        return number
    if isinstance(default, str) and isinstance(value, str) and value.strip():
        return value
    raise ValueError(f"expected a {type(default).__name__}")


def _apply(
    values: dict[str, Any], raw: Mapping[str, Any], source: str, warnings: list[str], sources: dict[str, str]
) -> None:
    for key, value in raw.items():
        if key not in _FIELDS:
            warnings.append(f"{source}: unknown setting '{key}' ignored")
            continue
        try:
            coerced = _coerce(key, value)
            if key in ("include", "exclude", "instruction_notes"):
                coerced = _drop_unsafe_globs(key, coerced, source, warnings)
            values[key] = coerced
            sources[key] = source
        except ValueError as exc:
            warnings.append(f"{source}: setting '{key}' = {value!r} ignored ({exc}); using the default")


def _drop_unsafe_globs(key: str, globs: tuple[str, ...], source: str, warnings: list[str]) -> tuple[str, ...]:
    """``globs`` less those that could leave the workspace, each reported; raises ValueError when an
    ``include`` is left with none (so it falls back to the default like any bad value)."""
    for glob in globs:
        if (reason := unsafe_glob_reason(glob)) is not None:
            warnings.append(f"{source}: glob {glob!r} in '{key}' ignored ({reason})")
    kept = safe_globs(globs)
    if key == "include" and globs and not kept:
        raise ValueError("no glob left inside the workspace")
    return kept


def _read_toml(path: Path, warnings: list[str]) -> Mapping[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        warnings.append(f"{path}: cannot read settings ({exc}); using defaults")
        return {}
    # Both a flat file and a [botbin] table are accepted.
    table = data.get("botbin", data)
    if not isinstance(table, dict):
        warnings.append(f"{path}: 'botbin' is not a table; settings in this file ignored")
        return {}
    return table


def _read_env(env: Mapping[str, str]) -> dict[str, str]:
    return {
        name[len("BOTBIN_") :].lower(): value
        for name, value in env.items()
        if name.startswith("BOTBIN_") and name[len("BOTBIN_") :].lower() in _FIELDS
    }


def load_settings(
    workspace: Path,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    overrides_source: str = "command line",
) -> LoadedSettings:
    """Read settings for ``workspace``: defaults < botbin.toml < BOTBIN_* < ``overrides``.

    ``overrides`` holds values from flags or LSP initializationOptions; None values are skipped.
    Never raises for a bad value: it is replaced by its default and reported in ``warnings``.
    """
    warnings: list[str] = []
    values: dict[str, Any] = {name: getattr(_DEFAULTS, name) for name in _FIELDS}
    sources: dict[str, str] = {}
    toml_path = workspace / CONFIG_FILE
    _apply(values, _read_toml(toml_path, warnings), str(toml_path), warnings, sources)
    for key, value in _read_env(os.environ if env is None else env).items():
        _apply(values, {key: value}, f"environment variable BOTBIN_{key.upper()}", warnings, sources)
    _apply(values, {k: v for k, v in (overrides or {}).items() if v is not None}, overrides_source, warnings, sources)
    # Twice: overlap_tokens is checked against target_tokens, which the first pass may have reset.
    for _ in range(2):
        for key, reason in check_ranges(values).items():
            fallback = getattr(_DEFAULTS, key)
            if key == "overlap_tokens":  # the default overlap breaks the rule when target_tokens is small
                fallback = min(fallback, values["target_tokens"] // 4)
            used = "the default" if fallback == getattr(_DEFAULTS, key) else str(fallback)
            warnings.append(
                f"{sources.get(key, 'defaults')}: setting '{key}' = {values[key]!r} ignored ({reason}); using {used}"
            )
            values[key] = fallback
    return LoadedSettings(Settings(**values), tuple(warnings))
