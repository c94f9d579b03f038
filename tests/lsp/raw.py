"""A bare JSON-RPC client of a real ``botbin lsp`` subprocess, for the cases a client library never produces
(raw bytes, malformed messages, ``exit`` without ``shutdown``)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

SERVER = [sys.executable, "-m", "botbin", "lsp"]


class RawClient:
    """A bare JSON-RPC client of a ``botbin lsp`` subprocess (messages read on a thread)."""

    def __init__(self, workspace: Path, stderr: IO[bytes] | int = subprocess.DEVNULL) -> None:
        self.proc = subprocess.Popen(
            SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=workspace
        )
        self.workspace = workspace
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        while True:
            length = None
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line or length is None:
                self.messages.put(None)
                return
            self.messages.put(json.loads(out.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def write(self, data: bytes) -> None:
        """Raw bytes to the server's stdin."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def answer(self, msg_id: int, timeout_s: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                message = self.messages.get(timeout=0.5)
            except queue.Empty:
                continue
            if message is None:
                raise AssertionError("the server closed its output without answering")
            if message.get("id") == msg_id and "method" not in message:
                return message
        raise AssertionError(f"no answer to request {msg_id} in {timeout_s} s")

    def initialize(self, process_id: int | None = None, folder: bool = True) -> None:
        """``initialize`` (of ``workspace``, or of no folder: nothing to index) and ``initialized``."""
        root = self.workspace.as_uri() if folder else None
        self.send(
            {"id": 1, "method": "initialize", "params": {"processId": process_id, "rootUri": root, "capabilities": {}}}
        )
        assert "result" in self.answer(1)
        self.send({"method": "initialized", "params": {}})

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
