"""Payloads of Recall Studio (``botbin studio``, botbin/studio/): its JSON API, one model per view and action.
Requests reuse the LSP's params where they say the same (``SearchRequest``, ``ContextParams``); results reuse the
shared shapes (``HitFields``, ``ContextResult``, ``WorkspaceStatus``, ``SyncReport``, ``Conflict``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from botbin.wire.model import ChunkKind, WireModel
from botbin.wire.search import HitFields
from botbin.wire.status import Conflict, FailedNote, SyncReport, WorkspaceStatus

#: Which editor a note's link opens: VS Code (``vscode://file/...``), Obsidian (``obsidian://open?path=...``) or none.
EditorKind = Literal["vscode", "obsidian", "none"]


class StudioFolder(WireModel):
    """A workspace folder the studio shows."""

    id: int
    """Its number in the API's paths (``/api/folders/{id}/...``)."""
    name: str
    """The folder's name."""
    path: str
    """The folder's filesystem path."""


class StudioInfo(WireModel):
    """``GET /api/info``: what the studio serves."""

    version: str
    """botbin's version."""
    folders: list[StudioFolder]
    """The workspace folders, in order."""
    read_only: bool
    """True when the action buttons (sync, prune, restore, consolidate) are off (``botbin studio --read-only``)."""
    editor: EditorKind
    """Which editor the notes' links open."""


class ScorePart(WireModel):
    """One term of a hit's score (search/explain.py); the parts of a hit add up to its score."""

    name: str
    """``cosine``, ``keywords``, ``note``, ``neighbours``, ``bound`` (what the bounds on the note and neighbour
    terms gave back), ``decay`` or ``agent``."""
    value: float
    """The term's own value: a cosine in [-1, 1], the keyword weight or the decay factor in [0, 1]; for ``bound``
    and ``agent``, the points."""
    points: float
    """What it adds to the score (negative: what it takes away)."""


class StudioHit(HitFields):
    """A hit of the studio's search, taken apart."""

    note_cosine: float
    """Cosine of the query and the chunk's note (its mean chunk vector)."""
    neighbour_cosine: float
    """Mean cosine of the query and the chunks around it in its note."""
    parts: list[ScorePart]
    """How the score was made, in the order the stages apply."""
    editor_url: str | None
    """A ``vscode://`` or ``obsidian://`` link to the chunk's first line; null when no editor is configured."""


class StudioSearchResult(WireModel):
    """``POST /api/folders/{id}/search`` (params: ``SearchRequest``) result. Nothing is counted as retrieved."""

    hits: list[StudioHit]
    """Best first, those under the relevance floor left out."""
    hidden: int
    """Hits left out under the relevance floor (hardly any similarity and no real keyword match)."""
    degraded: bool
    """True when the model is unavailable and hits are ranked by keywords alone."""
    stale: bool
    """True when hits of notes deleted or excluded since the last sync were left out."""
    indexing: bool
    """True while a sync runs: the hits cover what is indexed so far."""
    indexed_at: str | None
    """When the index was last written (ISO 8601 UTC), null before the first sync."""
    warnings: list[str]
    """Problems met."""
    elapsed_ms: float
    """How long the search took in the server, in milliseconds."""


class StudioRuleCue(WireModel):
    """The words that make a block a rule."""

    modality: str
    """``obligation``, ``prohibition``, ``recommendation``, ..."""
    cue: str
    """The cue words as written (``Never``, ``must not``)."""
    line: int
    """0-based line of the cue."""
    positive: bool
    """False when the rule says not to do the action."""
    action: str
    """The action the rule is about, normalized (``use tabs``)."""


class StudioRule(WireModel):
    """One rule (a hard or soft directive) of the notes."""

    path: str
    """Its note's path."""
    start_line: int
    """0-based first line of its block."""
    end_line: int
    """0-based line after its block (exclusive)."""
    kind: ChunkKind
    """``hard`` or ``soft``."""
    heading_path: list[str]
    """Headings above it, outermost first."""
    text: str
    """The block's source text."""
    cues: list[StudioRuleCue]
    """Its cues (a hard rule stated without one has none)."""
    editor_url: str | None
    """A link to its first line in the editor; null without one."""


class StudioConflict(Conflict):
    """Two rules that contradict each other, with links to both."""

    first_url: str | None
    """A link to the first rule's cue line; null without an editor."""
    second_url: str | None
    """A link to the second rule's cue line; null without an editor."""


class StudioRules(WireModel):
    """``GET /api/folders/{id}/rules``: every indexed rule and their conflicts."""

    rules: list[StudioRule]
    """Hard rules first, each kind in note and line order."""
    conflicts: list[StudioConflict]
    """Pairs of rules on one action with opposite polarity."""
    warnings: list[str]
    """Problems met loading the index."""


class CurvePoint(WireModel):
    """A point of a retention curve."""

    day: float
    """Days from now (negative: in the past)."""
    score: float
    """The memo's decay score then, in (0, 1]."""


class StudioMemo(WireModel):
    """A live memo (an indexed chunk outside the instruction notes) and how it fades."""

    id: str
    """Its id (``botbin restore`` takes a unique prefix)."""
    path: str
    """Its note's path."""
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after it (exclusive)."""
    kind: ChunkKind
    """Its chunk's kind (only ``lore`` is ever archived)."""
    text: str
    """Its chunk's text."""
    created: str
    """When it was first stored (ISO 8601)."""
    last_retrieved: str | None
    """When it was last retrieved (a search, a hover, a context), null if never."""
    reinforcement_count: int
    """Times it was retrieved; each stretches its half-life."""
    decay_score: float
    """Its retention now, in (0, 1]."""
    half_life_days: float
    """Its half-life now, in days."""
    fades_in_days: float | None
    """Days until it falls under the prune threshold (0: the next prune archives it, if lore); null: never."""
    curve: list[CurvePoint]
    """Its retention from its last retrieval (or creation) to past ``fadesInDays``."""
    editor_url: str | None
    """A link to its first line; null without an editor."""


class StudioArchived(WireModel):
    """An archived memo (hidden from search; its note is unchanged)."""

    id: str
    """Its id (restore takes it)."""
    path: str
    """Its note's path."""
    start_line: int
    """0-based first line (as of its archiving)."""
    end_line: int
    """0-based line after it (exclusive)."""
    archived_at: str | None
    """When it was archived (ISO 8601); null for one about to be (a prune's dry run)."""
    reinforcement_count: int
    """Times it was retrieved."""
    decay_score: float
    """Its retention when archived."""
    text: str | None
    """Its text when archived; null in an encrypted store (sealed) or when not kept."""


class StudioRootSource(WireModel):
    """A branch a root came from."""

    path: str
    """The source note's path."""
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after it (exclusive)."""
    editor_url: str | None
    """A link to it; null without an editor."""


class StudioRoot(WireModel):
    """A root of the roots note and the branches it came from."""

    text: str
    """The root's text."""
    reason: str
    """Why it is a root (``recurs in 2 notes``, ``retrieved 3 times``, ``stated``)."""
    line: int
    """0-based line in the roots note; -1 for a root not written yet (a dry run)."""
    sources: list[StudioRootSource]
    """Its sources."""


class StudioLifecycle(WireModel):
    """``GET /api/folders/{id}/lifecycle``: the memos now; nothing is written."""

    live: int
    """Memos searchable now."""
    threshold: float
    """The prune threshold: lore under it is archived by a prune."""
    half_life_days: float
    """Half-life of a memo never retrieved, in days."""
    stretch: float
    """Half-life gained per retrieval, as a multiple of ``halfLifeDays``."""
    faded: list[StudioMemo]
    """The most faded memos, least retained first."""
    prunable: list[StudioMemo]
    """What the next prune would archive (the first ones)."""
    prunable_count: int
    """How many the next prune would archive in all."""
    archived: list[StudioArchived]
    """Archived memos, newest first."""
    roots_note: str
    """The roots note's path."""
    roots_url: str | None
    """A link to the roots note; null without an editor."""
    roots: list[StudioRoot]
    """The roots in it."""
    warnings: list[str]
    """Problems met."""


class TeamState(WireModel):
    """The team database (backend ``postgres``)."""

    url: str
    """The database, without its password."""
    namespace: str
    """This workspace's namespace."""
    publishes: bool
    """False for a reader (``postgres_publish = false``)."""
    unpublished: int | None
    """Synced notes the database does not hold yet; null when it was not reached."""
    error: str | None
    """Why it could not be reached; null when it was."""


class StudioHealth(WireModel):
    """``GET /api/folders/{id}/health``."""

    status: WorkspaceStatus
    """What ``botbin status`` says."""
    failed: list[FailedNote]
    """Notes the last sync of this process could not index, and why."""
    last_run: SyncReport | None
    """The last sync this process ran (the studio's button, the language server's), null before one."""
    load_warnings: list[str]
    """Problems met loading the index (an output that could not be read is rebuilt by the next sync)."""
    indexing: bool
    """True while a sync runs (or before the first)."""
    team: TeamState | None
    """The team database; null for the embedded index."""


class RestoreParams(WireModel):
    """``POST /api/folders/{id}/restore`` params: what to bring back into search."""

    ids: list[str] = Field(default_factory=list)
    """Memo ids (a unique prefix is enough)."""
    all: bool = False
    """Every archived memo."""


class ConsolidateParams(WireModel):
    """``POST /api/folders/{id}/consolidate`` params."""

    dry_run: bool = True
    """Only say which roots would be written."""


class PruneResult(WireModel):
    """``POST /api/folders/{id}/prune`` result."""

    archived: list[StudioArchived]
    """Memos archived now."""
    live: int
    """Memos left searchable."""
    threshold: float
    """The prune threshold."""
    archive_note: str
    """The archive note listing every archived memo."""


class RestoreResult(WireModel):
    """``POST /api/folders/{id}/restore`` result."""

    restored: list[StudioArchived]
    """Memos back in search."""
    unknown: list[str]
    """Ids that matched no single archived memo."""


class ConsolidateResult(WireModel):
    """``POST /api/folders/{id}/consolidate`` result."""

    roots: list[StudioRoot]
    """New roots written (or, in a dry run, that would be)."""
    skipped: int
    """Roots already in the roots note."""
    dry_run: bool
    """True when nothing was written."""
    roots_note: str
    """The roots note's path."""


class StudioSyncResult(WireModel):
    """``POST /api/folders/{id}/sync`` result."""

    report: SyncReport
    """What the sync did."""
    publish_error: str | None
    """Why publishing to the team database failed; null when it did not (or there is none)."""


class StudioOpened(WireModel):
    """The ``botbin.studio`` command's result (LSP): where the studio over the open folders listens."""

    url: str
    """The page's URL on 127.0.0.1, with the session's token: open it in a browser, show it to no one."""


#: The studio's params, for the contract (wire/schema.py).
STUDIO_PARAMS: tuple[type[WireModel], ...] = (RestoreParams, ConsolidateParams)
#: The studio's results.
STUDIO_RESULTS: tuple[type[WireModel], ...] = (
    StudioInfo,
    StudioSearchResult,
    StudioRules,
    StudioLifecycle,
    StudioHealth,
    PruneResult,
    RestoreResult,
    ConsolidateResult,
    StudioSyncResult,
    StudioOpened,
)
