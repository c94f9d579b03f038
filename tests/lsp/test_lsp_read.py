"""End to end, read-only: one real ``botbin lsp`` per editor profile (VS Code, Neovim) for the whole module,
driven over stdio by pytest-lsp: progress, search, workspace/symbol, hover, related, status."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp.conftest import PROFILES, SERVER, progress_ended, request, start, wait_until

pytestmark = [pytest.mark.model, pytest.mark.asyncio(loop_scope="module")]


@pytest.fixture(scope="module")
def module_workspace(tmp_path_factory: pytest.TempPathFactory, synced_examples: Path) -> Path:
    root = tmp_path_factory.mktemp("read") / "workspace"
    shutil.copytree(synced_examples, root)
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=PROFILES, scope="module")
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, module_workspace: Path
) -> AsyncIterator[None]:
    lsp_client.profile = request.param  # type: ignore[attr-defined]
    lsp_client.root = module_workspace  # type: ignore[attr-defined]
    await start(lsp_client, request.param, [module_workspace])
    await wait_until(lambda: progress_ended(lsp_client), what="the initial indexing to end")
    yield
    await lsp_client.shutdown_session()


def _uri(client: LanguageClient, rel: str) -> str:
    return (client.root / rel).as_uri()  # type: ignore[attr-defined]


async def test_initialize_reports_progress_to_its_end(client: LanguageClient) -> None:
    reports = [r for rs in client.progress_reports.values() for r in rs]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    status = await request(client, "botbin/status", {})
    assert status["files"] == 16 and status["chunks"] > 16  # 16 with AGENTS.md (issue 19)
    assert status["indexing"] is False and status["degraded"] is False


async def test_the_server_keeps_a_load_cache_beside_the_index(client: LanguageClient) -> None:
    # the first profile's server writes it after its load; the second profile's server starts from it, and
    # every other test of the module then checks that server's answers
    cache = client.root / "memory" / "aifbin" / "index-cache.npz"  # type: ignore[attr-defined]
    await wait_until(cache.is_file, what="the load cache to be written")
    assert not list(client.root.glob("*.npz")) and not list(cache.parent.glob(".botbin-tmp-*"))  # type: ignore[attr-defined]


async def test_search_returns_ranked_hits_with_uris_and_ranges(client: LanguageClient) -> None:
    result = await request(client, "botbin/search", {"query": "which database did we choose", "k": 3, "showAll": True})
    hits = result["hits"]
    assert len(hits) == 3 and result["indexing"] is False
    assert hits[0]["score"] >= hits[1]["score"] >= hits[2]["score"]
    # the answer (MEMORY.md's decision) ranks 7th since issue 18's fusion: the wider list holds it
    wider = (
        await request(client, "botbin/search", {"query": "which database did we choose", "k": 10, "showAll": True})
    )["hits"]
    assert any("Postgres" in h["snippet"] or "Postgres" in " ".join(h["headingPath"]) for h in wider)
    first = hits[0]
    assert first["uri"] == _uri(client, first["path"])
    assert first["range"]["start"]["line"] == first["startLine"]


async def test_search_filters_by_kind(client: LanguageClient) -> None:
    result = await request(
        client, "botbin/search", {"query": "rules", "k": 10, "filters": {"kind": "hard"}, "showAll": True}
    )
    assert result["hits"] and {h["kind"] for h in result["hits"]} == {"hard"}


async def test_workspace_symbol_gives_semantic_hits(client: LanguageClient) -> None:
    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="SMS alerts for on-call"))
    assert symbols
    assert all(isinstance(s, types.SymbolInformation) and s.location.uri.startswith("file://") for s in symbols)
    assert await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="")) == []


async def test_hover_shows_related_memories_not_the_paragraph_itself(client: LanguageClient) -> None:
    uri = _uri(client, "MEMORY.md")
    text = (client.root / "MEMORY.md").read_text(encoding="utf-8")  # type: ignore[attr-defined]
    line = next(i for i, ln in enumerate(text.split("\n")) if "Never commit secrets" in ln)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text))
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, 5))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    value = hover.contents.value
    assert "**Directive:** soft" in value and "prohibition" in value  # MEMORY.md is memory (issue 19)
    assert "Related memories" in value and value.count("](file://") >= 3
    assert hover.range is not None and hover.range.start.line == line
    assert f"MEMORY.md#L{line + 1})" not in value  # never the hovered paragraph itself


async def test_hover_on_blank_line_is_empty(client: LanguageClient) -> None:
    uri = _uri(client, "MEMORY.md")
    text = (client.root / "MEMORY.md").read_text(encoding="utf-8")  # type: ignore[attr-defined]
    blank = next(i for i, ln in enumerate(text.split("\n")) if not ln.strip())
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(blank, 0))
    )
    assert hover is None


async def test_hover_uses_the_unsaved_buffer_after_emoji(client: LanguageClient) -> None:
    """Positions count in the negotiated encoding (UTF-16 for VS Code, UTF-8 for Neovim 0.11)."""
    uri = _uri(client, "memory/scratch.md")
    first = "🧪🧪 héllo 日本語 notes about the pager rotation and on-call SMS alerts"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="# Scratch\n\n" + first + "\n")
        )
    )
    # an edit after the emoji, in client units: insert " tomorrow" at the end of line 2
    units = len(first.encode("utf-8")) if client.profile == "neovim" else len(first.encode("utf-16-le")) // 2  # type: ignore[attr-defined]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(2, units), types.Position(2, units)), text=" tomorrow"
                )
            ],
        )
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(2, units + 3))
    )
    assert hover is not None and hover.range is not None
    assert (hover.range.start.line, hover.range.end.line) == (2, 3)
    related = await request(client, "botbin/related", {"uri": uri, "position": {"line": 2, "character": 4}})
    assert related["hits"]
