"""The server side of warm answers (cli/warm.py): a Unix socket beside a running server of one workspace
(``botbin serve``, the language server's folders, the MCP server) that answers ``botbin search`` and
``botbin context`` with the server's loaded model and index, and the typed host ops of agent hosts' plugins
(a request with an ``op``: cli/host_ops.py, wire/hosts.py).

Never a stale answer: the request is parsed with the CLI's own flags and answered only when it names this
workspace and its flags and ``BOTBIN_*`` environment give this service's settings, so its index is the one
the command would read; the search then goes through the same service call as in-process (which reloads an
index that another process synced). Anything else is declined and the command runs in its own process
(cli/answers.py).

Bounded: at most MAX_CONNECTIONS are served at once (one more is declined "busy" at once), and a connection
that has not sent its whole request within READ_TIMEOUT_S is closed.
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
from typing import Any

from botbin.cli.answers import answer
from botbin.cli.host_ops import answer_op
from botbin.cli.warm import private_dir, socket_path
from botbin.service import MemoryService
from botbin.wire.warm import WARM_PROTOCOL

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1 << 20
"""Largest request read; a longer one is declined."""
MAX_CONNECTIONS = 8
"""Connections served at once; one more is declined at once ("busy": its command answers in its own process),
so idle or stuck clients hold at most this many threads."""
READ_TIMEOUT_S = 2.0
"""Longest wait for a connection's whole request (a client sends it at once, then shuts its side); a
connection still idle by then is closed."""
WRITE_TIMEOUT_S = 10.0
"""Longest wait on a client that does not read its answer."""
_BUSY = json.dumps({"v": WARM_PROTOCOL, "served": False, "reason": "busy"}).encode() + b"\n"


class _Handler(socketserver.BaseRequestHandler):
    server: _Server
    request: socket.socket

    def handle(self) -> None:
        data = self._read()
        if data is None:
            return  # an idle connection: closed without an answer
        try:
            message = json.loads(data) if len(data) <= MAX_REQUEST_BYTES else None
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python parses
            message = None
        self.server.last_request = time.monotonic()
        if isinstance(message, dict) and "op" in message:
            reply = answer_op(self.server.memory, message)
        elif isinstance(message, dict):
            reply = answer(self.server.memory, message)
        else:
            reply = {"v": WARM_PROTOCOL, "served": False, "reason": "bad request"}
        with contextlib.suppress(OSError):  # the client went away, or does not read
            self.request.settimeout(WRITE_TIMEOUT_S)
            self.request.sendall(json.dumps(reply).encode() + b"\n")  # ASCII: a lone surrogate cannot stop it

    def _read(self) -> bytes | None:
        """The request: what the client sends until it shuts its side (cut just past MAX_REQUEST_BYTES when
        longer); None when it has not all come within READ_TIMEOUT_S (a client that connects and idles)."""
        deadline = time.monotonic() + READ_TIMEOUT_S
        chunks: list[bytes] = []
        size = 0
        while (left := deadline - time.monotonic()) > 0:
            self.request.settimeout(left)
            try:
                chunk = self.request.recv(1 << 16)
            except OSError:  # timed out, or reset
                break
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REQUEST_BYTES:
                return b"".join(chunks)
        log.info("warm socket: a connection sent no whole request in %.0f s; closed", READ_TIMEOUT_S)
        return None


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """One thread per connection, at most MAX_CONNECTIONS at once: past that a connection is declined
    ("busy") on the accepting thread, without reading it."""

    daemon_threads = True
    request_queue_size = 64  # a burst of connections is accepted and declined, not left to time out connecting

    def __init__(self, path: str, memory: MemoryService) -> None:
        super().__init__(path, _Handler, bind_and_activate=False)
        self.memory = memory
        self.last_request = time.monotonic()
        """``time.monotonic()`` of the last request read."""
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.setblocking(False)
                request.send(_BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


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
            server = _Server(str(self.path), self.memory)
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
        self.memory.hosts.close()
        try:
            if self.path.stat().st_ino == self._inode:
                self.path.unlink()
        except OSError:
            pass
