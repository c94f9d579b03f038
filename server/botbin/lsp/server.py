"""The botbin language server's state, shared by the feature handlers (``botbin.lsp.main`` starts it).

Handlers live in ``botbin.lsp.features`` (one module per LSP area); this module holds what they share:
open buffers, workspace folders, the negotiated position encoding, progress and messages. Work that may
block (model, disk) runs off the event loop; anything sent from a worker thread goes through ``call_soon``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from botbin import __version__
from botbin.errors import BotbinError, PassphraseError
from botbin.lsp import protocol
from botbin.lsp.errors import with_kinds
from botbin.lsp.folders import Folder, Folders, uri_to_path
from botbin.lsp.framing import FramedReader
from botbin.lsp.guards import BotbinProtocol
from botbin.lsp.positions import UTF16, encoding_name
from botbin.wire.errors import ErrorReport
from botbin.wire.model import dump

if TYPE_CHECKING:
    from botbin.sync.engine import SyncReport

log = logging.getLogger(__name__)
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class BotbinLanguageServer(LanguageServer):
    """pygls server plus botbin's state."""

    def __init__(self) -> None:
        super().__init__(protocol.SERVER_NAME, __version__, max_workers=4, protocol_cls=BotbinProtocol)
        self.folders = Folders(self._sync_progress, self._sync_done)
        self.buffers: dict[str, str] = {}
        """Open documents' text by URI, kept with LSP line rules (pygls' own copy splits lines as Python does)."""
        self.encoding = UTF16
        self.loop: asyncio.AbstractEventLoop | None = None
        self.client_watches = False
        """True once the client agreed to watch ``**/*.md`` for us (then no watchfiles watcher runs)."""
        self.watch_tasks: list[asyncio.Task[None]] = []
        self._progress: dict[str, str] = {}
        """Folder URI -> work-done progress token of its running sync."""
        self._shown: set[str] = set()
        self.diagnosed: set[str] = set()
        """URIs that currently carry botbin diagnostics (to clear them when the conflict goes)."""
        self.on_synced: list[Callable[[Folder, SyncReport | None], None]] = []
        self.shut_down = False
        """True once ``shutdown`` was received."""
        self.exit_code = 0
        """The process exit status: 1 for an ``exit`` without ``shutdown`` first (LSP 3.17), a dead client, or
        input that is not LSP framing (lsp/framing.py)."""
        self.reader: FramedReader | None = None
        """The framing check of stdin while ``start_io`` serves."""

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]:
        """pygls' ``feature``; every error of the handler carries a kind (lsp/errors.py ``with_kinds``)."""
        register = super().feature(feature_name, options)
        return lambda handler: register(with_kinds(handler))

    def command(self, command_name: str) -> Callable[[F], F]:
        """pygls' ``command``; every error of the handler carries a kind (lsp/errors.py ``with_kinds``)."""
        register = super().command(command_name)
        return lambda handler: register(with_kinds(handler))

    # -- transport ------------------------------------------------------------------------------
    def start_io(self, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
        """Serve on stdio, reading through ``FramedReader``: a malformed header ends the connection (status 1)."""
        self.reader = FramedReader(stdin if stdin is not None else sys.stdin.buffer)
        super().start_io(self.reader, stdout)  # type: ignore[arg-type]  # pygls reads only readline and read
        if self.reader.error is not None:
            self.exit_code = 1

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls' report of an error no request waits on. A body that is not JSON (pygls' read loop reports it
        with source JsonRpcException; nested deeper than Python parses too) means the framing is lost, or its request
        can never be answered: the connection ends (lsp/framing.py)."""
        if source is JsonRpcException and isinstance(error, ValueError | RecursionError) and self.reader is not None:
            self.reader.lose(f"a message body is not JSON ({error})")
            return
        super().report_server_error(error, source)

    # -- capabilities ---------------------------------------------------------------------------
    def client_supports(self, path: str) -> bool:
        return bool(get_capability(self.client_capabilities, path, False))

    def adopt_encoding(self) -> None:
        self.encoding = encoding_name(self.workspace.position_encoding)

    # -- thread-safe messaging ------------------------------------------------------------------
    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the event loop, from any thread."""
        if self.loop is None:
            fn(*args)
        else:
            self.loop.call_soon_threadsafe(fn, *args)

    def show_once(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """One ``window/showMessage`` per distinct message for the server's lifetime; always logged."""
        log.warning("%s", message)
        if message not in self._shown:
            self._shown.add(message)
            self.call_soon(self.window_show_message, types.ShowMessageParams(kind, message))

    def folder_failed(self, folder: Folder, exc: BotbinError) -> None:
        """A read request (search, hover) failed for one folder: keep the reason for status, and say so at
        once when it is a locked store (else the user only sees "no hits")."""
        folder.failed(exc)
        if isinstance(exc, PassphraseError):
            self.report_error(folder, f"botbin: {exc}", types.MessageType.Warning)

    def report_error(self, folder: Folder, message: str, kind: types.MessageType) -> None:
        """A folder's failure: ``botbin/error`` (its kind, for clients that act on it), then ``message`` once as
        a ``window/showMessage``."""
        if folder.last_error_kind is not None and folder.last_error is not None:
            report = ErrorReport(
                uri=folder.uri, kind=folder.last_error_kind, message=folder.last_error, shown_as=message
            )
            self.call_soon(self.protocol.notify, protocol.ERROR, dump(report))
        self.show_once(message, kind)

    def ask_folders(self, ask: Callable[[Folder], T]) -> list[tuple[T, Folder]]:
        """``ask(folder)`` of every folder, with its folder; a folder whose call fails is reported
        (``folder_failed``) and left out, so one missing folder never hides the others. Blocking."""
        answers: list[tuple[T, Folder]] = []
        for folder in list(self.folders.folders.values()):
            try:
                answers.append((ask(folder), folder))
            except BotbinError as exc:
                self.folder_failed(folder, exc)
        return answers

    def forget_shown(self, needle: str) -> None:
        """Let messages containing ``needle`` be shown again (after a settings change that may fix them)."""
        self._shown = {m for m in self._shown if needle not in m}

    def model_unavailable(self, reason: str) -> None:
        """The one message for a model that cannot load (from the warm-up or from a sync, whichever first)."""
        self.show_once(f"botbin: the embedding model is unavailable, search is keyword-only: {reason}")

    def log_message(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.call_soon(self.window_log_message, types.LogMessageParams(kind, message))

    # -- documents ------------------------------------------------------------------------------
    def text_of(self, uri: str) -> str | None:
        """The unsaved buffer of ``uri`` if open, else the file on disk; None when unreadable."""
        if uri in self.buffers:
            return self.buffers[uri]
        path = uri_to_path(uri)
        if path is None:
            return None
        try:
            return Path(path).read_bytes().decode("utf-8", "replace")
        except OSError:
            return None

    # -- indexing progress ----------------------------------------------------------------------
    async def start_sync(
        self, uris: list[str] | None = None, full: bool = False, notes: frozenset[str] | None = None
    ) -> None:
        """Queue a background sync (of just ``notes``, relative paths, when given) and open a progress
        report for each folder in it."""
        targets = uris if uris is not None else list(self.folders.folders)
        if self.client_supports("window.work_done_progress"):
            for uri in targets:
                if uri not in self._progress:
                    token = str(uuid.uuid4())
                    self._progress[uri] = token
                    try:
                        await self.work_done_progress.create_async(token)
                    except Exception as exc:  # a client that refuses progress still gets its sync
                        log.info("no progress report: %s", exc)
                        self._progress.pop(uri, None)
                        continue
                    name = Path(uri_to_path(uri) or uri).name
                    self.work_done_progress.begin(
                        token,
                        types.WorkDoneProgressBegin(
                            title=protocol.PROGRESS_TITLE, message=name, percentage=0, cancellable=False
                        ),
                    )
        self.folders.request_sync(targets, full, notes)

    def _sync_progress(self, folder: Folder, done: int, total: int) -> None:
        token = self._progress.get(folder.uri)
        if token is not None and total:
            report = types.WorkDoneProgressReport(message=f"{done}/{total} chunks", percentage=done * 100 // total)
            self.call_soon(self.work_done_progress.report, token, report)

    def _sync_done(self, folder: Folder, report: SyncReport | None, error: str | None) -> None:
        self.call_soon(self._finish_sync, folder, report, error)

    def _finish_sync(self, folder: Folder, report: SyncReport | None, error: str | None) -> None:
        token = self._progress.pop(folder.uri, None)
        if error is not None and error == folder.model_error:
            self.model_unavailable(error)
        elif error is not None:
            self.report_error(folder, f"botbin: {error}", types.MessageType.Error)
        elif report is not None:
            log.info(
                "synced %s: %s, %d chunks embedded in %.1f s",
                folder.root,
                _summary(report),
                report.chunks_embedded,
                report.elapsed_ms / 1000,
            )
            for failure in report.failed:
                self.log_message(f"{failure.path}: {failure.reason}", types.MessageType.Warning)
            for warning in report.warnings:
                self.log_message(warning, types.MessageType.Warning)
        if token is not None:
            summary = "failed" if error else _summary(report)
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=summary))
        for hook in self.on_synced:
            try:
                hook(folder, report)
            except Exception:
                log.exception("after-sync hook failed")


def _summary(report: SyncReport | None) -> str:
    if report is None:
        return "done"
    excluded = f"{len(report.excluded)} excluded, " if report.excluded else ""
    return (
        f"{len(report.added)} added, {len(report.modified)} modified, {len(report.deleted)} deleted, "
        f"{excluded}{report.unchanged} unchanged"
    )
