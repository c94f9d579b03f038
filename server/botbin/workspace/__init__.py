"""The Workspace: everything the domain packages (memory, search, agent) receive about one folder of notes.

A frozen bundle built once by the composition root (``botbin.service``): the settings and the paths derived
from them, the store's keys, the index handle (index, lock, reload, damaged notes), the model, the team database,
the one post-sync pipeline (``Syncer``: every sync, then the publish) and the model migration (``migration``).
Domain code takes a Workspace, never the service, so nothing below the service reaches back up into it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botbin.config import Settings, load_settings
from botbin.embedding import Embedder
from botbin.errors import ModelError
from botbin.sync.encryption import PassphraseFn, StoreKeys, open_keys
from botbin.sync.scan import TrackedMatcher, outside_target
from botbin.sync.state import STATE_FILE, SyncState, load_state
from botbin.wire.requests import SyncRequest
from botbin.workspace.handle import IndexHandle
from botbin.workspace.models import Models, built_with
from botbin.workspace.remote import TeamDatabase
from botbin.workspace.syncing import Syncer

if TYPE_CHECKING:
    from botbin.index.postgres.index import PostgresIndex
    from botbin.sync.engine import ProgressFn, SyncReport
    from botbin.workspace.migration import Migration, MigrationReport


@dataclass(frozen=True)
class Workspace:
    """One workspace folder: settings, paths, keys, index and model (see the module docstring)."""

    root: Path
    """The workspace folder, resolved."""
    settings: Settings
    warnings: tuple[str, ...]
    """Problems found in the settings (each replaced by its default)."""
    passphrase: PassphraseFn
    """Asked only for an encrypted store; never written anywhere."""
    models: Models
    index: IndexHandle
    team: TeamDatabase
    """The team database (backend = "postgres"; its ``index`` is None for the embedded backend)."""
    syncer: Syncer
    """Every sync of this workspace in this process (``sync``)."""

    @property
    def output_dir(self) -> Path:
        return self.root / self.settings.output_dir

    @property
    def state_path(self) -> Path:
        return self.output_dir / STATE_FILE

    @property
    def indexing(self) -> bool:
        """True while this process syncs the workspace, or before its first sync: the index may lack notes."""
        return self.index.busy or not self.state_path.is_file()

    @cached_property
    def _matcher(self) -> TrackedMatcher:
        return TrackedMatcher(self.settings)

    @property
    def remote(self) -> PostgresIndex | None:
        """The team database's index (backend = "postgres"), connected on first use; None for the embedded
        backend. Raises RemoteIndexError (the URL shown without its password)."""
        return self.team.index

    def tracks(self, rel: str) -> bool:
        """True when note ``rel`` is one the scan would track: the globs match, and unless follow_symlinks is
        set, no link takes it outside the workspace."""
        return self._matcher(rel) and (self.settings.follow_symlinks or outside_target(self.root, rel) is None)

    def watch(
        self, sync: Callable[[], SyncReport], report: Callable[[SyncReport], None], stop_after: int | None = None
    ) -> int:
        """``botbin watch``: ``sync`` now and after every burst of note changes, each outcome to ``report``, until
        interrupted or ``stop_after`` syncs (sync/watch.py)."""
        from botbin.sync.watch import watch_workspace  # watchfiles: only a process that watches pays for it

        return watch_workspace(self.root, self.settings, sync, report, stop_after)

    def note_changes(self) -> AsyncIterator[list[str]]:
        """The tracked notes changed on disk, one list a burst, until cancelled (sync/watch.py)."""
        from botbin.sync.watch import watch_notes

        return watch_notes(self.root, self.settings)

    def settings_match(self, overrides: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...] | None:
        """The settings warnings a process of this folder with ``overrides`` and environment ``env`` would print,
        or None when its settings differ from these (it would read another index: a warm server declines)."""
        loaded = load_settings(self.root, overrides, env)
        return tuple(loaded.warnings) if loaded.settings == self.settings else None

    def state(self) -> tuple[SyncState, list[str]]:
        """The sync state file and the problems found reading it."""
        return load_state(self.state_path, self.settings.output_dir)

    def keys(self) -> StoreKeys | None:
        """Keys of an encrypted store (None for a plaintext one); the passphrase is stretched once per process.
        Raises PassphraseError if it is missing or wrong."""
        return open_keys(self.output_dir, self.passphrase)

    @cached_property
    def migration(self) -> Migration:
        """The move of the index to the model the settings name, when it was built with another
        (workspace/migration.py)."""
        from botbin.workspace.migration import Migration

        return Migration(self)

    def migrate(self, progress: ProgressFn | None = None) -> MigrationReport | None:
        """``botbin sync``: move the index to the model the settings name now, then publish (workspace/migration.py);
        None when none is due. Raises ModelError (a setting that names no model: the index answers on), LockedError
        (another process migrates)."""
        return self.migration.run(progress)

    def migrate_in_background(self) -> None:
        """A long-lived process (a server once its index is warm, ``botbin watch``): a due model migration runs on a
        daemon thread, from now on and after each sync (workspace/migration.py)."""
        self.migration.serve()

    def sync(
        self, request: SyncRequest | None = None, progress: ProgressFn | None = None, keep_documents: bool = False
    ) -> SyncReport:
        """Sync the notes, patching the loaded index as each is written, then publish (workspace/syncing.py); the
        report says what each step did."""
        return self.syncer.run(request, progress, keep_documents)


def open_workspace(
    root: Path,
    overrides: Mapping[str, Any] | None = None,
    embedder: Embedder | None = None,
    env: Mapping[str, str] | None = None,
    overrides_source: str = "command line",
    passphrase: PassphraseFn | None = None,
    one_shot: bool = False,
) -> Workspace:
    """The Workspace of folder ``root``: settings from defaults, botbin.toml, ``env`` (default: the process
    environment) and ``overrides`` (named ``overrides_source`` in warnings). ``embedder`` replaces the model
    (tests, benchmarks); ``passphrase`` defaults to BOTBIN_PASSPHRASE of ``env``; ``one_shot``: a process that
    answers once and exits (IndexHandle.one_shot)."""
    root = Path(root).resolve()
    environ = os.environ if env is None else env
    secret: PassphraseFn = passphrase or (lambda: environ.get("BOTBIN_PASSPHRASE") or None)
    loaded = load_settings(root, overrides, env, overrides_source)
    settings = loaded.settings
    output_dir = root / settings.output_dir
    models = Models(settings.model, root, settings.batch_size, embedder, lambda: built_with(output_dir, settings))

    def model_facts(built: str) -> tuple[int, str]:
        models.follow(built)
        return models.meta.dim, models.meta.name

    def keyring() -> Any:
        keys = open_keys(output_dir, secret)
        return keys.keyring if keys else None

    def migration() -> Migration:  # the workspace's (``ws``, made below), on first use
        return ws.migration

    handle = IndexHandle(
        root,
        output_dir / STATE_FILE,
        lambda: load_state(output_dir / STATE_FILE, settings.output_dir),
        model_facts,
        keyring,
        load_cache=settings.load_cache and not settings.encryption,  # a store to be encrypted: none, ever
        one_shot=one_shot,
        warmed=lambda: migration().serve(),  # a server: a due model migration goes on once the index answers
    )
    team = TeamDatabase(root, settings, lambda: load_state(output_dir / STATE_FILE, settings.output_dir))
    syncer = Syncer(root, settings, models, secret, handle, team, migration)
    ws = Workspace(root, settings, (*loaded.warnings, *_model_problem(models)), secret, models, handle, team, syncer)
    return ws


def _model_problem(models: Models) -> tuple[str, ...]:
    """The warning for a ``model`` setting that names no model folder (one stat): the index keeps the model it
    was built with (a model migration waits for a setting it can use)."""
    try:
        _ = models.wanted
    except ModelError as exc:
        try:
            serving = models.spec.model_id
        except ModelError:  # the index's own model is gone too: "the embedding model is unavailable" says why, once
            return ()
        return (f"setting 'model' not used: {exc}; the index keeps the model it was built with ({serving})",)
    return ()
