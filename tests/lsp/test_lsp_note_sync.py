"""Note-level live sync (issue 21) through the real ``botbin lsp`` over stdio: a save syncs that note only
(no folder scan: a note changed on disk meanwhile without a word to the server stays as it was), the saved
note becomes searchable, and the ``botbin.sync`` command's full scan catches what was missed. About 15 s."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp.conftest import progress_ended, request, serve, wait_until


def _ends(client: LanguageClient) -> list[str]:
    ends: list[str] = []
    for reports in client.progress_reports.values():
        for report in reports:
            if isinstance(report, types.WorkDoneProgressEnd):
                ends.append(report.message or "")
    return ends


async def _paths(client: LanguageClient, query: str) -> list[str]:
    result = await request(client, "botbin/search", {"query": query, "k": 3})
    return [h["path"] for h in result["hits"]]


async def test_a_save_syncs_that_note_only_and_a_full_scan_catches_the_rest(workspace: Path) -> None:
    async with serve([workspace]) as client:
        assert _ends(client)[-1].endswith(" unchanged") and " 0 unchanged" not in _ends(client)[-1]  # a scan
        missed = workspace / "memory" / "2026-11-04.md"
        missed.write_text("# 2026-11-04\n\nThe capybara rota covers the weekend on-call.\n", encoding="utf-8")
        saved = workspace / "memory" / "2026-11-29.md"
        saved.write_text("# 2026-11-29\n\n- Chose the quokka mascot for the status page.\n", encoding="utf-8")
        client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(saved.as_uri())))
        await wait_until(lambda: progress_ended(client, 2), what="the save's sync to end")
        assert _ends(client)[-1] == "1 added, 0 modified, 0 deleted, 0 unchanged"  # one note looked at
        assert (await _paths(client, "quokka mascot status page"))[0] == "memory/2026-11-29.md"
        assert "memory/2026-11-04.md" not in await _paths(client, "capybara rota weekend on-call")

        result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="botbin.sync"))
        assert result is not None and result["folders"][0]["modified"] == ["memory/2026-11-04.md"]
        assert (await _paths(client, "capybara rota weekend on-call"))[0] == "memory/2026-11-04.md"
