"""Issue 36, the MCP edge (mcp_stdio.py): every request line is answered. The SDK's stdio transport drops a line
it cannot validate, so its client waits forever: a lone surrogate in a string (mended to U+FFFD here), a
``jsonrpc`` other than "2.0", params that are not an object (answered InvalidRequest here). Arguments the SDK
refuses and an unknown tool are tool errors of kind ``bad_request``. The real ``botbin mcp`` over stdio, raw
lines; about 20 s (one model load)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from botbin.mcp_stdio import INVALID_REQUEST, check_line

SURROGATE_CALL = (
    '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
    '"params": {"name": "search_memory", "arguments": {"query": "broker \\ud83d"}}}\n'
)


def test_a_valid_line_passes_unchanged() -> None:
    line = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n'
    assert check_line(line) == (line, None)


def test_a_lone_surrogate_is_mended_and_the_call_goes_on() -> None:
    passed, answer = check_line(SURROGATE_CALL)
    assert answer is None and passed is not None
    assert json.loads(passed)["params"]["arguments"]["query"] == "broker \ufffd"


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "1.0", "id": 7, "method": "tools/list"},
        {"id": 7, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 7, "method": 5},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": 5},
    ],
)
def test_a_request_the_sdk_would_drop_is_answered(message: dict[str, Any]) -> None:
    passed, answer = check_line(json.dumps(message) + "\n")
    assert passed is None and answer is not None and answer.endswith("\n")
    error = json.loads(answer)
    assert error["id"] == 7 and error["error"]["code"] == INVALID_REQUEST
    assert error["error"]["data"]["kind"] == "bad_request"


@pytest.mark.parametrize(
    "line",
    ["\n", "{not json}\n", "[1, 2]\n", '{"jsonrpc": "1.0", "method": "x"}\n', "[" * 100_000 + "]" * 100_000 + "\n"],
    ids=["blank", "not-json", "array", "notification", "too-deep"],
)
def test_a_line_nobody_waits_on_is_dropped(line: str) -> None:
    assert check_line(line) == (None, None)


DEEP_CALL = '{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "search_memory", "arguments": ' + (
    '{"query": ' + "[" * 100_000 + "]" * 100_000 + "}}}\n"
)


def test_a_request_nested_deeper_than_python_parses_is_answered() -> None:
    # json.loads raised RecursionError out of the stdin reader: the whole server died.
    passed, answer = check_line(DEEP_CALL)
    assert passed is None and answer is not None
    error = json.loads(answer)
    assert error["id"] == 8 and error["error"]["code"] == INVALID_REQUEST and "too deep" in error["error"]["message"]


class _Mcp:
    """``botbin mcp`` over stdio, one JSON line each way."""

    def __init__(self, workspace: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "botbin", "mcp", "-w", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        for line in out:
            self.lines.put(line)

    def write(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()

    def ask(self, message: dict[str, Any] | str, msg_id: int, timeout_s: float = 60) -> dict[str, Any]:
        self.write(message if isinstance(message, str) else json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                answer: dict[str, Any] = json.loads(self.lines.get(timeout=0.5))
            except queue.Empty:
                continue
            if answer.get("id") == msg_id:
                return answer
        raise AssertionError(f"no answer to request {msg_id} in {timeout_s} s")

    def call(self, msg_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = self.ask(
            {"id": msg_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}, msg_id
        )
        result: dict[str, Any] = answer["result"]
        return result


@pytest.fixture
def mcp(tmp_path: Path, real_embedder: Any) -> Iterator[_Mcp]:
    from botbin.service import MemoryService

    (tmp_path / "memory").mkdir()
    (tmp_path / "MEMORY.md").write_text("# Memory\n\nThe alerts travel over the NATS message broker.\n", "utf-8")
    MemoryService(tmp_path, embedder=real_embedder, env={}).sync()
    server = _Mcp(tmp_path)
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    assert "result" in server.ask({"id": 0, "method": "initialize", "params": init}, 0)
    server.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    yield server
    server.proc.kill()
    server.proc.wait()


@pytest.mark.model
def test_hostile_lines_and_arguments_are_answered(mcp: _Mcp) -> None:
    found = mcp.ask(SURROGATE_CALL, 1)["result"]
    assert not found["isError"] and found["structuredContent"]["hits"][0]["path"] == "MEMORY.md"
    for msg_id, line in enumerate(
        [
            '{"jsonrpc": "1.0", "id": 2, "method": "tools/list"}\n',
            '{"id": 3, "method": "tools/list"}\n',
            '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": 5}\n',
        ],
        start=2,
    ):
        error = mcp.ask(line, msg_id)["error"]
        assert error["code"] == INVALID_REQUEST and error["data"]["kind"] == "bad_request"
    refused: list[tuple[str, dict[str, Any]]] = [
        ("search_memory", {"query": 5}),
        ("search_memory", {"query": "x", "k": 10**30}),
        ("get_context", {"query": "x", "budget_tokens": -1}),
        ("remember", {"text": "x", "tags": "not a list"}),
        ("no_such_tool", {}),
    ]
    for msg_id, (tool, arguments) in enumerate(refused, start=10):
        result = mcp.call(msg_id, tool, arguments)
        assert result["isError"] and result["structuredContent"]["kind"] == "bad_request", (tool, result)
    mcp.write("{not json}\n")
    assert "result" in mcp.ask({"id": 99, "method": "tools/list"}, 99)  # it serves on
    assert mcp.ask(DEEP_CALL, 8)["error"]["code"] == INVALID_REQUEST
    assert "result" in mcp.ask({"id": 100, "method": "tools/list"}, 100)
