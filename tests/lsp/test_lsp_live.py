"""End to end, live changes: a fresh ``botbin lsp`` and workspace copy per test: save-then-search, outside
changes (client watcher for VS Code, watchfiles for Neovim), commands, settings, conflicts, degradation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp.conftest import PROFILES, SERVER, progress_ended, request, start, wait_until

pytestmark = pytest.mark.model


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=PROFILES)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path) -> AsyncIterator[None]:
    lsp_client.profile = request.param  # type: ignore[attr-defined]
    lsp_client.root = workspace  # type: ignore[attr-defined]
    await start(lsp_client, request.param, [workspace])
    await wait_until(lambda: progress_ended(lsp_client), what="the initial indexing to end")
    yield
    await lsp_client.shutdown_session()


async def eventually(get: Callable[[], Awaitable[Any]], ok: Callable[[Any], bool], timeout_s: float = 20.0) -> Any:
    """Call ``get`` every 100 ms until ``ok`` accepts its value."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        value = await get()
        if ok(value):
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"still {value!r} after {timeout_s} s")
        await asyncio.sleep(0.1)


async def paths_for(client: LanguageClient, query: str, k: int = 3) -> list[str]:
    result = await request(client, "botbin/search", {"query": query, "k": k})
    return [h["path"] for h in result["hits"]]


async def test_save_then_search_finds_the_new_paragraph(client: LanguageClient) -> None:
    note = client.root / "memory" / "2026-11-29.md"  # type: ignore[attr-defined]
    note.write_text("# 2026-11-29\n\n- Chose the quokka mascot for the status page redesign.\n", encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(note.as_uri())))

    await eventually(lambda: paths_for(client, "quokka mascot", 1), lambda p: p == ["memory/2026-11-29.md"])


async def test_outside_create_and_delete_are_picked_up(client: LanguageClient) -> None:
    note = client.root / "memory" / "outside.md"  # type: ignore[attr-defined]
    note.write_text("# Outside\n\nThe wombat incident happened in the staging cluster.\n", encoding="utf-8")
    if (
        getattr(client, "profile", None) == "visual_studio_code"
    ):  # this client watches files itself and tells the server
        assert client.registrations  # type: ignore[attr-defined]
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams([types.FileEvent(note.as_uri(), types.FileChangeType.Created)])
        )

    await eventually(lambda: paths_for(client, "wombat incident staging"), lambda p: "memory/outside.md" in p)
    note.unlink()
    if getattr(client, "profile", None) == "visual_studio_code":
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams([types.FileEvent(note.as_uri(), types.FileChangeType.Deleted)])
        )
    await eventually(lambda: paths_for(client, "wombat incident staging"), lambda p: "memory/outside.md" not in p)


async def test_execute_sync_command_and_reindex(client: LanguageClient) -> None:
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="botbin.sync"))
    assert result is not None and result["done"] is True and result["folders"][0]["error"] is None
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="botbin.reindex"))
    assert (
        result is not None
        and result["done"] is True
        and result["folders"][0]["unchanged"] + len(result["folders"][0]["modified"]) == 16
    )
