"""A real MCP client session (the SDK's own client) over stdio with ``botbin mcp`` on a synced workspace copy."""

from __future__ import annotations

import json
import shutil
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from lsp.conftest import EXAMPLES

pytestmark = pytest.mark.model


@pytest.fixture
def workspace(tmp_path: Path, real_embedder: Any) -> Path:
    from botbin.service import MemoryService

    root = tmp_path / "workspace"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("aifbin"))
    (root / "AGENTS.md").write_text(
        "# Rules for the assistant\n\n- Never answer in prose: reply in bullet points.\n", encoding="utf-8"
    )
    MemoryService(root, embedder=real_embedder, env={}).sync()
    return root


def _text(result: Any) -> str:
    """The text of a tool result's first content item (an error's message)."""
    return str(result.content[0].text)


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


async def test_every_tool_over_a_real_session(workspace: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "botbin", "mcp", "--workspace", str(workspace)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {
            "search_memory",
            "remember",
            "get_context",
            "memory_status",
            "observe_turn",
            "expand_memory",
        }
        assert all(t.description and t.input_schema.get("properties") is not None for t in tools.values())
        assert "query" in tools["search_memory"].input_schema["required"]

        found = _data(await session.call_tool("search_memory", {"query": "which database did we choose", "k": 3}))
        assert len(found["hits"]) == 3 and all(0 <= h["score"] <= 1 for h in found["hits"])

        saved = _data(
            await session.call_tool(
                "remember", {"text": "We picked the otter logo for v2.", "tags": ["decision", "branding"]}
            )
        )
        today = datetime.now().astimezone().strftime("%Y-%m-%d")
        assert saved["path"] == f"memory/{today}.md" and saved["indexed"] is True
        note = (workspace / saved["path"]).read_text(encoding="utf-8")
        assert "We picked the otter logo for v2. #decision #branding" in note
        again = _data(await session.call_tool("search_memory", {"query": "otter logo", "k": 1}))
        assert again["hits"][0]["path"] == saved["path"]

        # the user's rule reaches the context of an unrelated request
        context = _data(
            await session.call_tool("get_context", {"query": "summarize the SMS provider work", "budget_tokens": 3000})
        )
        assert "Never answer in prose" in context["text"]
        assert context["usedTokens"] <= 3000
        assert [t["name"] for t in context["tiers"]] == ["hard", "guidance", "soft", "recent", "recalled"]
        assert "otter logo" in context["text"]  # today's note is the recent tail

        status = _data(await session.call_tool("memory_status", {}))
        assert status["files"] == 17

        # 5, not 50: MEMORY.md's 39 items are no longer hard rules (issue 19), the one AGENTS.md rule fits 50
        too_small = await session.call_tool("get_context", {"query": "anything", "budget_tokens": 5})
        assert too_small.is_error and "hard rules" in _text(too_small)
        empty = await session.call_tool("search_memory", {"query": "  "})
        assert empty.is_error and "empty" in _text(empty)
        bad_tag = await session.call_tool("remember", {"text": "x", "tags": ["two words"]})
        assert bad_tag.is_error and "tag" in _text(bad_tag)


async def test_tool_schemas_tell_a_model_how_to_call_them(workspace: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "botbin", "mcp", "--workspace", str(workspace)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        from botbin import __version__

        assert init.server_info.name == "botbin" and init.server_info.version == __version__
        tools = {t.name: t.input_schema["properties"] for t in (await session.list_tools()).tools}
        assert all(p.get("description") for props in tools.values() for p in props.values())
        search = tools["search_memory"]
        assert search["k"]["minimum"] == 1 and search["k"]["maximum"] >= 50
        assert {"enum": ["hard", "soft", "lore"], "type": "string"} in search["kind"]["anyOf"]
        bad_date = await session.call_tool("search_memory", {"query": "database", "date_from": "last week"})
        assert bad_date.is_error and "date_from" in str(bad_date.content[0])
        assert search["k"]["default"] == 5 and tools["get_context"]["budget_tokens"]["minimum"] == 1
        # the typed request's rule and message on this surface too: no coercion of "5" or true, no pydantic dump
        for k in (0, 1001, True, "5", 2.5):
            bad_k = await session.call_tool("search_memory", {"query": "database", "k": k})
            assert bad_k.is_error and _text(bad_k) == f"k must be a whole number from 1 to 1000, not {k!r}"
        for budget in (0, "100", 10**30):
            bad = await session.call_tool("get_context", {"query": "database", "budget_tokens": budget})
            assert bad.is_error and _text(bad).startswith("budget_tokens must be a whole number of tokens from 1 to ")
        no_day = await session.call_tool("search_memory", {"query": "database", "date_from": "2026-02-30"})
        assert no_day.is_error and _text(no_day) == "date_from names a day the calendar lacks: '2026-02-30'"
        bad_kind = await session.call_tool("search_memory", {"query": "database", "kind": "rules"})
        assert bad_kind.is_error and _text(bad_kind) == "kind must be 'hard', 'soft' or 'lore', not 'rules'"
        assert _data(await session.call_tool("search_memory", {"query": "database"}))["hits"]


async def test_the_first_context_of_a_never_synced_workspace_has_every_rule(tmp_path: Path) -> None:
    """No sleep and no wait for the start-up sync: the rules are read from the notes themselves."""
    root = tmp_path / "fresh"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("aifbin"))
    (root / "AGENTS.md").write_text(
        "# Rules\n\n- Never answer in prose.\n- Always cite the note you used.\n", encoding="utf-8"
    )
    params = StdioServerParameters(command=sys.executable, args=["-m", "botbin", "mcp", "--workspace", str(root)])
    errors = tmp_path / "stderr.log"
    with errors.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            context = _data(
                await session.call_tool("get_context", {"query": "what is the capital of Peru", "budget_tokens": 400})
            )
    assert "Never answer in prose" in context["text"] and "Always cite the note you used" in context["text"]
    hard = next(t for t in context["tiers"] if t["name"] == "hard")
    assert [i["path"] for i in hard["items"]][:2] == ["AGENTS.md", "AGENTS.md"]
    if context["indexing"]:
        assert set(context["partialTiers"]) == {"guidance", "recalled"}
    # the client left while the start-up sync may still run: the server exits without aborting in native code
    assert "terminate called" not in errors.read_text()


async def test_the_first_search_of_a_never_synced_workspace_waits_for_its_notes(tmp_path: Path) -> None:
    """Sent right after initialize: the index is still empty, so the search waits for the start-up sync instead of
    answering "no memory" (the old answer: no hits, no warning)."""
    root = tmp_path / "fresh"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("aifbin"))
    params = StdioServerParameters(command=sys.executable, args=["-m", "botbin", "mcp", "--workspace", str(root)])
    errors = tmp_path / "stderr.log"
    with errors.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            found = _data(await session.call_tool("search_memory", {"query": "which database did we choose", "k": 3}))
    assert found["hits"], found
    assert found["indexing"] == any("still indexing" in w for w in found["warnings"])
    assert "terminate called" not in errors.read_text()
