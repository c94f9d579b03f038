"""End to end, settings and failures: bad settings, configuration changes, conflicting rules as diagnostics,
an unavailable model, a damaged AIF-BIN file, handler errors, several workspace folders."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from botbin.aifbin import decode
from botbin.embedding import bundled_model_path
from botbin.service import MemoryService
from lsp.conftest import progress_ended, request, serve, wait_until

pytestmark = pytest.mark.model


async def test_bad_settings_fall_back_with_one_message(workspace: Path) -> None:
    async with serve([workspace], {"alpha": 5, "topK": "many", "noSuchKey": 1}) as client:
        warnings = [m for m in client.messages if m.type == types.MessageType.Warning]
        assert len(warnings) == 1
        assert "alpha" in warnings[0].message and "top_k" in warnings[0].message
        result = await request(client, "botbin/search", {"query": "database", "showAll": True})
        assert len(result["hits"]) == 10  # top_k fell back to its default


async def test_configuration_change_reindexes_with_new_globs(workspace: Path) -> None:
    async with serve([workspace]) as client:
        before = (await request(client, "botbin/status", {}))["files"]
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"botbin": {"exclude": ["memory/2026-11-0*.md"]}})
        )
        await wait_until(
            lambda: progress_ended(client, 2),
            what="a second sync",
        )
        status = await request(client, "botbin/status", {})
        assert status["files"] < before
        paths = {h["path"] for h in (await request(client, "botbin/search", {"query": "alerts", "k": 20}))["hits"]}
        assert not any(p.startswith("memory/2026-11-0") for p in paths)


async def test_conflicting_rules_are_published_as_diagnostics(workspace: Path) -> None:
    agents = workspace / "AGENTS.md"
    agents.write_text("# Agent rules\n\n- Always commit secrets to the repo.\n", encoding="utf-8")
    async with serve([workspace]) as client:
        uri, memory_uri = agents.as_uri(), (workspace / "MEMORY.md").as_uri()
        await wait_until(
            lambda: client.diagnostics.get(uri) and client.diagnostics.get(memory_uri),
            what="diagnostics on AGENTS.md and MEMORY.md",
        )
        diagnostics = client.diagnostics[uri]
        assert len(diagnostics) == 1 and len(client.diagnostics[memory_uri]) == 1
        (diagnostic,) = diagnostics
        assert diagnostic.severity == types.DiagnosticSeverity.Warning and diagnostic.source == "botbin"
        assert "Never commit secrets" in diagnostic.message and diagnostic.range.start.line == 2
        related = diagnostic.related_information
        assert related and related[0].location.uri == memory_uri
        # fixing the rule clears both after the save
        agents.write_text("# Agent rules\n\n- Keep secrets in .env.local.\n", encoding="utf-8")
        client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
        await wait_until(
            lambda: len(client.diagnostics.get(uri, ())) == 0 and len(client.diagnostics.get(memory_uri, ())) == 0,
            what="the diagnostics to clear",
        )


async def test_unavailable_model_degrades_to_keyword_search(tmp_path: Path) -> None:
    """The model folder the index was built with is gone (a wrong ``model`` setting is only refused, and the index
    keeps its model: tests/migration): searches fall back to keywords, and one message says why."""
    root, model = tmp_path / "ws", tmp_path / "mini"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "decisions.md").write_text("# Decisions\n\nWe chose Postgres over SQLite.\n", encoding="utf-8")
    (root / "botbin.toml").write_text(f"model = {json.dumps(str(model))}\n", encoding="utf-8")
    shutil.copytree(bundled_model_path(), model)
    MemoryService(root).sync()
    shutil.rmtree(model)
    async with serve([root], wait=False) as client:
        await wait_until(lambda: [m for m in client.messages if "model" in m.message.lower()], what="a model message")
        result = await request(client, "botbin/search", {"query": "Postgres"})
        assert result["degraded"] is True and result["hits"]
        status = await request(client, "botbin/status", {})
        assert status["degraded"] is True
        await asyncio.sleep(0.5)
        assert len([m for m in client.messages if "model" in m.message.lower()]) == 1


async def test_damaged_aifbin_is_rebuilt_from_its_note(workspace: Path) -> None:
    output = workspace / "memory" / "aifbin" / "memory" / "2026-11-17.aif-bin"
    data = bytearray(output.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size: only decoding notices
    output.write_bytes(bytes(data))
    async with serve([workspace]) as client:
        decode(output.read_bytes(), str(output))  # raises if still damaged
        result = await request(client, "botbin/search", {"query": "SMS verification code", "k": 5})
        assert "memory/2026-11-17.md" in {h["path"] for h in result["hits"]}


async def test_a_bad_request_is_answered_and_the_server_lives_on(workspace: Path) -> None:
    async with serve([workspace]) as client:
        for bad in ({"query": ""}, {"query": "x", "k": 0}, {"query": "x", "filters": {"kind": "nope"}}):
            with pytest.raises(JsonRpcException):
                await request(client, "botbin/search", bad)
        with pytest.raises(JsonRpcException):
            await request(client, "botbin/related", {"uri": "file:///nowhere.md", "position": {"line": 0}})
        assert (await request(client, "botbin/search", {"query": "Postgres"}))["hits"]


async def test_several_workspace_folders_are_searched_together(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "second"
    (other / "memory").mkdir(parents=True)
    (other / "memory" / "garden.md").write_text(
        "# Garden\n\nThe tomatoes need watering every evening.\n", encoding="utf-8"
    )
    async with serve([workspace, other]) as client:
        await wait_until(
            lambda: progress_ended(client, 2),
            what="both folders",
        )
        result = await request(client, "botbin/search", {"query": "watering tomatoes", "k": 3})
        assert result["hits"][0]["uri"] == (other / "memory" / "garden.md").as_uri()
        status = await request(client, "botbin/status", {})
        assert len(status["folders"]) == 2 and status["files"] == 17  # the examples hold AGENTS.md (issue 19)


async def test_requests_answer_while_indexing(tmp_path: Path) -> None:
    import shutil

    from lsp.conftest import EXAMPLES

    root = tmp_path / "cold"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("aifbin"))
    async with serve([root], wait=False) as client:
        await wait_until(lambda: client.progress_reports, what="indexing to begin")
        during = await request(client, "botbin/search", {"query": "database"})
        assert during["indexing"] is True  # answered now, with what is indexed so far
        await wait_until(lambda: progress_ended(client), what="indexing to end")
        after = await request(client, "botbin/search", {"query": "database"})
        assert after["indexing"] is False and after["hits"]


def test_tcp_mode_serves_lsp(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "botbin", "lsp", "--tcp", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline, "the TCP server never listened"
                time.sleep(0.1)
        body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"processId":null}}'
        conn.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        conn.settimeout(20)
        reply = b""
        while b'"serverInfo"' not in reply:
            chunk = conn.recv(65536)
            assert chunk, "connection closed before the initialize result"
            reply += chunk
        assert b'"name":"botbin"' in reply.replace(b" ", b"")
        conn.close()
    finally:
        server.kill()
        server.wait()


async def test_context_and_remember_over_lsp(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("# Rules\n\n- Never answer in prose.\n", encoding="utf-8")
    async with serve([workspace]) as client:
        saved = await request(
            client, "botbin/remember", {"text": "The capybara dashboard theme shipped.", "tags": ["release"]}
        )
        assert saved["path"].startswith("memory/") and saved["uri"].endswith(saved["path"])
        context = await request(client, "botbin/context", {"query": "what shipped today", "budgetTokens": 3000})
        assert "Never answer in prose" in context["text"] and "capybara" in context["text"]
        assert context["usedTokens"] <= 3000
        with pytest.raises(JsonRpcException):
            await request(client, "botbin/context", {"query": "x", "budgetTokens": 5})
        with pytest.raises(JsonRpcException):
            await request(client, "botbin/remember", {"text": "   "})


async def test_no_workspace_folder_is_said_once() -> None:
    async with serve([], wait=False) as client:
        await wait_until(lambda: client.messages, what="a message")
        assert "no workspace folder" in client.messages[0].message
        assert (await request(client, "botbin/search", {"query": "anything"}))["hits"] == []
