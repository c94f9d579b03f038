"""Search over LSP: ``workspace/symbol`` (any editor), ``botbin/search``, ``botbin/related``, ``botbin/status``.

Every answer says whether indexing is still running (``indexing``) and whether ranking fell back to
keywords because the model is unavailable (``degraded``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from botbin.errors import BotbinError
from botbin.lsp import protocol
from botbin.lsp.errors import bad_request
from botbin.lsp.features.hover import HOVER_HITS, related_hits
from botbin.lsp.positions import offset_at, position_at
from botbin.lsp.render import symbol
from botbin.service import SearchFilters, check_filters, check_k, merge, paragraph_at
from botbin.wire import convert
from botbin.wire import search as wire
from botbin.wire import status as wire_status
from botbin.wire.errors import kind_of
from botbin.wire.model import dump

if TYPE_CHECKING:
    from botbin.index.hits import Hit
    from botbin.lsp.folders import Folder
    from botbin.lsp.server import BotbinLanguageServer

_FILTER_KEYS = {"pathGlob": "path_glob", "tag": "tag", "kind": "kind", "dateFrom": "date_from", "dateTo": "date_to"}


def plain(value: Any) -> Any:
    """Custom-request params as plain JSON data (pygls hands them over as namedtuples)."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def params_object(params: Any) -> Mapping[str, Any]:
    """A custom request's params as a JSON object (none given: an empty one). Raises InvalidParams for anything
    else (a string, a number, an array with items)."""
    raw = plain(params) or {}
    if not isinstance(raw, Mapping):
        raise bad_request("params must be an object")
    return raw


def _filters(raw: Any) -> SearchFilters:
    if raw is None:
        return SearchFilters()
    if not isinstance(raw, Mapping):
        raise bad_request("filters must be an object")
    unknown = set(raw) - set(_FILTER_KEYS)
    if unknown:
        raise bad_request(f"unknown filters: {', '.join(sorted(unknown))}")
    if any(v is not None and not isinstance(v, str) for v in raw.values()):
        raise bad_request("every filter is a string")
    filters = SearchFilters(**{_FILTER_KEYS[k]: v for k, v in raw.items() if v is not None})
    problem = check_filters(filters, ("filters.kind", "filters.dateFrom", "filters.dateTo"))
    if problem:
        raise bad_request(problem)
    return filters


def _k(raw: Any, default: int) -> int:
    problem = check_k(raw)
    if problem:
        raise bad_request(problem)
    return default if raw is None else int(raw)


@dataclass(frozen=True)
class Merged:
    """Hits of every folder, best first, each with its note's URI."""

    hits: list[tuple[Hit, str]]
    indexed_at: str | None
    degraded: bool
    stale: bool = False
    """Hits of notes deleted or excluded since the last sync were left out."""


def search_all(
    ls: BotbinLanguageServer, query: str, k: int, filters: SearchFilters | None, best_per_note: bool = False
) -> Merged:
    """Search every folder and merge by score. Blocking: run in a worker thread."""
    results = ls.ask_folders(lambda folder: folder.service.search(query, k, None, filters, best_per_note))
    hits, degraded, indexed_at = merge(results, k)
    stale = any(result.stale for result, _ in results)
    return Merged([(hit, folder.uri_of(hit.path)) for hit, folder in hits], indexed_at, degraded, stale)


def _folder_status(folder: Folder) -> wire_status.FolderStatus:
    """One folder's report; a folder that cannot report (a locked store, a missing folder) says why."""
    try:
        fields = convert.status_fields(folder.service.status())
    except BotbinError as exc:
        folder.failed(exc)
        fields = {
            "workspace": str(folder.root),
            "output_dir": None,
            "state_file": None,
            "model": None,
            "files": 0,
            "chunks": 0,
            "last_sync": None,
            "tracked": 0,
            "stale": [],
            "warnings": [str(exc)],
            "conflicts": [],
            "encryption": "on" if kind_of(exc) in ("locked", "wrong_passphrase") else "off",
        }
    errors = {"last_error": folder.last_error, "last_error_kind": folder.last_error_kind}
    return wire_status.FolderStatus.model_validate(
        {**fields, **errors, "uri": folder.uri, "model_error": folder.model_error}, by_name=True
    )


def status(ls: BotbinLanguageServer) -> wire_status.StatusResult:
    """``botbin/status``: totals over the folders, and each folder's own report."""
    folders = [_folder_status(folder) for folder in list(ls.folders.folders.values())]
    last_syncs = [f.last_sync for f in folders if f.last_sync]
    return wire_status.StatusResult(
        files=sum(f.files for f in folders),
        chunks=sum(f.chunks for f in folders),
        pending=sum(len(f.stale) for f in folders) + ls.folders.pending(),
        last_sync=max(last_syncs, default=None),
        model=folders[0].model if folders else None,
        degraded=any(f.model_error for f in folders),
        indexing=ls.folders.indexing,
        folders=folders,
    )


def _related(hits: list[tuple[Hit, str]], indexing: bool, degraded: bool) -> dict[str, Any]:
    hits_out = [convert.lsp_hit(hit, uri) for hit, uri in hits]
    return dump(wire.RelatedResult(hits=hits_out, indexing=indexing, degraded=degraded))


def register(server: BotbinLanguageServer) -> None:
    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(
        ls: BotbinLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation]:
        if not params.query.strip() or not ls.folders.folders:
            return []
        k = next(iter(ls.folders.folders.values())).service.settings.top_k
        result = await asyncio.get_running_loop().run_in_executor(None, search_all, ls, params.query, k, None)
        return [symbol(hit, uri) for hit, uri in result.hits]

    @server.feature(protocol.SEARCH)
    async def botbin_search(ls: BotbinLanguageServer, params: Any) -> dict[str, Any]:
        raw = params_object(params)
        query = raw.get("query")
        if not isinstance(query, str) or not query.strip():
            raise bad_request("query must be a non-empty string")
        default_k = next(iter(ls.folders.folders.values())).service.settings.top_k if ls.folders.folders else 10
        k, filters, best_per_note = _k(raw.get("k"), default_k), _filters(raw.get("filters")), raw.get("bestPerNote")
        if best_per_note is not None and not isinstance(best_per_note, bool):
            raise bad_request("bestPerNote must be true or false")
        result = await asyncio.get_running_loop().run_in_executor(
            None, search_all, ls, query, k, filters, bool(best_per_note)
        )
        return dump(
            wire.SearchResult(
                hits=[convert.lsp_hit(h, uri) for h, uri in result.hits],
                indexed_at=result.indexed_at,
                indexing=ls.folders.indexing,
                degraded=result.degraded,
                stale=result.stale,
            )
        )

    @server.feature(protocol.RELATED)
    async def botbin_related(ls: BotbinLanguageServer, params: Any) -> dict[str, Any]:
        raw = params_object(params)
        if not isinstance(raw.get("uri") or "", str):
            raise bad_request("uri must be a string")
        uri, k = raw.get("uri") or "", _k(raw.get("k"), HOVER_HITS)
        text, lines, source = raw.get("text"), None, None
        if not isinstance(text, str):
            position = raw.get("position")
            source = ls.text_of(uri) if isinstance(uri, str) and uri else None
            if source is None or not isinstance(position, Mapping):
                raise bad_request("give {uri, position} of an open or saved note, or {text}")
            line_no, char_no = position.get("line", 0), position.get("character", 0)
            if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**31 for v in (line_no, char_no)):
                raise bad_request("position needs a line and a character, non-negative integers")
            pos = types.Position(line_no, char_no)
            line = position_at(source, offset_at(source, pos, ls.encoding), ls.encoding).line
            found = ls.folders.folder_of(uri)
            paragraph = paragraph_at(
                source, found[1] if found else uri, line, found[0].service.settings if found else None
            )
            if paragraph is None:
                return _related([], ls.folders.indexing, False)
            text, lines = paragraph.block.text, (paragraph.block.start_line, paragraph.block.end_line)
        if not isinstance(text, str) or not text.strip():
            return _related([], ls.folders.indexing, False)
        hits, degraded = await asyncio.get_running_loop().run_in_executor(
            None, related_hits, ls, uri, text, lines, k, source if lines is not None else None
        )
        return _related(hits, ls.folders.indexing, degraded)

    @server.feature(protocol.STATUS)
    async def botbin_status(ls: BotbinLanguageServer, _params: Any) -> dict[str, Any]:
        return dump(await asyncio.get_running_loop().run_in_executor(None, status, ls))
