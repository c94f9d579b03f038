"""The Workspace: everything the domain packages (memory, search, agent) receive about one folder of notes.

A frozen bundle built once by the composition root (``botbin.service``): the settings and the paths derived
from them, the store's keys, the index handle (index, lock, reload, damaged notes) and the model. Domain code
takes a Workspace, never the service, so nothing below the service reaches back up into it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botbin.config import Settings, load_settings
from botbin.embedding import Embedder
from botbin.errors import ModelError
from botbin.sync.encryption import PassphraseFn, StoreKeys, open_keys
from botbin.sync.scan import TrackedMatcher, outside_target
from botbin.sync.state import STATE_FILE, SyncState, load_state
from botbin.workspace.handle import IndexHandle
from botbin.workspace.models import Models, built_with

if TYPE_CHECKING:
    from botbin.index.postgres.index import PostgresIndex
    from botbin.sync.engine import ProgressFn, SyncReport
    from botbin.workspace.migration import Migration
    from botbin.workspace.remote import PublishReport


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
    sync_lock: threading.Lock = field(default_factory=threading.Lock, compare=False)
    """Serializes this process's syncs of the workspace: a second one waits for the first (the file lock
    only keeps other processes out)."""

    @property
    def output_dir(self) -> Path:
        return self.root / self.settings.output_dir

    @property
    def state_path(self) -> Path:
        return self.output_dir / STATE_FILE

    @cached_property
    def _matcher(self) -> TrackedMatcher:
        return TrackedMatcher(self.settings)

    @cached_property
    def remote(self) -> PostgresIndex | None:
        """The team database (backend = "postgres"), connected on first use; None for the embedded backend.
        Raises RemoteIndexError (the URL shown without its password)."""
        from botbin.workspace.remote import open_remote

        return open_remote(self)

    def publish(self) -> PublishReport | None:
        """Publish the notes changed since the last publish to the team database; None for the embedded
        backend (workspace/remote.py). Raises RemoteIndexError."""
        from botbin.workspace.remote import publish

        remote = self.remote
        return None if remote is None else publish(self, remote)

    def tracks(self, rel: str) -> bool:
        """True when note ``rel`` is one the scan would track: the globs match, and unless follow_symlinks is
        set, no link takes it outside the workspace."""
        return self._matcher(rel) and (self.settings.follow_symlinks or outside_target(self.root, rel) is None)

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

    def sync(
        self,
        progress: ProgressFn | None = None,
        full: bool = False,
        keep_documents: bool = False,
        encryption: str | None = None,
        prune: bool = False,
        only: frozenset[str] | None = None,
    ) -> SyncReport:
        """Sync the notes (``only`` these, when given) and patch the loaded index as each note is written
        (workspace/syncing.py)."""
        from botbin.workspace.syncing import sync

        return sync(self, progress, full, keep_documents, encryption, prune, only)


def open_workspace(
    root: Path,
    overrides: Mapping[str, Any] | None = None,
    embedder: Embedder | None = None,
    env: Mapping[str, str] | None = None,
    overrides_source: str = "command line",
    passphrase: PassphraseFn | None = None,
) -> Workspace:
    """The Workspace of folder ``root``: settings from defaults, botbin.toml, ``env`` (default: the process
    environment) and ``overrides`` (named ``overrides_source`` in warnings). ``embedder`` replaces the model
    (tests, benchmarks); ``passphrase`` defaults to BOTBIN_PASSPHRASE of ``env``."""
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

    handle = IndexHandle(
        root,
        output_dir / STATE_FILE,
        lambda: load_state(output_dir / STATE_FILE, settings.output_dir),
        model_facts,
        keyring,
        load_cache=settings.load_cache and not settings.encryption,  # a store to be encrypted: none, ever
    )
    return Workspace(root, settings, (*loaded.warnings, *_model_problem(models)), secret, models, handle)


def _model_problem(models: Models) -> tuple[str, ...]:
    """The warning for a ``model`` setting that names no model folder (one stat): the index keeps the model it
    was built with (a model migration waits for a setting it can use)."""
    try:
        _ = models.wanted
    except ModelError as exc:
        return (f"setting 'model' not used: {exc}; the index keeps the model it was built with",)
    return ()
