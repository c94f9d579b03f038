"""Workspace folders of the language server: one MemoryService each, and one background sync worker.

Syncs run on a worker thread, one at a time, never on the event loop. Requests for a folder that is
already queued are merged (a burst of saves costs one sync). Each service is thread-safe for reads while
its sync runs, so requests answer with what is indexed so far.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import from_fs_path, to_fs_path

from botbin.errors import BotbinError, LockedError, ModelError
from botbin.service import MemoryService
from botbin.wire.errors import ErrorKind, kind_of
from botbin.wire.requests import SyncRequest

if TYPE_CHECKING:
    from botbin.sync.engine import SyncReport

log = logging.getLogger(__name__)
#: Longest wait of the first catch-up scan for the index warm-up (the first search's one-time builds), in seconds.
WARM_WAIT_S = 10.0
#: Seconds before a sync that found the workspace locked by another process is tried again.
LOCK_RETRY_S = 5.0


@dataclass
class Folder:
    """One workspace folder and its memory."""

    uri: str
    root: Path
    service: MemoryService
    last_report: SyncReport | None = None
    last_error: str | None = None
    """Why the last sync failed (model missing, workspace locked, ...), None after a good one."""
    last_error_kind: ErrorKind | None = None
    """The kind of ``last_error`` (``locked``, ``model_unavailable``, ...), None without one."""
    model_error: str | None = None
    """Why the embedding model is unavailable (search is keyword-only then), None when it works."""

    def failed(self, exc: BaseException, reason: str | None = None) -> str:
        """Record why the last sync or read failed: ``reason`` (default: ``exc``'s text) and ``exc``'s kind."""
        self.last_error, self.last_error_kind = reason or str(exc), kind_of(exc)
        return self.last_error

    def rel_path(self, uri: str) -> str | None:
        """The note's path relative to this folder, or None if ``uri`` lies outside it.

        A note opened through a link keeps the link's path, as the scan does; the folder is resolved only
        when the plain path is not under the root (the editor names the root through another link).
        """
        path = uri_to_path(uri)
        if path is None:
            return None
        plain = Path(os.path.abspath(path))
        for candidate in (plain, plain.parent.resolve() / plain.name, plain.resolve()):
            if candidate.is_relative_to(self.root):
                return candidate.relative_to(self.root).as_posix()
        return None

    def tracks(self, rel: str) -> bool:
        """True when ``rel`` is a note the scan would track (``MemoryService.tracks``)."""
        return self.service.tracks(rel)

    def uri_of(self, rel: str) -> str:
        return path_to_uri(self.root / rel)


def uri_to_path(uri: str) -> Path | None:
    """Filesystem path of a ``file:`` URI, None for any other scheme (untitled buffers, ...)."""
    fs = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(fs) if fs else None


def path_to_uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


#: progress(folder, chunks_embedded, chunks_to_embed) and done(folder, report or None, error or None)
ProgressCallback = Callable[[Folder, int, int], None]
DoneCallback = Callable[[Folder, "SyncReport | None", "str | None"], None]


@dataclass
class _Queue:
    pending: dict[str, bool] = field(default_factory=dict)
    """Folder URI -> full re-chunk wanted."""
    notes: dict[str, frozenset[str] | None] = field(default_factory=dict)
    """Folder URI -> the notes to sync (relative paths), None for a scan of the whole folder."""
    running: str | None = None


class Folders:
    """The server's workspace folders, their settings and the sync worker."""

    def __init__(self, on_progress: ProgressCallback, on_done: DoneCallback) -> None:
        self.folders: dict[str, Folder] = {}
        self.options: Mapping[str, Any] = {}
        self._on_progress, self._on_done = on_progress, on_done
        self._queue = _Queue()
        self._cond = threading.Condition()
        self._worker: threading.Thread | None = None
        self._stopped = False

    # -- folders and settings -------------------------------------------------------------------
    def set_folders(self, uris: list[str], options: Mapping[str, Any]) -> list[str]:
        """Open a service per folder with ``options`` (botbin.toml keys, plus ``passphrase`` for an encrypted
        store, else BOTBIN_PASSPHRASE of the server's environment); returns the settings warnings.

        A folder already open with the same options keeps its service (and its loaded index).
        """
        same_options = dict(options) == dict(self.options)
        self.options = options
        # The passphrase of an encrypted store is an option, not a setting: kept in memory, never logged.
        secret = options.get("passphrase")
        settings = {k: v for k, v in options.items() if k != "passphrase"}
        passphrase = (lambda: secret) if isinstance(secret, str) and secret else None
        warnings: list[str] = []
        folders: dict[str, Folder] = {}
        for uri in uris:
            if same_options and uri in self.folders:
                folders[uri] = self.folders[uri]
                continue
            path = uri_to_path(uri)
            if path is None:
                warnings.append(f"{uri}: not a file: URI, ignored")
                continue
            service = MemoryService(path, settings, overrides_source="LSP settings", passphrase=passphrase)
            warnings.extend(w for w in service.warnings if w not in warnings)
            folders[uri] = Folder(uri, service.root, service)
        self.folders = folders
        return warnings

    def folder_of(self, uri: str) -> tuple[Folder, str] | None:
        """The innermost folder holding ``uri`` and the note's relative path in it."""
        best: tuple[Folder, str] | None = None
        for folder in self.folders.values():
            rel = folder.rel_path(uri)
            if rel is not None and (best is None or len(folder.root.parts) > len(best[0].root.parts)):
                best = (folder, rel)
        return best

    def tracks(self, uri: str) -> bool:
        """True when ``uri`` is a note one of the folders tracks."""
        found = self.folder_of(uri)
        if found is None:
            return False
        folder, rel = found
        return folder.tracks(rel)

    # -- the sync worker ------------------------------------------------------------------------
    @property
    def indexing(self) -> bool:
        """True while a sync runs or waits."""
        with self._cond:
            return self._queue.running is not None or bool(self._queue.pending)

    def pending(self) -> int:
        with self._cond:
            return len(self._queue.pending) + (self._queue.running is not None)

    def request_sync(
        self, uris: list[str] | None = None, full: bool = False, notes: frozenset[str] | None = None
    ) -> None:
        """Queue a sync of these folders (default: all), of just ``notes`` (relative paths) when given, else a
        scan of each whole folder; merged with one already queued (the named notes add up; a whole folder
        wins)."""
        with self._cond:
            for uri in uris if uris is not None else list(self.folders):
                queued = uri in self._queue.pending
                before = self._queue.notes.get(uri)
                merged = None if notes is None or (queued and before is None) else notes | (before or frozenset())
                self._queue.notes[uri] = merged
                self._queue.pending[uri] = self._queue.pending.get(uri, False) or full
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="botbin-sync", daemon=True)
                self._worker.start()
            self._cond.notify_all()

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until no sync runs or waits (tests, shutdown); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._queue.running is None and not self._queue.pending, timeout_s)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._queue.pending.clear()
            self._queue.notes.clear()
            self._cond.notify_all()

    def _next(self) -> tuple[Folder, bool, frozenset[str] | None] | None:
        with self._cond:
            while not self._stopped:
                while self._queue.pending:
                    uri, full = next(iter(self._queue.pending.items()))
                    del self._queue.pending[uri]
                    notes = self._queue.notes.pop(uri, None)
                    folder = self.folders.get(uri)
                    if folder is not None:
                        self._queue.running = uri
                        return folder, full, notes
                self._cond.notify_all()
                if not self._cond.wait(timeout=30):
                    return None  # idle: let the thread end; request_sync starts a new one
            return None

    def _run(self) -> None:
        while (job := self._next()) is not None:
            folder, full, notes = job
            report, error = None, None
            try:
                folder.service.index()  # loaded first, so that notes written by this sync patch it live
                folder.service.wait_warm(WARM_WAIT_S)  # the first search's builds first: the first hover waits on them
                progress = functools.partial(self._on_progress, folder)
                # ``only`` None: a scan of the whole folder
                report = folder.service.sync(SyncRequest(full=full, only=notes), progress)
                folder.last_report, folder.last_error, folder.last_error_kind = report, None, None
            except ModelError as exc:
                error = folder.model_error = folder.failed(exc)
            except LockedError as exc:  # another process syncs: reload what it wrote, then try again
                error = folder.failed(exc, f"{exc}; retrying in {LOCK_RETRY_S:.0f} s")
                folder.service.forget_index()
                if not self._stopped:
                    timer = threading.Timer(LOCK_RETRY_S, self.request_sync, args=([folder.uri],))
                    timer.daemon = True
                    timer.start()
            except BotbinError as exc:
                error = folder.failed(exc)
            except Exception as exc:  # a bug must not kill the worker: report it and go on
                log.exception("sync of %s failed", folder.root)
                error = folder.failed(exc, f"internal error: {exc}")
            with self._cond:
                self._queue.running = None
                self._cond.notify_all()
            self._on_done(folder, report, error)
