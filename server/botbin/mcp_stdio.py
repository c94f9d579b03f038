"""The edge of ``botbin mcp`` (mcp.py): the SDK's MCPServer, made to answer every request it is sent.

- The SDK's stdio transport drops a line it cannot validate, and the client then waits forever for its answer:
  a string holding a lone surrogate (``"\\ud800"``, which ``JSON.stringify`` writes for a string cut inside an
  emoji), a ``jsonrpc`` other than ``"2.0"``, params that are not an object. Here each line is read first
  (``check_line``): a lone surrogate becomes U+FFFD and the call goes on; any other line that names a request
  id is answered with InvalidRequest (-32600, data ``{kind: "bad_request", message}``); the rest is logged.
- A tool call the SDK refuses (an unknown tool, arguments that fail the schema) or a tool that crashes is a tool
  error whose structured content is ``{kind, message}`` (``bad_request``, ``internal``), like every other.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, cast

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from pydantic import ValidationError

from botbin.wire.errors import ErrorData
from botbin.wire.model import dump

log = logging.getLogger(__name__)

INVALID_REQUEST = -32600
"""JSON-RPC's code for a message that is not a valid request."""
_SURROGATES = range(0xD800, 0xE000)


def _valid(line: str) -> str | None:
    """Why the SDK would drop ``line`` (its first validation error), or None when it reads it."""
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return None


def _mended(value: Any) -> Any:
    """``value`` (parsed JSON) with each lone surrogate of its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return "".join("\ufffd" if ord(c) in _SURROGATES else c for c in value) if not value.isascii() else value
    if isinstance(value, list):
        return [_mended(item) for item in value]
    if isinstance(value, dict):
        return {_mended(k): _mended(v) for k, v in value.items()}
    return value


def check_line(line: str) -> tuple[str | None, str | None]:
    """One line from the client: the line to hand the SDK (None: drop it), and the answer owed for it (a
    JSON-RPC error line for a request the SDK would drop), if any."""
    if not line.strip():
        return None, None
    problem = _valid(line)
    if problem is None:
        return line, None
    try:
        data = json.loads(line)
        mended = json.dumps(_mended(data), ensure_ascii=False) + "\n"
    except RecursionError:  # nested deeper than Python parses: answered if the id comes before the nesting
        data, mended = {"method": "?", "id": _shallow_id(line)}, ""
        problem = "nested too deep"
    except ValueError as exc:
        log.warning("MCP: a line that is not JSON was dropped (%s)", exc)
        return None, None
    if mended and _valid(mended) is None:
        log.info("MCP: lone surrogates in a message were replaced by U+FFFD")
        return mended, None
    msg_id = data.get("id") if isinstance(data, dict) and "method" in data else None
    if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        log.warning("MCP: a message nobody waits on was dropped (%s)", problem)
        return None, None
    message = f"not a valid JSON-RPC 2.0 request: {problem}"
    log.warning("MCP: request %r answered with InvalidRequest: %s", msg_id, message)
    error = {"code": INVALID_REQUEST, "message": message, "data": dump(ErrorData(kind="bad_request", message=message))}
    return None, json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error}) + "\n"


_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def _shallow_id(line: str) -> int | str | None:
    """The request id of a line too deep to parse, when it stands before the first nested value."""
    found = _ID.search(line[: line.find("[") if "[" in line else 2000][:2000])
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


class _Wire:
    """The client's end of stdout, written one whole line at a time (the SDK's answers and ``check_line``'s
    share it)."""

    def __init__(self, raw: BinaryIO) -> None:
        self._file = anyio.wrap_file(io.TextIOWrapper(raw, encoding="utf-8", write_through=True))
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._file.write(text)
            await self._file.flush()

    async def flush(self) -> None:
        """Each write flushes already."""


async def _checked(wire_in: BinaryIO, out: _Wire) -> AsyncIterator[str]:
    """The client's lines as the SDK reads them (``check_line``); owed answers are written to ``out``."""
    async for line in anyio.wrap_file(io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace")):
        passed, answer = check_line(line)
        if answer is not None:
            await out.write(answer)
        if passed is not None:
            yield passed


class BotbinMCPServer(MCPServer):
    """The SDK's server; stdio goes through ``check_line``, refused tool calls carry a kind."""

    async def run_stdio_async(self) -> None:
        """Serve on stdio. Like the SDK's transport, fd 1 (and ``sys.stdout``) point at stderr meanwhile, so a
        stray print, even from native code, never lands in the protocol stream."""
        sys.stdout.flush()
        wire_out = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
        out = _Wire(wire_out)
        stdin = cast(Any, _checked(sys.stdin.buffer, out))  # the SDK iterates its stdin: `async for line in`
        try:
            async with stdio_server(stdin=stdin, stdout=cast(Any, out)) as (read_stream, write_stream):
                server = self._lowlevel_server
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            os.dup2(wire_out.fileno(), 1)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        """The SDK's tool call; a call it refuses (kind ``bad_request``) or a tool that crashes (``internal``)
        is a tool error with structured content ``{kind, message}``."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            internal = isinstance(exc, UnexpectedToolError)
            if internal:
                log.error("tool %s failed", name, exc_info=exc.__cause__)
            payload = dump(ErrorData(kind="internal" if internal else "bad_request", message=str(exc)))
            return CallToolResult(
                content=[TextContent(type="text", text=str(exc))], structured_content=payload, is_error=True
            )
