"""The one post-sync pipeline of a workspace (``Syncer``): the engine writes the notes (sync/engine.py), the loaded
index is patched as each note is written, then (backend "postgres") the changed notes are published to the team
database. Every sync of the process goes through it, whichever door it came in by (a command, a save in an editor,
``botbin watch``, an agent's remembered fact, distilled turns, consolidated roots), and the report says what each
step did. A model switch a kill left half done is finished first, and in a long-lived process a due model migration
starts after the sync (workspace/migration.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from botbin.config import Settings
from botbin.errors import storage_error
from botbin.sync.encryption import PassphraseFn
from botbin.sync.engine import ProgressFn, SyncContext, SyncReport, sync_workspace
from botbin.wire.requests import SyncRequest
from botbin.workspace.handle import IndexHandle
from botbin.workspace.models import Models, built_with
from botbin.workspace.remote import TeamDatabase


class ModelMigration(Protocol):
    """What a sync asks of the workspace's model migration (workspace/migration.py ``Migration``)."""

    def recover(self) -> None:
        """Finish a switch a kill left half done (the caller holds the workspace lock)."""

    def after_sync(self) -> None:
        """A sync ended: in a long-lived process, start a due migration in the background."""


class Syncer:
    """Syncs one workspace folder in this process; a second sync waits for the first (``lock``), rather than
    failing on the workspace's file lock (which keeps other processes out)."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        models: Models,
        passphrase: PassphraseFn,
        index: IndexHandle,
        team: TeamDatabase,
        migration: Callable[[], ModelMigration],
    ) -> None:
        """``migration``: the workspace's model migration (workspace/migration.py), made on first use."""
        self._root, self._settings, self._models, self._passphrase = root, settings, models, passphrase
        self._index, self._team, self._migration = index, team, migration
        self.lock = threading.Lock()
        """Serializes this process's syncs of the workspace."""

    def run(
        self, request: SyncRequest | None = None, progress: ProgressFn | None = None, keep_documents: bool = False
    ) -> SyncReport:
        """Sync the notes (``request``: which, and how; default: every changed note), patching the loaded index as
        each output is written, so searches during a long sync already see what is done (load it first, with
        ``IndexHandle.get``, for that); then publish. ``keep_documents``: also return the written documents.

        Notes whose output failed to decode are rewritten. A file the sync cannot write (disk full, read-only,
        permission) raises StorageError naming it: the state file and every output stay as they were or as this
        sync wrote them whole, and the next sync goes on. A failed publish is in the report (``publish_error``),
        never raised: the local sync stands. Raises as sync_workspace does (LockedError, PassphraseError, ...).
        """
        try:
            report = self._sync(request or SyncRequest(), progress, keep_documents)
        except BrokenPipeError:  # a progress reader went away: not the disk
            raise
        except OSError as exc:  # the state file, its journal, the marker: a disk problem is no traceback and no damage
            raise storage_error(exc) from exc
        return self.publish(report)

    def publish(self, report: SyncReport | None = None) -> SyncReport:
        """``report`` (default: an empty one, for ``botbin db publish``) with what publishing the synced notes
        did (backend "postgres"; nothing for the embedded backend or a reader)."""
        published, error = self._team.publish_outcome()
        return replace(report or SyncReport(), published=published, publish_error=error)

    def _sync(self, request: SyncRequest, progress: ProgressFn | None, keep_documents: bool) -> SyncReport:
        models = self._models  # its facts are read now, not when the workspace opens (a missing model: ModelError)
        ctx = SyncContext(
            self._root, self._settings, models.meta, lambda: models.counter, lambda: models.embedder, self._passphrase
        )
        migration = self._migration()

        def locked() -> None:
            """Once the lock is ours: finish a model switch a kill interrupted, and notice another process's sync
            (it may have synced, or switched the model, while we waited); the notes are synced with the model the
            index is built with (the setting's only once a migration has switched to it)."""
            migration.recover()
            self._index.reload_if_synced_elsewhere()
            models.follow(built_with(self._root / self._settings.output_dir, self._settings))
            ctx.model = models.meta

        try:
            with self.lock, self._index.syncing():
                report = sync_workspace(
                    ctx,
                    progress,
                    request.full,
                    keep_documents=keep_documents,
                    written=self._index.patch,
                    force_paths=self._index.damaged,
                    encryption=request.encryption,
                    locked=locked,
                    prune=request.prune,
                    only=request.only,
                )
                self._index.synced(report)
        finally:
            migration.after_sync()  # a server moves the index to the setting's model in the background
        return report
