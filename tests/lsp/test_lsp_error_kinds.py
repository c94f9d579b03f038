"""Errors carry a kind (lsp/errors.py, wire/errors.py) over the real ``botbin lsp``: a bad request, a budget too
small for the hard rules, no workspace folder, and an encrypted store without its passphrase (a ``botbin/error``
notification before its showMessage, and ``lastErrorKind`` in status). About 20 s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp.conftest import SERVER, progress_ended, request, serve, start, wait_until


async def _error(client: LanguageClient, method: str, params: dict[str, Any]) -> tuple[int, str, dict[str, Any]]:
    """The code, message and data of the error ``method`` answers."""
    with pytest.raises(JsonRpcException) as caught:
        await request(client, method, params)
    assert isinstance(caught.value.data, dict), caught.value
    return caught.value.code, caught.value.message, caught.value.data


async def test_bad_params_and_a_small_budget_are_bad_requests(workspace: Path) -> None:
    # examples/workspace/AGENTS.md holds hard rules: a 1-token budget cannot hold them
    async with serve([workspace]) as client:
        code, message, data = await _error(client, "botbin/search", {"query": "x", "k": 0})
        assert code == -32602 and data == {"kind": "bad_request", "message": message}
        code, _, data = await _error(client, "botbin/context", {"query": "x", "budgetTokens": 1})
        assert code == -32602 and data["kind"] == "bad_request"


async def test_no_workspace_folder_is_workspace_missing() -> None:
    async with serve([], wait=False) as client:
        code, _, data = await _error(client, "botbin/remember", {"text": "kept"})
        assert code == -32803 and data["kind"] == "workspace_missing"


async def test_an_encrypted_store_without_its_passphrase_is_locked(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "botbin.toml").write_text("encryption = true\nkdf_time_cost = 1\nkdf_memory_kib = 8192\n", encoding="utf-8")
    (root / "note.md").write_text("# Note\n\nThe otter logo was picked.\n", encoding="utf-8")
    client = await ClientServerConfig(server_command=SERVER).start()
    assert isinstance(client, LanguageClient)
    reports: list[Any] = []

    @client.feature("botbin/error")
    def on_error(params: Any) -> None:
        reports.append(params)

    try:
        await start(client, "neovim", [root])
        await wait_until(lambda: progress_ended(client) and reports and client.messages, what="the locked error")
        report = reports[0]
        assert report.kind == "locked" and report.uri == root.as_uri()
        assert report.shownAs in [m.message for m in client.messages]
        status = await request(client, "botbin/status", {})
        assert status["folders"][0]["lastErrorKind"] == "locked"
        assert status["folders"][0]["lastError"] == report.message
    finally:
        await client.shutdown_session()
