"""Payloads of ``botbin/status``, the ``botbin.sync`` / ``botbin.reindex`` commands (LSP) and the MCP tool
``memory_status``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from botbin.wire.errors import ErrorKind
from botbin.wire.model import ChunkKind, EncryptionState, WireModel


class StaleNote(WireModel):
    """A tracked note whose file changed since its last sync."""

    path: str
    """The note's path relative to its workspace folder."""
    reason: str
    """``changed``, ``new`` or ``deleted``."""


class RuleRef(WireModel):
    """One side of a conflict between two rules."""

    path: str
    """The rule's note."""
    line: int
    """0-based line of the rule's cue."""
    kind: ChunkKind
    """The rule's kind."""
    modality: str
    """``obligation``, ``prohibition``, ``recommendation``, ..."""
    cue: str
    """The words that make it a rule (``Never``)."""
    text: str
    """The rule's phrase."""


class Conflict(WireModel):
    """Two rules on the same action with opposite polarity."""

    action: str
    """The shared action, normalized (``use tabs``)."""
    message: str
    """One line naming both rules and their 1-based lines."""
    first: RuleRef
    """The rule that says do (or the earlier one)."""
    second: RuleRef
    """The rule that says do not."""


#: ``embedding``: the new model's index is being built while the current one answers; ``switching``: the live index
#: is being replaced; ``paused``: no process is at it (the next sync or server start resumes it); ``failed``: the last
#: run stopped (``message``); ``refused``: the ``model`` setting names no usable model (the current index answers).
MigrationPhase = Literal["embedding", "switching", "paused", "failed", "refused"]


class MigrationStatus(WireModel):
    """A model migration that is due: the ``model`` setting names another model than the index was built with."""

    phase: MigrationPhase
    """Where it stands."""
    to_model: str
    """The model the index moves to (for ``refused``: the setting as written)."""
    from_model: str
    """The model the index was built with; it answers searches until the switch."""
    notes_done: int
    """Notes the new model's index holds so far."""
    notes_total: int
    """Notes of the current index."""
    chunks_embedded: int
    """Chunks embedded by the run under way (or the last one)."""
    chunks_to_embed: int
    """Chunks that run counted to embed."""
    message: str
    """Why it failed, is refused or waits; empty otherwise."""
    started_at: str | None
    """When it first started (ISO 8601 UTC), null before."""
    updated_at: str | None
    """When its progress was last recorded (ISO 8601 UTC), null before."""


class WorkspaceStatus(WireModel):
    """What ``botbin status`` reports of one workspace (the MCP tool ``memory_status``)."""

    workspace: str
    """The workspace folder's filesystem path."""
    output_dir: str | None
    """Where the AIF-BIN files are; null when the folder could not report."""
    state_file: str | None
    """The sync state file; null when the folder could not report."""
    model: str | None
    """The embedding model's name (``unavailable`` when it cannot load); null when the folder could not report."""
    files: int
    """Notes in the index."""
    chunks: int
    """Chunks in the index."""
    last_sync: str | None
    """When the last sync finished (ISO 8601 UTC), null before the first."""
    tracked: int
    """Tracked notes on disk now."""
    stale: list[StaleNote]
    """Notes changed on disk since their last sync."""
    warnings: list[str]
    """Problems met (an unreadable state file, why the folder could not report, ...)."""
    conflicts: list[Conflict]
    """Pairs of indexed rules that contradict each other."""
    encryption: EncryptionState
    """Whether the store is encrypted at rest."""
    migration: MigrationStatus | None = None
    """The model migration due or under way, null when none."""


class FolderStatus(WorkspaceStatus):
    """``botbin/status`` of one workspace folder."""

    uri: str
    """The folder's URI."""
    last_error: str | None
    """Why the folder's last sync or read failed, null after a good one."""
    last_error_kind: ErrorKind | None
    """The kind of ``lastError`` (``locked`` and ``wrong_passphrase`` ask for the passphrase), null without one."""
    model_error: str | None
    """Why the embedding model is unavailable, null when it works."""


class StatusResult(WireModel):
    """``botbin/status`` result: totals over the folders, and each folder's own report."""

    files: int
    """Notes in the index, over all folders."""
    chunks: int
    """Chunks in the index, over all folders."""
    pending: int
    """Notes changed on disk but not yet synced, plus queued syncs."""
    last_sync: str | None
    """The latest sync of any folder (ISO 8601 UTC), null before the first."""
    model: str | None
    """The first folder's model, null without folders (or when it could not report)."""
    degraded: bool
    """True when some folder's model is unavailable (keyword-only search)."""
    indexing: bool
    """True while a sync runs."""
    folders: list[FolderStatus]
    """Each folder's report."""


class FailedNote(WireModel):
    """A note a sync could not index (the rest went on)."""

    path: str
    """The note's path."""
    reason: str
    """Why."""


class Renamed(WireModel):
    """A note moved: its embeddings were reused."""

    from_: str = Field(alias="from")
    """The old path."""
    to: str
    """The new path."""


class SyncReport(WireModel):
    """What one sync did (``botbin sync --json`` prints the same keys)."""

    added: list[str] = Field(default_factory=list)
    """Notes indexed for the first time."""
    modified: list[str] = Field(default_factory=list)
    """Notes re-indexed because they changed."""
    deleted: list[str] = Field(default_factory=list)
    """Notes removed from the index because their file is gone."""
    excluded: list[str] = Field(default_factory=list)
    """Notes removed because they are no longer tracked."""
    kept_excluded: list[str] = Field(default_factory=list)
    """Notes no longer tracked but kept (most of the index would go: ``--prune`` removes them)."""
    rechunked: list[str] = Field(default_factory=list)
    """Notes re-chunked by a reindex."""
    renamed: list[Renamed] = Field(default_factory=list)
    """Notes moved."""
    unchanged: int = 0
    """Notes left as they were."""
    failed: list[FailedNote] = Field(default_factory=list)
    """Notes that could not be indexed."""
    warnings: list[str] = Field(default_factory=list)
    """Problems met."""
    chunks_embedded: int = 0
    """Chunks sent to the model."""
    chunks_reused: int = 0
    """Chunks whose embedding came from the cache."""
    elapsed_ms: float = 0.0
    """How long the sync took, in milliseconds."""


class FolderSyncSummary(SyncReport):
    """What one folder's sync did, as the ``botbin.sync`` and ``botbin.reindex`` commands answer (empty lists
    for a folder that has not synced yet)."""

    uri: str
    """The folder's URI."""
    error: str | None
    """Why the folder's last sync failed, null after a good one."""
    error_kind: ErrorKind | None
    """The kind of ``error``, null without one."""


class SyncResult(WireModel):
    """``botbin.sync`` / ``botbin.reindex`` result."""

    done: bool
    """False when the sync was still running after the server's wait (it goes on)."""
    folders: list[FolderSyncSummary]
    """Each folder's summary."""
