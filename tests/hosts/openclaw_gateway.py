"""The real OpenClaw's Gateway for the end-to-end tests (openclaw_real.py makes the home): ``openclaw gateway run``
on a free loopback port, and sessions through ``openclaw acp``, the Agent Client Protocol bridge an IDE uses
(JSON-RPC over stdio to the Gateway), where a turn costs a round trip rather than a Node start. Every process is
started here and stopped by its id."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hosts.openclaw_real import OPENCLAW, OpenClawHome, stop


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def gateway(home: OpenClawHome, wait_s: float = 180.0) -> Iterator[subprocess.Popen[str]]:
    """``openclaw gateway run`` for ``home`` on a free loopback port until the end of the block (its log in
    ``gateway.log``); the home's turns go through it meanwhile. The engine then lives in this one process."""
    home.gateway_port = _free_port()
    home.write()
    log_path = home.root / "gateway.log"
    log = log_path.open("a")
    proc = subprocess.Popen(
        [str(OPENCLAW), "gateway", "run"],
        cwd=home.agent_workspace,
        env=home.env(),
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + wait_s
        while "[gateway] ready" not in log_path.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the OpenClaw Gateway did not start: {log_path.read_text(errors='replace')}")
            time.sleep(0.5)
        yield proc
    finally:
        stop(proc)
        log.close()
        home.gateway_port = None
        home.write()


class AcpSession:
    """One session through ``openclaw acp`` (the Agent Client Protocol bridge an IDE uses: JSON-RPC over stdio to
    the running Gateway): a turn costs a round trip, not a Node start (~1 s instead of ~4 s here)."""

    def __init__(self, proc: subprocess.Popen[str], workspace: Path) -> None:
        self.proc = proc
        self._id = 0
        self.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        self.session_id = str(self.call("session/new", {"cwd": str(workspace), "mcpServers": []})["sessionId"])

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its result (notifications in between are read past; a request from the
        bridge, a permission prompt, is declined). Raises AssertionError on an error answer or a closed bridge."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            assert line, f"openclaw acp closed during {method}"
            message = json.loads(line)
            if "method" in message and "id" in message:
                declined = {"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": {"outcome": "cancelled"}}}
                self.proc.stdin.write(json.dumps(declined) + "\n")
                self.proc.stdin.flush()
            elif message.get("id") == self._id:
                assert "error" not in message, message
                return dict(message["result"])

    def prompt(self, text: str) -> str:
        """One turn; its stop reason (``end_turn`` when the model answered)."""
        result = self.call("session/prompt", {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]})
        return str(result.get("stopReason"))


@contextmanager
def acp_session(home: OpenClawHome, session: str) -> Iterator[AcpSession]:
    """An ACP session on Gateway session key ``agent:main:<session>`` (needs ``gateway(home)`` running)."""
    err = (home.root / f"acp-{session}.log").open("a")
    proc = subprocess.Popen(
        [str(OPENCLAW), "acp", "--session", f"agent:main:{session}"],
        cwd=home.agent_workspace,
        env=home.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        start_new_session=True,
    )
    try:
        yield AcpSession(proc, home.agent_workspace)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            stop(proc)
        err.close()
