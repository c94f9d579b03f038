"""Lifecycle guards the LSP specification asks of a server and pygls leaves out.

- A request whose params do not fit their type (a position on line -1) is answered with ``InvalidParams``
  (-32602); pygls fails to read it and never replies, so the client waits forever.
- ``initialize``'s ``processId``: the server exits when that client process dies, even while stdin stays
  open (an editor killed with its pipe inherited by a child).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

from botbin.lsp.errors import bad_request

log = logging.getLogger(__name__)

#: Seconds between two checks that the client process is alive.
CLIENT_POLL_S = 1.0


class _Answered:
    """What structure_message returns for a request it has already answered (handle_message skips it)."""


ANSWERED = _Answered()


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


class BotbinProtocol(LanguageServerProtocol):
    """pygls' LSP protocol, answering requests whose params cannot be read instead of dropping them."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams as exc:
            if not (isinstance(data, dict) and "id" in data and "method" in data):
                raise  # a notification or response: nobody waits for an answer
            message = f"invalid params for {data['method']}: {_reason(exc.__cause__)}"
            log.warning("%s", message)
            self._send_response(data["id"], error=bad_request(message).to_response_error())
            return ANSWERED

    def handle_message(self, message: Any) -> None:
        if message is ANSWERED:
            return
        super().handle_message(message)


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
