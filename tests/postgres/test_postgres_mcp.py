"""The MCP server works unchanged on the postgres backend: a real MCP session over stdio searches the team
database (hits carry their namespace), and ``remember`` syncs, publishes and is found there."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from botbin.service import MemoryService

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.model


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


async def test_mcp_searches_and_remembers_through_postgres(fresh_db: str, tmp_path: Path, real_embedder: Any) -> None:
    root = tmp_path / "team-mcp"
    shutil.copytree(REPO / "examples" / "workspace", root)
    (root / "botbin.toml").write_text('backend = "postgres"\n', encoding="utf-8")
    env = {"BOTBIN_POSTGRES_URL": fresh_db}
    svc = MemoryService(root, embedder=real_embedder, env=env)
    svc.team.init()
    svc_synced = svc.sync()
    assert (
        svc_synced.publish_error is None
        and svc_synced.published is not None
        and len(svc_synced.published.published) == 16
    )
    server_env = {**os.environ, **env, "PYTHONPATH": str(REPO / "server")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "botbin", "mcp", "--workspace", str(root)], env=server_env
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        found = _data(await session.call_tool("search_memory", {"query": "which chart library did we pick", "k": 3}))
        assert found["hits"][0]["path"] == "memory/2026-11-09.md"
        assert {h["namespace"] for h in found["hits"]} == {"team-mcp"}
        saved = _data(await session.call_tool("remember", {"text": "We picked the otter logo for v2."}))
        assert saved["indexed"] is True
        again = _data(await session.call_tool("search_memory", {"query": "otter logo", "k": 1}))
        assert again["hits"][0]["path"] == saved["path"] and again["hits"][0]["namespace"] == "team-mcp"
    remote = svc.ws.remote
    assert remote is not None and saved["path"] in remote.published()  # published by the server's sync
