"""Issue 20, item 8: ``exit`` without ``shutdown`` exits 1, the server leaves when the client process named
in ``processId`` dies although stdin stays open, and a request with an invalid position gets InvalidParams.

Raw JSON-RPC over the real ``botbin lsp`` process: these are exactly the cases a well-behaved client library
never produces."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from lsp.raw import RawClient


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nAlways lint.\n", encoding="utf-8")
    return ws


def test_exit_without_shutdown_exits_1_and_after_shutdown_0(tmp_path: Path) -> None:
    for shutdown, code in ((False, 1), (True, 0)):
        client = RawClient(_workspace(tmp_path) if not shutdown else tmp_path / "ws")
        try:
            client.initialize()
            if shutdown:
                client.send({"id": 2, "method": "shutdown"})
                assert client.answer(2).get("result") is None
            client.send({"method": "exit"})
            assert client.proc.wait(timeout=30) == code
        finally:
            client.close()


def test_server_exits_when_the_client_process_dies(tmp_path: Path) -> None:
    editor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    client = RawClient(_workspace(tmp_path))
    try:
        client.initialize(process_id=editor.pid)
        time.sleep(1.5)
        assert client.proc.poll() is None  # alive while its client is
        editor.kill()
        editor.wait()
        assert client.proc.wait(timeout=30) == 1  # stdin is still open: only the watch ends it
    finally:
        editor.kill()
        client.close()


def test_request_with_an_invalid_position_gets_invalid_params(tmp_path: Path) -> None:
    client = RawClient(_workspace(tmp_path))
    try:
        client.initialize()
        uri = (client.workspace / "MEMORY.md").as_uri()
        client.send(
            {
                "id": 7,
                "method": "textDocument/hover",
                "params": {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}},
            }
        )
        error = client.answer(7)["error"]
        assert error["code"] == -32602 and "line" in error["message"]
        client.send(
            {
                "id": 8,
                "method": "textDocument/hover",
                "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
            }
        )
        assert "result" in client.answer(8)  # the server goes on
    finally:
        client.close()
