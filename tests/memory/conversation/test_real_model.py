"""The real all-MiniLM-L6-v2 on real conversation text (LoCoMo, read in place from ../shared), a real MCP client
session calling observe_turn, and SIGTERM to ``botbin mcp`` mid-buffer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from botbin.memory.conversation.observer import TurnObserver
from botbin.memory.conversation.turns import Turn, turn_from_object
from botbin.service import MemoryService
from botbin.wire.requests import ContextRequest, SearchRequest
from conftest import SHARED, needs_shared

pytestmark = pytest.mark.model
LOCOMO = SHARED / "data" / "locomo" / "locomo10.json"
PLANTED = "By the way, my sister's dog is called Pretzel, a tiny beagle who steals socks."


def _locomo_turns(sessions: int) -> list[Turn]:
    conv = json.loads(LOCOMO.read_text(encoding="utf-8"))[0]["conversation"]
    turns: list[Turn] = []
    for n in range(1, sessions + 1):
        for t in conv[f"session_{n}"]:
            row = {
                "role": t["speaker"],
                "content": t["text"],
                "session": n,
                "user": "caroline",
                "timestamp": conv[f"session_{n}_date_time"],
            }
            turns.append(turn_from_object(row)[0])
    return turns


@needs_shared
def test_locomo_conversation_then_planted_fact_is_found(tmp_path: Path, real_embedder: Any) -> None:
    turns = _locomo_turns(3)
    turns.insert(20, Turn("Caroline", PLANTED, "caroline", "1", turns[19].timestamp))
    service = MemoryService(tmp_path / "ws", embedder=real_embedder, env={})
    observer = TurnObserver(service.ws)
    results = list(observer.observe_all(turns))
    observer.flush()
    assert not service.sync().failed
    assert 0 < observer.stats.admitted < len(turns)  # the gate lets facts in and keeps small talk out
    soul = (service.root / "memory/soul/caroline.md").read_text(encoding="utf-8")
    assert "- Caroline: " + PLANTED in soul
    assert "- Caroline: I went to a LGBTQ support group yesterday and it was so powerful." in soul
    assert results[-1].turn_number == len(turns)
    for query, words in [
        ("what is the name of my sister's dog", "Pretzel"),
        ("When did Caroline go to the LGBTQ support group?", "LGBTQ support group"),
    ]:
        hit = service.search(SearchRequest(query=query, k=1, show_all=True)).hits[0]
        assert hit.path == "memory/soul/caroline.md" and words in hit.text
    again = TurnObserver(service.ws)  # the same conversation again: nothing new
    list(again.observe_all(turns))
    again.flush()
    assert again.stats.blocks_written == 0
    assert (service.root / "memory/soul/caroline.md").read_text(encoding="utf-8") == soul


def _text(result: Any) -> str:
    """The text of a tool result's first content item (an error's message)."""
    return str(result.content[0].text)


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content or json.loads(result.content[0].text))


async def test_observe_turn_over_a_real_mcp_session(tmp_path: Path, real_embedder: Any) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    params = StdioServerParameters(command=sys.executable, args=["-m", "botbin", "mcp", "--workspace", str(root)])
    talk = [
        ("user", "My sister's dog is called Pretzel."),
        ("assistant", "Pretzel is a lovely name for a dog!"),
        ("user", "Never give Pretzel the dog any chocolate, remember that."),
        ("assistant", "Understood: no chocolate for Pretzel the dog."),
        ("user", "Pretzel the dog is a beagle who loves the beach."),
    ]
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name for t in (await session.list_tools()).tools}
        assert "observe_turn" in tools
        replies = [
            _data(
                await session.call_tool("observe_turn", {"role": role, "content": text, "user": "Ana", "session": "s1"})
            )
            for role, text in talk
        ]
        assert [r["turn"] for r in replies] == [1, 2, 3, 4, 5] and replies[0]["soulFile"] == "memory/soul/ana.md"
        assert [r["protected"] for r in replies] == [False, False, True, False, False]
        blocks = [b for r in replies for b in r["distilled"]]  # a full buffer, or drift, distilled at least one
        assert blocks and all(b["status"] == "written" for b in blocks)
        assert blocks[0]["text"].startswith("## [Turns 1-") and " session s1 · " in blocks[0]["text"]
        assert "- Never give Pretzel the dog any chocolate, remember that. _(Ana: rule, verbatim)_" in (
            root / "memory/soul/ana.md"
        ).read_text(encoding="utf-8")
        found = _data(await session.call_tool("search_memory", {"query": "what is my sister's dog called", "k": 1}))
        assert found["hits"][0]["path"] == "memory/soul/ana.md" and "Pretzel" in found["hits"][0]["text"]
        # the rule said in conversation reaches the guidance tier of a related request (issue 19)
        context = _data(
            await session.call_tool(
                "get_context", {"query": "can I give Pretzel some chocolate", "budget_tokens": 1000}
            )
        )
        guidance = next(t for t in context["tiers"] if t["name"] == "guidance")
        assert any("Never give Pretzel the dog any chocolate" in i["text"] for i in guidance["items"]), guidance
        bad = await session.call_tool("observe_turn", {"role": "user", "content": "x", "timestamp": "soon"})
        assert bad.is_error and "ISO 8601" in _text(bad)


def _rpc(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> dict[str, Any] | None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    if "id" not in message:
        return None
    while True:
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        reply: dict[str, Any] = json.loads(line)
        if reply.get("id") == message["id"]:
            return reply


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_mcp_server_distils_the_buffer(tmp_path: Path, sig: signal.Signals) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "botbin", "mcp", "--workspace", str(root)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
        )
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        for n, text in enumerate(["My sister's dog is called Pretzel.", "Pretzel the beagle loves the beach."], 2):
            reply = _rpc(
                proc,
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "observe_turn", "arguments": {"role": "user", "content": text, "user": "Ana"}},
                },
            )
            assert reply is not None and not reply["result"].get("isError"), reply
        assert not (root / "memory/soul/ana.md").exists()  # two turns wait in the buffer
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    soul = (root / "memory/soul/ana.md").read_text(encoding="utf-8")
    assert "## [Turns 1-2]" in soul and "- Ana: My sister's dog is called Pretzel." in soul


def _observed_rule(tmp_path: Path, real_embedder: Any, rule: str) -> MemoryService:
    service = MemoryService(tmp_path / "ws", embedder=real_embedder, env={})
    observer = TurnObserver(service.ws)
    results = list(
        observer.observe_all(
            [Turn("user", "I just moved to Lisbon.", "ana", "1", None), Turn("user", rule, "ana", "1", None)]
        )
    )
    observer.flush()
    assert results[-1].protected and not service.sync().failed
    return service


RULE = "From now on, never schedule meetings for me before 10:00."


def test_a_conversation_rule_is_a_rule_of_the_soul_file(tmp_path: Path, real_embedder: Any) -> None:
    """Issue 19: observe_turn's rule is written so that the lexer and the partition see it as a rule."""
    from botbin.directives.partition import partition_source

    service = _observed_rule(tmp_path, real_embedder, RULE)
    soul = (service.root / "memory/soul/ana.md").read_text(encoding="utf-8")
    _, part = partition_source(soul, "memory/soul/ana.md")
    assert [(d.kind, d.modality) for d in part.directives] == [("soft", "prohibition")]
    assert RULE in part.directives[0].text
    indexed = [d for d in service.index()[0].directives() if d.path == "memory/soul/ana.md"]
    assert [(d.kind, d.modality) for d in indexed] == [("soft", "prohibition")]


def test_a_conversation_rule_reaches_the_guidance_tier(tmp_path: Path, real_embedder: Any) -> None:
    service = _observed_rule(tmp_path, real_embedder, RULE)
    context = service.context(ContextRequest(query="book a meeting with Priya tomorrow morning", budget_tokens=1000))
    guidance = next(t for t in context.tiers if t.name == "guidance")
    assert [i.path for i in guidance.items] == ["memory/soul/ana.md"] and RULE in guidance.items[0].text
    unrelated = service.context(ContextRequest(query="what is the capital of Peru", budget_tokens=1000))
    assert not next(t for t in unrelated.tiers if t.name == "guidance").items
