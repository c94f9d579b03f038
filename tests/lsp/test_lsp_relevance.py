"""Issue 35: the server decides what a person sees. A hit under the relevance floor (hardly any similarity, no real
keyword match; search/pipeline.py ``relevant``) is left out of every answer of the real ``botbin lsp``, not only of
those whose client copied the rule: ``botbin/search`` (Obsidian's search modal; ``hidden`` counts what was left out
and ``showAll`` brings it back), ``workspace/symbol`` (Neovim, Helix), ``botbin/related`` and hover."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from botbin.search.pipeline import RELEVANCE_MIN_BM25_SHARE, RELEVANCE_MIN_COSINE
from lsp.conftest import request, serve

pytestmark = pytest.mark.model
#: A request the example workspace (software notes) holds only weak matches for: one shared word of four.
QUERY = "monday zebras savanna grazing"
PARAGRAPH = "Zebras graze on the savanna every monday morning, and the lions watch them from the long grass."


def _relevant(hit: dict[str, Any]) -> bool:
    return hit["cosine"] >= RELEVANCE_MIN_COSINE or hit["bm25Share"] >= RELEVANCE_MIN_BM25_SHARE


async def test_no_surface_shows_a_hit_under_the_floor(workspace: Path) -> None:
    async with serve([workspace], profile="neovim") as client:
        every = (await request(client, "botbin/search", {"query": QUERY, "k": 10, "showAll": True}))["hits"]
        weak = [h for h in every if not _relevant(h)]
        assert weak, "the example workspace should hold weak hits for this request"
        shown = await request(client, "botbin/search", {"query": QUERY, "k": 10})
        assert [h["path"] for h in shown["hits"]] == [h["path"] for h in every if _relevant(h)]
        assert shown["hidden"] == len(weak)
        symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=QUERY))
        assert [s.container_name for s in symbols or []] == [h["path"] for h in shown["hits"]]

        related = await request(client, "botbin/related", {"text": PARAGRAPH, "k": 5})
        assert related["hidden"] > 0 and all(_relevant(h) for h in related["hits"])
        uri = (workspace / "memory" / "scratch.md").as_uri()  # an unsaved buffer: nothing of it is indexed
        text = f"# Scratch\n\n{PARAGRAPH}\n"
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", 1, text)))
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(2, 3))
        )
        shown_in_hover = 0 if hover is None else str(hover.contents.value).count("](file://")  # type: ignore[union-attr]
        assert shown_in_hover == len(related["hits"])
