"""End to end on real notes nobody here wrote: the Obsidian help vault (../shared/data, 173 notes), in vault
mode, with one server per editor profile."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import needs_shared
from lsp.conftest import PROFILES, SERVER, progress_ended, request, start, wait_until

pytestmark = [pytest.mark.model, needs_shared, pytest.mark.asyncio(loop_scope="module")]
NOTE = "Linking notes and files/Internal links.md"


@pytest.fixture(scope="module")
def help_vault(synced_help_vault: Path) -> Path:
    """The session's synced copy of the help vault (conftest.synced_help_vault); these tests only read it."""
    return synced_help_vault


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=PROFILES, scope="module")
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, help_vault: Path) -> AsyncIterator[None]:
    lsp_client.root = help_vault  # type: ignore[attr-defined]
    await start(lsp_client, request.param, [help_vault], {"vault": True})
    await wait_until(lambda: progress_ended(lsp_client), what="the initial indexing to end")
    yield
    await lsp_client.shutdown_session()


async def test_search_finds_the_help_page(client: LanguageClient) -> None:
    result = await request(
        client, "botbin/search", {"query": "how do I link to another note", "k": 5, "bestPerNote": True}
    )
    paths = [h["path"] for h in result["hits"]]
    assert NOTE in paths[:5], paths


async def test_hover_relates_a_paragraph_to_other_pages(client: LanguageClient) -> None:
    root: Path = client.root  # type: ignore[attr-defined]
    text = (root / NOTE).read_text(encoding="utf-8")
    lines = text.split("\n")
    body = lines.index("---", 1) + 1  # after the frontmatter
    line = next(
        i for i in range(body, len(lines)) if lines[i].strip() and lines[i][0].isalpha() and "link" in lines[i].lower()
    )
    uri = (root / NOTE).as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text))
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, 0))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    links = re.findall(r"^\d+\. \[.*?[^\\]\]\((file://[^)\s]+)\)", hover.contents.value, re.MULTILINE)
    assert 3 <= len(links) <= 5
    assert all(link.startswith("file://") and "#L" in link for link in links)
    assert f"{uri}#L{line + 1}" not in links


async def test_status_counts_the_vault(client: LanguageClient) -> None:
    status = await request(client, "botbin/status", {})
    assert status["files"] == 173 and status["pending"] == 0
