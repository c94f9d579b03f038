"""Lifecycle guards the LSP specification asks of a server and pygls leaves out.

- Every request is answered: one whose params do not fit their type (a position on line -1) with
  ``InvalidParams`` (-32602), a request after ``shutdown`` or one that is not JSON-RPC 2.0 with
  ``InvalidRequest`` (-32600), one before ``initialize`` with ``ServerNotInitialized`` (-32002); pygls drops
  them and never replies, so the client waits forever. A message nobody waits on is logged, never shown.
- ``didChange`` of a document that was never opened is ignored (a debug log), not a KeyError shown to the user.
- ``initialize``'s ``processId``: the server exits when that client process dies, even while stdin stays
  open (an editor killed with its pipe inherited by a child).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Generator
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from botbin.lsp.errors import bad_request, invalid_request

log = logging.getLogger(__name__)

#: Seconds between two checks that the client process is alive.
CLIENT_POLL_S = 1.0


class _Handled:
    """What structure_message returns for a message it has already dealt with (handle_message skips it)."""


HANDLED = _Handled()


def _reason(exc: BaseException | None) -> str:
    """The innermost message of a cattrs validation error (e.g. "Position.line should be in range ...")."""
    while exc is not None:
        inner = getattr(exc, "exceptions", None)
        if inner:
            exc = inner[0]
            continue
        if exc.__cause__ is None or not str(exc):
            return str(exc) or type(exc).__name__
        exc = exc.__cause__
    return "the params do not match the method's type"


def _field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


def waiting_id(message: Any) -> int | str | None:
    """The id a client waits on an answer for: a request's (a message with a method) int or string id."""
    msg_id = _field(message, "id")
    if _field(message, "method") is None or isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        return None
    return msg_id


class BotbinProtocol(LanguageServerProtocol):
    """pygls' LSP protocol, answering every request it cannot take instead of dropping it (the client would
    wait forever): params that cannot be read (InvalidParams), a message that is not a JSON-RPC 2.0 request,
    any request after ``shutdown`` (InvalidRequest), a request before ``initialize`` (ServerNotInitialized).
    A change to a document that was never opened is ignored (pygls raises KeyError, shown to the user)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data:
            return data  # a nested object (or a message without "jsonrpc": handle_message refuses it)
        method = data.get("method")
        if method is not None and not isinstance(method, str):
            self._refuse(data, invalid_request(f"not a JSON-RPC request: its method is {method!r}"))
            return HANDLED
        if method is not None and "params" not in data:
            data = {**data, "params": None}  # JSON-RPC lets a request leave params out; pygls' own types need it
        try:
            structured = super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(exc, JsonRpcInvalidParams):
                self._refuse(data, bad_request(f"invalid params for {method}: {_reason(exc.__cause__)}"))
            else:
                self._refuse(data, invalid_request(f"not a JSON-RPC request: {_reason(exc.__cause__)}"))
            return HANDLED
        if method is not None and "id" in data and not hasattr(structured, "id"):
            self._refuse(data, invalid_request(f"{method} is a notification: it takes no id"))
            return HANDLED
        return structured

    def handle_message(self, message: Any) -> None:
        if message is HANDLED:
            return
        if _field(message, "jsonrpc") != self.VERSION:
            self._refuse(message, invalid_request("not a JSON-RPC 2.0 message"))
            return
        method = _field(message, "method")
        if waiting_id(message) is not None and method != types.EXIT:
            if self._workspace is None and method != types.INITIALIZE:
                self._refuse(message, invalid_request(f"{method} before initialize", not_initialized=True))
                return
            if self._shutdown:
                self._refuse(message, invalid_request(f"{method} after shutdown: the server takes no more requests"))
                return
        elif method is not None and self._workspace is None and method not in (types.INITIALIZE, types.EXIT):
            log.debug("%s before initialize: dropped", method)
            return
        elif method == types.CANCEL_REQUEST and not isinstance(getattr(message.params, "id", None), int | str):
            log.warning("%s without a request id: dropped", method)
            return
        super().handle_message(message)

    def _refuse(self, message: Any, error: JsonRpcException) -> None:
        """Answer ``message`` with ``error`` when its client waits for an answer; log it either way."""
        msg_id = waiting_id(message)
        log.warning("%s%s", error.message, "" if msg_id is None else f" (request {msg_id!r})")
        if msg_id is not None:
            self._send_response(msg_id, error=error.to_response_error())

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.debug("didChange of %s, which is not open: ignored", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)


def process_alive(pid: int) -> bool:
    """True while process ``pid`` exists (a process we may not signal still counts as alive)."""
    if sys.platform == "win32":  # os.kill would terminate it there
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watch_client(pid: int, on_gone: Callable[[], None], poll_s: float = CLIENT_POLL_S) -> threading.Thread:
    """Call ``on_gone`` (from a daemon thread) once client process ``pid`` has died. When the client is
    this server's parent, a new parent (we were re-parented) also means it died, even before it is reaped."""
    parent = os.getppid() if sys.platform != "win32" else None

    def run() -> None:
        while process_alive(pid) and not (pid == parent and os.getppid() != parent):
            time.sleep(poll_s)
        log.warning("the client process %d is gone; the language server exits", pid)
        on_gone()

    thread = threading.Thread(target=run, name="botbin-client-watch", daemon=True)
    thread.start()
    return thread
