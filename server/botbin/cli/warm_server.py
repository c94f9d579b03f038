"""The server side of warm answers (cli/warm.py): a Unix socket beside a running server of one workspace
(``botbin serve``, the language server's folders, the MCP server) that answers ``botbin search`` and
``botbin context`` with the server's loaded model and index, and the typed host ops of agent hosts' plugins
(a request with an ``op``: cli/host_ops.py, wire/hosts.py).

Never a stale answer: the request is parsed with the CLI's own flags and answered only when it names this
workspace and its flags and ``BOTBIN_*`` environment give this service's settings, so its index is the one
the command would read; the search then goes through the same service call as in-process (which reloads an
index that another process synced). Anything else is declined and the command runs in its own process
(cli/answers.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import socketserver
import threading
import time
from pathlib import Path

from botbin.cli.answers import answer
from botbin.cli.host_ops import answer_op
from botbin.cli.warm import PROTOCOL, private_dir, socket_path
from botbin.service import MemoryService

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1 << 20
"""Largest request read; a longer one is declined."""


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        data = self.rfile.read(MAX_REQUEST_BYTES + 1)
        try:
            message = json.loads(data) if len(data) <= MAX_REQUEST_BYTES else None
        except ValueError:
            message = None
        self.server.last_request = time.monotonic()
        if isinstance(message, dict) and "op" in message:
            reply = answer_op(self.server.memory, message)
        elif isinstance(message, dict):
            reply = answer(self.server.memory, message)
        else:
            reply = {"v": PROTOCOL, "served": False, "reason": "bad request"}
        with contextlib.suppress(OSError):  # the client went away
            self.wfile.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    memory: MemoryService
    last_request: float = 0.0
    """``time.monotonic()`` of the last request read."""


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
        server.last_request = time.monotonic()
        self._server, self._inode = server, self.path.stat().st_ino
        threading.Thread(target=server.serve_forever, name="botbin-warm-socket", daemon=True).start()
        log.info("warm answers for %s at %s", self.memory.root, self.path)
        return True

    def idle_s(self) -> float:
        """Seconds since the last request (or the start); 0 when not listening."""
        server = self._server
        return time.monotonic() - server.last_request if server is not None else 0.0

    def stop(self) -> None:
        """Stop listening, remove the socket file (unless another server replaced it) and distil the host turns
        still buffered."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        self.memory.close_hosts()
        try:
            if self.path.stat().st_ino == self._inode:
                self.path.unlink()
        except OSError:
            pass
