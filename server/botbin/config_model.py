"""The settings model: every botbin setting once, with its type, default, range (``Field(ge=, gt=, le=)``) and the
one line a user reads (``description``: the README table, VS Code's settings, CLI help and the LSP
``ServerSettings`` are generated from it by scripts/gen_protocol.py). Sections are mixin classes of the one flat
``Settings`` of config.py (``settings.alpha``, never ``settings.search.alpha``); the research knobs are in
config_experimental.py; config_rules.py holds the rules between keys.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from botbin.config_rules import DEFAULT_ROOTS_NOTE, field_bounds, number_text

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
MAX_K: Final = 1000
"""The most hits one search returns (``top_k`` and every surface's ``k``; wire/requests.py checks ``k``)."""
EMBED_BATCH_SIZE: Final = 8
"""Texts per model call by default: the ``batch_size`` setting's default and the embedders' (a sync embeds shortest
first, and each batch pads to its longest text). On 2 CPU cores the help vault's 1,735 chunks took 19-21 s in
batches of 4-8, 26.5 s in batches of 32 and 33 s in batches of 64 through ONNX Runtime; torch 5.6 s against 7.3 s
at 32 on 600 of them (bench/README.md)."""

#: Largest Argon2id parameters: the kdf_* settings' bounds, and what crypto/cipher.py lets a file ask for (so a damaged
#: or hostile file cannot make a reader allocate gigabytes or spin for minutes before authentication fails); one
#: value for both, so that a store made with any valid setting can be read.
KDF_MAX_MEMORY_KIB: Final = 1 << 20
KDF_MAX_TIME_COST: Final = 16
KDF_MAX_PARALLELISM: Final = 16

#: ``json_schema_extra`` of a setting the editors (VS Code, Obsidian) offer: it joins ``ServerSettings``.
EDITOR: Final[dict[str, Any]] = {"editor": True}


def shown(default: str, editor: bool = False) -> dict[str, Any]:
    """``json_schema_extra`` of a setting whose default reads better in words (``None`` is "the bundled model")."""
    return {"shown": default, **({"editor": True} if editor else {})}


def toml_value(value: object) -> str:
    """``value`` as botbin.toml writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(json.dumps(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def shown_default(field: FieldInfo, code: str = "`") -> str:
    """A setting's default as people read it: botbin.toml's spelling (inside ``code`` marks), or the words of
    ``shown``; "none" for None."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    if "shown" in extra:
        return str(extra["shown"])
    return "none" if field.default is None else f"{code}{toml_value(field.default)}{code}"


def range_text(field: FieldInfo) -> str:
    """A number setting's bounds for people: ``0 – 1``, ``> 0``, ``≥ 0``; "" without bounds."""
    low, strict, high = field_bounds(field)
    if low is not None and high is not None:
        first = low + 1 if strict and field.annotation is int else low
        return f"{number_text(first)} – {number_text(high)}"
    if low is not None:
        return f"{'>' if strict else '≥'} {number_text(low)}"
    return f"≤ {number_text(high)}" if high is not None else ""


class Section(BaseModel):
    """The base of every section: immutable, no unknown key. Each field has its user-facing ``description`` and a
    docstring for developers (what chose the value, units); the schema is built only when a test or a tool
    validates (loading checks every value itself, then uses ``model_construct``: a cold CLI start stays quick)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"settings are immutable: cannot set {name!r}")


class TrackingSettings(Section):
    """Which notes are tracked, and where botbin writes."""

    include: tuple[str, ...] = Field(
        default=DEFAULT_INCLUDE, description="globs of tracked notes (`**` spans folders)", json_schema_extra=EDITOR
    )
    """Globs (relative POSIX paths, ``**`` spans folders) of tracked notes."""
    exclude: tuple[str, ...] = Field(
        default=(),
        description="globs never tracked; each is also read as a `.gitignore` line (`Archive` or `Archive/`: that "
        "folder at any depth)",
        json_schema_extra=EDITOR,
    )
    """Globs of notes never tracked; the output folder and ALWAYS_EXCLUDED_DIRS are always excluded. Each is
    also read as a .gitignore line: ``Archive`` or ``Archive/`` excludes every folder of that name (and
    ``*.tmp.md`` such notes at any depth); a pattern with a slash inside is relative to the workspace."""
    instruction_notes: tuple[str, ...] = Field(
        default=DEFAULT_INSTRUCTION_NOTES,
        description="globs of instruction notes (their list items are hard rules); any note with frontmatter "
        "`botbin: instructions` is one too",
    )
    """Globs (relative POSIX paths, ``**`` spans folders, any case) of instruction notes, written for the agent:
    their list items and frontmatter are hard rules and their imperatives count. A note with frontmatter
    ``botbin: instructions`` is one too. Every other note (MEMORY.md included) gives rules only from explicit
    obligations and prohibitions ("never", "must", "do not")."""
    vault: bool = Field(default=False, description="vault mode: track every `**/*.md` note", json_schema_extra=EDITOR)
    """Vault mode: track every ``**/*.md`` note (replaces ``include``)."""
    output_dir: str = Field(
        default="memory/aifbin", description="where `.aif-bin` files and `sync-state.json` go (inside the workspace)"
    )
    """Folder, relative to the workspace, that receives the ``.aif-bin`` files and the state file."""
    max_note_bytes: int = Field(default=5_000_000, gt=0, description="larger notes are skipped with a message")
    """Notes larger than this (bytes) are skipped with a message; raise it to index them."""
    follow_symlinks: bool = Field(
        default=False, description="follow symbolic links whose target lies outside the workspace (see below)"
    )
    """Follow symbolic links (notes and folders) whose real target lies outside the workspace; when False
    they are skipped with a warning, and ``remember`` does not write through them. Links that stay inside
    the workspace are always followed; a folder is walked at most once through links, so a link loop never
    hangs the scan."""


class SearchSettings(Section):
    """How a search ranks and how many hits it returns."""

    alpha: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="hybrid weight of meaning against keywords: `alpha·cosine + (1−alpha)·bm25_norm` "
        "(`bm25_norm`: the keyword weight)",
        json_schema_extra=EDITOR,
    )
    """Weight of cosine similarity in the hybrid score (Bot-BIN paper §6.3; on SciFact train,
    bench/bench_scifact.py, nDCG@10 is flat from 0.68 to 0.76, so the paper's value stays; see bench/README.md)."""
    top_k: int = Field(
        default=10,
        gt=0,
        le=MAX_K,
        description="hits per search (Search Memories and workspace symbols)",
        json_schema_extra=EDITOR,
    )
    """Hits returned by a search unless the caller says otherwise."""
    max_hits_per_note: int = Field(
        default=2,
        ge=0,
        description="at most this many hits of one note per search, so one long note cannot fill the results "
        "(daily notes `memory/YYYY-MM-DD.md` are exempt: each entry is its own memory); `0` lifts the cap "
        "(`botbin search --per-note N` for one search, every note capped)",
    )
    """At most this many hits of one note in a search's results, so one long note cannot fill the top k;
    0 lifts the cap (index/ranking.py MAX_HITS_PER_NOTE). Daily notes are exempt: each entry is its own memory
    (index/daily.py)."""
    rerank_model: str | None = Field(
        default=None,
        description="a sentence-transformers CrossEncoder folder that re-orders the best `rerank_top_n` hits of "
        "each search (none ships with botbin; see below)",
        json_schema_extra=shown("none (no re-ranking)"),
    )
    """A sentence-transformers CrossEncoder folder (relative to the workspace, or absolute) that re-scores the best
    ``rerank_top_n`` hits of each search (search/rerank.py); None, the default, keeps the fused order."""
    rerank_top_n: int = Field(default=20, gt=0, le=MAX_K, description="hits the cross-encoder re-scores per search")
    """Hits the cross-encoder re-scores per search (the fused best ones)."""
    rerank_budget_ms: int = Field(
        default=300, gt=0, description="milliseconds re-ranking may take per search; past them the fused order stands"
    )
    """Milliseconds re-scoring may take per search; past them it gives up with a warning and the fused order
    stands (the model itself loads once per process, outside this budget)."""


class IndexingSettings(Section):
    """The model, the chunks it reads, and the files a sync writes."""

    model: str | None = Field(
        default=None,
        description="any sentence-transformers folder (or one with its ONNX export in `onnx/model.onnx`); a "
        "change migrates the index in the background while the current one answers",
        json_schema_extra=shown("bundled all-MiniLM-L6-v2"),
    )
    """A sentence-transformers folder (relative to the workspace, or absolute; or one that ships its ONNX export as
    ``onnx/model.onnx``); None means the bundled all-MiniLM-L6-v2. A change migrates the index in the background
    while the current one answers (workspace/migration.py); a folder that is no model is reported and not used."""
    target_tokens: int = Field(default=256, gt=0, description="most model tokens in one chunk, heading prefix included")
    """Most model tokens in one chunk, heading prefix and [CLS]/[SEP] included (MiniLM reads 256)."""
    overlap_tokens: int = Field(
        default=32, ge=0, description="tokens repeated from the previous chunk when a long section is split"
    )
    """Tokens of context repeated from the previous chunk when a long section is split (under half of
    ``target_tokens``: config_rules.py)."""
    min_tokens: int = Field(
        default=50, ge=0, description="smaller pieces are merged with a neighbour of the same section"
    )
    """Pieces smaller than this are merged with a neighbour of the same section and dated entry when the result
    still fits; a short section or entry stays a chunk of its own (chunking.py)."""
    batch_size: int = Field(
        default=EMBED_BATCH_SIZE,
        gt=0,
        description="chunks per embedding batch (a sync embeds the shortest chunks first)",
    )
    """Chunks per embedding batch (the embedders' default too: ``EMBED_BATCH_SIZE``)."""
    compress: bool = Field(default=False, description="zlib-compress the chunk block")
    """zlib-compress the chunk block of written AIF-BIN files (flag bit 0)."""
    load_cache: bool = Field(
        default=True,
        description="keep `index-cache.npz` beside the state file (not for an encrypted store): a start reads it "
        "instead of decoding every AIF-BIN file; validated against each file's size, mtime and inode",
    )
    """Keep a load cache of the index (``index-cache.npz`` beside the state file; never for an encrypted store):
    a start reads it instead of decoding and tokenizing every AIF-BIN file (index/load_cache.py)."""
    lock_timeout_s: float = Field(default=10.0, ge=0.0, description="seconds to wait for another process's sync lock")
    """Seconds to wait for another process's sync lock before giving up."""
    debounce_ms: int = Field(default=400, ge=0, description="quiet time before `watch` syncs, in milliseconds")
    """Quiet time before ``botbin watch`` syncs a burst of file changes."""


class EncryptionSettings(Section):
    """The store encrypted at rest (AES-256-GCM, a key from a passphrase with Argon2id)."""

    encryption: bool = Field(default=False, description="encrypt the store (see below)")
    """Encrypt the chunk blocks (text, embeddings, note source) with AES-256-GCM; the passphrase comes from
    BOTBIN_PASSPHRASE, a terminal prompt or the editor's setting, and is never written to disk."""
    kdf_time_cost: int = Field(
        default=3,
        ge=1,
        le=KDF_MAX_TIME_COST,
        description="Argon2id passes when a store is first encrypted (RFC 9106 §4)",
    )
    """Argon2id passes when a store is first encrypted (RFC 9106 section 4, second recommended option)."""
    kdf_memory_kib: int = Field(
        default=65536,
        ge=8192,
        le=KDF_MAX_MEMORY_KIB,
        description="Argon2id memory in KiB when a store is first encrypted (64 MiB)",
    )
    """Argon2id memory in KiB when a store is first encrypted (64 MiB, RFC 9106)."""
    kdf_parallelism: int = Field(
        default=4, ge=1, le=KDF_MAX_PARALLELISM, description="Argon2id lanes when a store is first encrypted"
    )
    """Argon2id lanes when a store is first encrypted (RFC 9106)."""


class MemorySettings(Section):
    """The memo lifecycle (DESIGN section 8): decay, prune, consolidation into roots, conversations."""

    decay_half_life_days: float = Field(
        default=30.0, gt=0.0, description="days for an unretrieved memo's decay score to halve"
    )
    """Days for an unretrieved memo's decay score to halve (memory/retention.py: half-life regression,
    Settles & Meeder 2016, with the half-life stretched by each retrieval)."""
    prune_threshold: float = Field(
        default=0.05, ge=0.0, le=1.0, description="`botbin prune` archives memos whose decay score is under this"
    )
    """``botbin prune`` archives memos whose decay score is under this (0.05 is about 4.3 half-lives)."""
    roots_note: str = Field(
        default=DEFAULT_ROOTS_NOTE,
        description="where `consolidate` writes roots (inside its marked block); never an instruction note (one "
        "the `instruction_notes` globs name is refused)",
    )
    """The note ``botbin consolidate`` writes durable roots to (inside its own marked block)."""
    distill_endpoint: str | None = Field(
        default=None,
        description="optional OpenAI-compatible URL for abstractive roots (key: `BOTBIN_DISTILL_API_KEY`)",
        json_schema_extra=shown("none (extractive, offline)"),
    )
    """An OpenAI-compatible base URL (e.g. http://localhost:8080/v1) for abstractive distillation; None
    keeps it extractive and offline. The key, if any, comes from BOTBIN_DISTILL_API_KEY."""
    distill_model: str = Field(default="local", description="model name sent to `distill_endpoint`")
    """Model name sent to ``distill_endpoint``."""
    turn_buffer_size: int = Field(
        default=5,
        gt=0,
        description="conversation turns buffered before they are distilled into the soul file (FileRAG)",
    )
    """Turns buffered before they are distilled into the soul file (FileRAG)."""
    soul_dir: str = Field(
        default="memory/soul", description="folder of the per-user soul files, tracked by the default `memory/**/*.md`"
    )
    """Folder of the per-user soul files (``<user>.md``), inside the workspace."""


class TeamSettings(Section):
    """Team memory on PostgreSQL + pgvector (index/postgres/, docs/postgres.md)."""

    backend: str = Field(
        default="embedded",
        description='where search reads from: `"embedded"` (the AIF-BIN files, in memory) or `"postgres"` (the '
        "team database, docs/postgres.md; `sync` still writes the AIF-BIN files, then publishes)",
    )
    """Where search reads from: "embedded" (the AIF-BIN files, in memory) or "postgres" (the team database;
    ``botbin sync`` still writes the AIF-BIN files, then publishes the changed notes)."""
    postgres_url: str | None = Field(
        default=None,
        description="libpq URL of the team database (also `BOTBIN_POSTGRES_URL`); its password is never shown",
    )
    """libpq URL of the team database (also BOTBIN_POSTGRES_URL); its password is never shown."""
    namespace: str | None = Field(
        default=None,
        description="the namespace this workspace publishes into",
        json_schema_extra=shown("the workspace folder's name"),
    )
    """The namespace this workspace publishes into; None: the workspace folder's name."""
    search_namespaces: tuple[str, ...] = Field(
        default=(), description="namespaces a search spans (`search --namespace a,b`); empty: `namespace` alone"
    )
    """Namespaces a search spans (``search --namespace a,b``); empty: ``namespace`` alone."""
    postgres_ef_search: int = Field(
        default=100, gt=0, description="HNSW candidate list of the team database's searches (docs/postgres.md: by size)"
    )
    """HNSW ``ef_search`` of the team database's searches (bench/bench_postgres.py: recall@10 >= 0.99)."""
    postgres_timeout_s: int = Field(
        default=5, gt=0, description="seconds to connect to the team database; a statement may run six times as long"
    )
    """Seconds to connect to the team database; a statement may run six times as long."""
    postgres_publish: bool = Field(
        default=True, description="`false`: this workspace only reads the team database; `sync` publishes nothing"
    )
    """False: this workspace only reads the team database (a role granted read alone); ``sync`` publishes
    nothing."""


#: The sections in the order the README and the editors show them, each with its name (a heading) and class.
SECTIONS: tuple[tuple[str, type[Section]], ...] = (
    ("Tracking", TrackingSettings),
    ("Search", SearchSettings),
    ("Indexing and sync", IndexingSettings),
    ("Encryption", EncryptionSettings),
    ("Memory lifecycle and conversations", MemorySettings),
    ("Team memory", TeamSettings),
)
