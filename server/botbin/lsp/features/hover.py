"""``textDocument/hover``: the memories most related to the paragraph under the cursor, from the unsaved
buffer, never that paragraph itself nor one under the relevance floor (the search leaves those out); on a
directive, also its class and modality."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from botbin.facade import merged, paragraph_at
from botbin.lsp.positions import lines_range, offset_at, position_at
from botbin.lsp.render import hover_markdown
from botbin.wire.requests import RelatedRequest

if TYPE_CHECKING:
    from botbin.lsp.folders import Folder
    from botbin.lsp.server import BotbinLanguageServer
    from botbin.search.pipeline import Merged, SearchResult

log = logging.getLogger(__name__)
HOVER_HITS = 5


def related_hits(
    ls: BotbinLanguageServer, uri: str, text: str, lines: tuple[int, int] | None, k: int, source: str | None = None
) -> Merged[Folder]:
    """Hits related to ``text`` across all folders, best first, each with its folder. ``source``: the whole note's
    current text; when it is what was indexed, the stored chunk embedding is used.

    Blocking (may embed the text): call from a worker thread.
    """
    md5 = hashlib.md5(source.encode("utf-8", "surrogatepass")).hexdigest() if source is not None else None
    found = ls.folders.folder_of(uri)

    def ask(folder: Folder) -> SearchResult:
        rel = found[1] if found is not None and found[0] is folder else None
        mine = rel is not None
        return folder.service.related(
            RelatedRequest(text=text, path=rel, lines=lines if mine else None, k=k, source_md5=md5 if mine else None)
        )

    return merged(ls.ask_folders(ask), k)


def register(server: BotbinLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: BotbinLanguageServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        text = ls.text_of(uri)
        if text is None or not ls.folders.folders:
            return None
        # Round-trip through an offset: the line a client position names, in LSP's own line counting.
        line = position_at(text, offset_at(text, params.position, ls.encoding), ls.encoding).line
        found = ls.folders.folder_of(uri)
        path = found[1] if found is not None else uri.rsplit("/", 1)[-1]
        paragraph = paragraph_at(text, path, line, found[0].service.settings if found else None)
        if paragraph is None:
            return None
        block = paragraph.block
        lines = (block.start_line, block.end_line)
        loop = asyncio.get_running_loop()
        related = await loop.run_in_executor(None, related_hits, ls, uri, block.text, lines, HOVER_HITS, text)
        hits = [(hit, folder.uri_of(hit.path)) for hit, folder in related.hits]
        markdown = hover_markdown(hits, paragraph.directive, ls.folders.indexing, related.degraded)
        if markdown is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
            range=lines_range(block.start_line, block.end_line),
        )
