"""Sync a workspace's notes (sync/engine.py), all of them or the ones named, and keep its loaded index in
step, note by note."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botbin.errors import storage_error
from botbin.sync.engine import ProgressFn, SyncContext, SyncReport, sync_workspace
from botbin.workspace.models import built_with

if TYPE_CHECKING:
    from botbin.workspace import Workspace


def sync(
    ws: Workspace,
    progress: ProgressFn | None = None,
    full: bool = False,
    keep_documents: bool = False,
    encryption: str | None = None,
    prune: bool = False,
    only: frozenset[str] | None = None,
) -> SyncReport:
    """Sync ``ws`` (see sync_workspace for errors). A loaded index is patched as each output is written, so
    searches during a long sync already see what is done: load it (``ws.index.get()``) first for that.

    ``keep_documents``: also return the written documents in the report. Notes whose output failed to decode
    are rewritten. ``encryption``: "encrypt" or "decrypt" converts the whole store in place. ``prune``: see
    sync_workspace (notes no longer tracked leave the index even when most of it goes). ``only``: sync just
    these notes (relative paths), no folder scan (see sync_workspace). A second sync of
    this process waits for the first (``ws.sync_lock``), rather than failing on the workspace's file lock.
    A file the sync cannot write (disk full, read-only, permission) raises StorageError naming it: the state
    file and every output stay as they were or as this sync wrote them whole, and the next sync goes on.
    """
    try:
        return _sync(ws, progress, full, keep_documents, encryption, prune, only)
    except BrokenPipeError:  # a progress reader went away: not the disk
        raise
    except OSError as exc:  # the state file, its journal, the marker: a disk problem is no traceback and no damage
        raise storage_error(exc) from exc


def _sync(
    ws: Workspace,
    progress: ProgressFn | None,
    full: bool,
    keep_documents: bool,
    encryption: str | None,
    prune: bool,
    only: frozenset[str] | None,
) -> SyncReport:
    ctx = SyncContext(
        ws.root, ws.settings, ws.models.meta, lambda: ws.models.counter, lambda: ws.models.embedder, ws.passphrase
    )

    def locked() -> None:
        """Once the lock is ours: finish a model switch a kill interrupted, and notice another process's sync
        (it may have synced, or switched the model, while we waited); the notes are synced with the model the
        index is built with (the setting's only once a migration has switched to it)."""
        ws.migration.recover()
        ws.index.reload_if_synced_elsewhere()
        ws.models.follow(built_with(ws.output_dir, ws.settings))
        ctx.model = ws.models.meta

    try:
        with ws.sync_lock, ws.index.syncing():
            report = sync_workspace(
                ctx,
                progress,
                full,
                keep_documents=keep_documents,
                written=ws.index.patch,
                force_paths=ws.index.damaged,
                encryption=encryption,
                locked=locked,
                prune=prune,
                only=only,
            )
            ws.index.synced(report)
    finally:
        ws.migration.after_sync()  # a server moves the index to the setting's model in the background
    return report
