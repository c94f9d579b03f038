"""The server side of warm answers (cli/warm.py): a Unix socket beside a running server of one workspace
(``botbin serve``, the language server's folders, the MCP server) that answers ``botbin search`` and
``botbin context`` with the server's loaded model and index.

Never a stale answer: the request is parsed with the CLI's own parser and answered only when it names this
workspace and its flags and ``BOTBIN_*`` environment give this service's settings, so its index is the one
the command would read; the search then goes through the same service call as in-process (which reloads an
index that another process synced). Anything else is declined and the command runs in its own process.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import socket
import socketserver
import threading
from pathlib import Path
from typing import Any

from botbin.cli.warm import PROTOCOL, WARM_COMMANDS, private_dir, socket_path
from botbin.service import MemoryService

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1 << 20
"""Largest request read; a longer one is declined."""


def _declined(reason: str) -> dict[str, Any]:
    return {"v": PROTOCOL, "served": False, "reason": reason}


def _parse(message: dict[str, Any]) -> argparse.Namespace | str:
    """The parsed command line of ``message``, or why it cannot be answered here."""
    from botbin.cli import build_parser

    argv = message.get("argv")
    if message.get("v") != PROTOCOL or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return f"not a protocol {PROTOCOL} request"
    try:
        args = build_parser().parse_args(argv)
    except SystemExit:
        return "bad usage"
    if args.subcommand not in WARM_COMMANDS or getattr(args, "batch", None) is not None:
        return f"{args.subcommand} is answered in-process"
    return args


def answer(memory: MemoryService, message: dict[str, Any]) -> dict[str, Any]:
    """The answer to one request (see the module docstring)."""
    from botbin.cli.commands import _search_usage_error, answer_context, answer_search
    from botbin.cli.common import overrides

    args = _parse(message)
    if isinstance(args, str):
        return _declined(args)
    cwd, env = Path(str(message.get("cwd", "/"))), message.get("env")
    if (cwd / getattr(args, "workspace", Path("."))).resolve() != memory.root:
        return _declined("another workspace")
    if args.subcommand == "search" and _search_usage_error(args):
        return _declined("bad usage")
    warnings = memory.settings_match(overrides(args), env if isinstance(env, dict) else {})
    if warnings is None:
        return _declined("other settings")
    out, err = io.StringIO(), io.StringIO()
    for warning in warnings:
        print(f"botbin: warning: {warning}", file=err)
    run = answer_search if args.subcommand == "search" else answer_context
    try:
        code = run(memory, args, out, err)
    except Exception as exc:  # the command runs in-process then, and reports the error as it always does
        log.info("warm %s declined: %s", args.subcommand, exc)
        return _declined(f"{type(exc).__name__}: {exc}")
    return {"v": PROTOCOL, "served": True, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue(),
            "pid": os.getpid()}  # fmt: skip


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        data = self.rfile.read(MAX_REQUEST_BYTES + 1)
        try:
            message = json.loads(data) if len(data) <= MAX_REQUEST_BYTES else None
        except ValueError:
            message = None
        reply = answer(self.server.memory, message) if isinstance(message, dict) else _declined("bad request")
        with contextlib.suppress(OSError):  # the client went away
            self.wfile.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    memory: MemoryService


def _alive(path: Path) -> bool:
    """True when a server accepts connections at ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


class WarmServer:
    """The socket of one workspace's service; ``start`` it, ``stop`` it (also safe when never started)."""

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory
        self.path = socket_path(memory.root)
        """Where it listens (cli/warm.py)."""
        self._server: _Server | None = None
        self._inode: int | None = None

    def start(self) -> bool:
        """Listen (mode 0600) and serve in a daemon thread. False, logged, when the runtime folder is not
        private, another live server answers for this workspace, or the socket cannot be made. A socket file
        left by a server that died is removed first."""
        if not private_dir(self.path.parent):
            log.warning("no warm answers: %s is not a private folder of this user", self.path.parent)
            return False
        if self.path.exists():
            if _alive(self.path):
                log.info("another botbin server answers for %s at %s", self.memory.root, self.path)
                return False
            self.path.unlink(missing_ok=True)  # stale: its server died
        try:
            server = _Server(str(self.path), _Handler, bind_and_activate=False)
            old = os.umask(0o177)
            try:
                server.server_bind()
            finally:
                os.umask(old)
            os.chmod(self.path, 0o600)
            server.server_activate()
        except OSError as exc:
            log.warning("no warm answers for %s: cannot listen at %s (%s)", self.memory.root, self.path, exc)
            return False
        server.memory = self.memory
        self._server, self._inode = server, self.path.stat().st_ino
        threading.Thread(target=server.serve_forever, name="botbin-warm-socket", daemon=True).start()
        log.info("warm answers for %s at %s", self.memory.root, self.path)
        return True

    def stop(self) -> None:
        """Stop listening and remove the socket file (unless another server replaced it)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        try:
            if self.path.stat().st_ino == self._inode:
                self.path.unlink()
        except OSError:
            pass
