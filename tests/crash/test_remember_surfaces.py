"""50 concurrent ``remember`` calls from three surfaces at once on one workspace: two real MCP client sessions
(the SDK's client, ``botbin mcp`` over stdio), the real language server over stdio (``botbin/remember``) and
``botbin remember`` CLI processes. Issue 36 failure 2: every call said it was saved, and 13-20 of 30 MCP
entries, 3 of 20 LSP ones and 3-5 of 10 CLI ones were missing from the note.

Promises checked: every call reports success (MCP ``indexed``, an LSP result, CLI exit 0), every entry is in
today's note exactly once, and a search of the workspace afterwards finds each surface's entries.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from botbin.wire.requests import SearchRequest
from lsp.conftest import request, serve

pytestmark = [pytest.mark.crash, pytest.mark.model]
MCP_SESSIONS, PER_SESSION, LSP_CALLS, CLI_CALLS = 2, 10, 20, 10
#: Every process waits for the others' syncs rather than giving up after the default 10 s on 2 busy cores.
PATIENT = {"BOTBIN_LOCK_TIMEOUT_S": "300", "HF_HUB_OFFLINE": "1"}


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}, **PATIENT}


async def _mcp_session(root: Path, session_no: int, go: asyncio.Event) -> list[dict[str, Any]]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "botbin", "mcp", "--workspace", str(root)], env=_env()
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await go.wait()
        calls = [
            session.call_tool("remember", {"text": f"mcp session {session_no} entry {n}: the quokka ledger"})
            for n in range(PER_SESSION)
        ]
        results = await asyncio.gather(*calls)
    out = []
    for result in results:
        assert not result.is_error and result.structured_content is not None, result.content
        out.append(dict(result.structured_content))
    return out


async def _cli(root: Path, n: int, go: asyncio.Event) -> tuple[int, str]:
    await go.wait()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "botbin",
        "remember",
        "--workspace",
        str(root),
        f"cli entry {n}: the wombat roster",
        env=_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    return proc.returncode or 0, err.decode()


async def test_fifty_concurrent_remembers_from_three_surfaces_lose_nothing(
    tmp_path: Path, real_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botbin.service import MemoryService

    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "team.md").write_text("# Team\n\nAna leads the platform team.\n", encoding="utf-8")
    MemoryService(root, embedder=real_embedder, env={}).sync()
    for key, value in PATIENT.items():
        monkeypatch.setenv(key, value)  # the language server inherits the test's environment
    go = asyncio.Event()
    async with serve([root]) as lsp:
        mcp = [asyncio.create_task(_mcp_session(root, s, go)) for s in range(MCP_SESSIONS)]
        cli = [asyncio.create_task(_cli(root, n, go)) for n in range(CLI_CALLS)]
        await asyncio.sleep(8)  # the MCP servers start (model and index load) before the burst
        go.set()
        over_lsp = await asyncio.gather(
            *(request(lsp, "botbin/remember", {"text": f"lsp entry {n}: the axolotl budget"}) for n in range(LSP_CALLS))
        )
        saved_mcp = [r for task in mcp for r in await task]
        cli_runs = [await task for task in cli]
    assert [code for code, _ in cli_runs] == [0] * CLI_CALLS, [err for _, err in cli_runs]
    assert len(saved_mcp) == MCP_SESSIONS * PER_SESSION and all(r["indexed"] for r in saved_mcp)
    assert len(over_lsp) == LSP_CALLS and all(r["path"].startswith("memory/") for r in over_lsp)
    daily = {r["path"] for r in [*saved_mcp, *over_lsp]}
    lines = [line for rel in sorted(daily) for line in (root / rel).read_text(encoding="utf-8").splitlines()]
    entries = sorted(line[8:] for line in lines if line.startswith("- "))
    expected = sorted(
        [f"mcp session {s} entry {n}: the quokka ledger" for s in range(MCP_SESSIONS) for n in range(PER_SESSION)]
        + [f"lsp entry {n}: the axolotl budget" for n in range(LSP_CALLS)]
        + [f"cli entry {n}: the wombat roster" for n in range(CLI_CALLS)]
    )
    lost = sorted(set(expected) - set(entries))
    print(f"entries expected {len(expected)}, found {len(entries)}, lost {len(lost)}")
    assert entries == expected, f"lost: {lost}"
    service = MemoryService(root, embedder=real_embedder, env={})
    service.sync()
    for query in ("quokka ledger", "axolotl budget", "wombat roster"):
        assert service.search(SearchRequest(query=query, k=1, show_all=True)).hits[0].path in daily
