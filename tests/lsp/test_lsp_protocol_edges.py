"""Issue 36, the protocol edges of ``botbin lsp`` over real stdio: a request after ``shutdown`` gets InvalidRequest
(and ``exit`` then ends with 0); a malformed header ends the connection (status 1, the reason on stderr) where the
server used to stay up and never answer; a message that is not a JSON-RPC 2.0 request is answered; a change to a
document never opened is ignored without a "KeyError" shown to the user; hostile custom-request params get an
error with a kind, never an internal error or no answer. About 60 s (servers without a folder start in ~3 s)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from botbin.wire.errors import ERROR_KINDS
from lsp.conftest import SERVER, request, serve, start
from lsp.raw import RawClient

STATUS = {"id": 9, "method": "botbin/status", "params": {}}


async def test_a_request_after_shutdown_gets_invalid_request_and_exit_ends_with_0(workspace: Path) -> None:
    client = await ClientServerConfig(server_command=SERVER).start()
    assert isinstance(client, LanguageClient)
    try:
        await start(client, "neovim", [workspace])
        await client.shutdown_async(None)
        asks = (
            lambda: client.protocol.send_request_async("botbin/status", {}),
            lambda: client.workspace_symbol_async(types.WorkspaceSymbolParams(query="lint")),
            lambda: client.shutdown_async(None),
        )
        for ask in asks:
            with pytest.raises(JsonRpcException) as caught:
                await asyncio.wait_for(ask(), 30)
            assert caught.value.code == -32600, caught.value
            data = caught.value.data
            assert isinstance(data, dict) and data["kind"] == "bad_request" and "after shutdown" in caught.value.message
        client.exit(None)
        assert client._server is not None
        assert await asyncio.wait_for(client._server.wait(), 30) == 0
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
        await client.stop()


def _request(message: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


MALFORMED = {
    "a length that is not a number": b"Content-Length: abc\r\n\r\n{}",
    "a negative length": b"Content-Length: -5\r\n\r\n{}",
    "a huge length": b"Content-Length: 99999999999\r\n\r\n{}",
    "a header with no body, then a request": b"Content-Length: 40\r\n\r\n" + _request(STATUS),
    "garbage bytes": b"\x00\xff\xfe garbage\r\n\r\n",
    "a header block without Content-Length": b"Content-Type: application/json\r\n\r\n{}",
    "a line with no end": b"Content-Length: 2" + b"0" * 10_000,
    "a body nested deeper than Python parses (its request could never be answered)": _framed(
        b'{"jsonrpc": "2.0", "id": 3, "method": "botbin/status", "params": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_header_ends_the_connection_with_status_1(case: str, tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        client = RawClient(tmp_path, stderr=stderr)
        try:
            client.initialize(folder=False)
            started = time.monotonic()
            client.write(MALFORMED[case])
            with pytest.raises(AssertionError, match="closed its output"):
                client.send(STATUS)
                client.answer(9, timeout_s=30)
            assert client.proc.wait(timeout=30) == 1
            assert time.monotonic() - started < 30
        except BrokenPipeError:  # it left before the request could be sent
            assert client.proc.wait(timeout=30) == 1
        finally:
            client.close()
    text = log.read_bytes().decode("utf-8", "replace")
    assert "the LSP connection is closed" in text and "MemoryError" not in text


def test_headers_spelled_another_way_are_read(tmp_path: Path) -> None:
    client = RawClient(tmp_path)
    try:
        client.initialize(folder=False)
        body = json.dumps({"jsonrpc": "2.0", **STATUS}).encode()
        client.write(b"content-length:%d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n" % len(body))
        client.write(body)
        assert "result" in client.answer(9, timeout_s=30)
    finally:
        client.close()


def test_messages_that_are_no_request_are_answered(tmp_path: Path) -> None:
    client = RawClient(tmp_path)
    try:
        client.send({"id": 2, "method": "botbin/status", "params": {}})
        assert client.answer(2)["error"]["code"] == -32002  # before initialize: ServerNotInitialized
        client.initialize(folder=False)
        cases: list[dict[str, Any]] = [
            {"id": 3, "method": "botbin/status", "params": {}, "jsonrpc": "1.0"},
            {"id": 4, "method": 5},
            {"id": 5, "method": ["botbin/status"]},
            {"id": 6, "method": "$/cancelRequest", "params": {"id": 6}},  # a notification's method, with an id
        ]
        for message in cases:
            client.send(message)
            error = client.answer(message["id"])["error"]
            assert error["code"] == -32600 and error["data"]["kind"] == "bad_request", error
        raw = json.dumps({"id": 7, "method": "botbin/status", "params": {}}).encode()  # no "jsonrpc"
        client.write(b"Content-Length: %d\r\n\r\n" % len(raw) + raw)
        assert client.answer(7)["error"]["code"] == -32600
        for junk in (b"[1, 2]", b'"x"', b'{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1]}}'):
            client.write(b"Content-Length: %d\r\n\r\n" % len(junk) + junk)
        client.send({"id": 8, "method": "botbin/status"})  # params left out, as JSON-RPC allows
        assert "result" in client.answer(8)
    finally:
        client.close()


async def test_unknown_documents_are_ignored_quietly(workspace: Path) -> None:
    ghost = (workspace / "memory" / "never-opened.md").as_uri()
    async with serve([workspace], profile="neovim") as client:
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=ghost, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="# Ghost\n\nboo\n")],
            )
        )
        client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=ghost)))
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=ghost)))
        position = types.Position(line=0, character=0)
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri=ghost), position)
        )
        assert hover is None
        # an open document still takes its changes
        note = workspace / "MEMORY.md"
        uri = note.as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", 1, note.read_text("utf-8")))
        )
        text = "# Broker\n\nThe alerts travel over NATS JetStream.\n"
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(line=2, character=5))
        )
        assert hover is not None
        await request(client, "botbin/status", {})
        await asyncio.sleep(0.5)
        shown = [m.message for m in client.messages if m.type == types.MessageType.Error]
        assert shown == [] and not any("KeyError" in m.message for m in client.messages)


HOSTILE: list[tuple[str, Any]] = [
    ("botbin/search", "x"),
    ("botbin/search", {"query": 5}),
    ("botbin/search", {"query": "x", "k": 10**30}),
    ("botbin/search", {"query": "x", "filters": {"tag": ["a"]}}),
    ("botbin/search", {"query": "x", "bestPerNote": "yes"}),
    ("botbin/context", "x"),
    ("botbin/context", {"query": ["x"]}),
    ("botbin/context", {"query": "x", "budgetTokens": "2000"}),
    ("botbin/context", {"query": "x", "uri": 5}),
    ("botbin/remember", 5),
    ("botbin/remember", {"text": {"a": 1}}),
    ("botbin/remember", {"text": "x", "tags": "a"}),
    ("botbin/remember", {"text": "x", "uri": [1]}),
    ("botbin/related", "x"),
    ("botbin/related", {"text": "x", "uri": 5}),
    ("botbin/related", {"uri": "file:///nowhere.md", "position": {"line": 0, "character": 0}}),
    ("botbin/related", {"uri": "file:///nowhere.md", "position": {"line": 10**12, "character": -1}}),
]


async def test_hostile_custom_requests_get_an_error_with_a_kind(workspace: Path) -> None:
    async with serve([workspace]) as client:
        for method, params in HOSTILE:
            with pytest.raises(JsonRpcException) as caught:
                await asyncio.wait_for(request(client, method, params), 60)
            data = caught.value.data
            assert isinstance(data, dict) and data["kind"] in ERROR_KINDS, (method, params, caught.value)
            assert data["kind"] == "bad_request" and caught.value.code == -32602, (method, params, caught.value)
        # a lone surrogate (a string cut inside an emoji) is searched, not a crash
        result = await asyncio.wait_for(request(client, "botbin/search", {"query": "message broker \ud83d"}), 60)
        assert result["hits"]
        with pytest.raises(JsonRpcException) as caught:  # and is no text to write into a note
            await asyncio.wait_for(request(client, "botbin/remember", {"text": "broker \ud83d"}), 60)
        assert "surrogate" in caught.value.message
