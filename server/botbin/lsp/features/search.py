"""Search over LSP: ``workspace/symbol`` (any editor), ``botbin/search``, ``botbin/related``, ``botbin/status``.

Every answer says whether indexing is still running (``indexing``) and whether ranking fell back to
keywords because the model is unavailable (``degraded``). The params are validated into the typed requests of
wire/requests.py on entry; hits under the relevance floor are left out by the search (``hidden`` counts them), so
``workspace/symbol`` shows Neovim and Helix what VS Code and Obsidian show.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pydantic import ValidationError

from botbin.errors import BotbinError
from botbin.facade import merged, paragraph_at
from botbin.lsp import protocol
from botbin.lsp.errors import bad_request
from botbin.lsp.features.hover import HOVER_HITS, related_hits
from botbin.lsp.positions import offset_at, position_at
from botbin.lsp.render import symbol
from botbin.wire import convert
from botbin.wire import search as wire
from botbin.wire import status as wire_status
from botbin.wire.errors import kind_of
from botbin.wire.model import WireModel, dump
from botbin.wire.requests import JSON_NAMES, SearchRequest, check_k, problem

if TYPE_CHECKING:
    from botbin.lsp.folders import Folder
    from botbin.lsp.server import BotbinLanguageServer
    from botbin.search.pipeline import Merged

M = TypeVar("M", bound=WireModel)


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


def validated(model: type[M], raw: Mapping[str, Any]) -> M:
    """``raw`` params as the typed request ``model``. Raises InvalidParams naming the field and the reason."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise bad_request(problem(exc, JSON_NAMES)) from exc


def _k(raw: Any, default: int) -> int:
    problem_k = check_k(raw)
    if problem_k:
        raise bad_request(problem_k)
    return default if raw is None else int(raw)


def search_all(ls: BotbinLanguageServer, request: SearchRequest) -> Merged[Folder]:
    """Search every folder and merge by score (``request.k``: per folder and merged). Blocking: run in a worker
    thread."""
    return merged(ls.ask_folders(lambda folder: folder.service.search(request)), request.k or 10)


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


def _related(result: Merged[Folder] | None, indexing: bool) -> dict[str, Any]:
    if result is None:
        return dump(wire.RelatedResult(hits=[], indexing=indexing, degraded=False))
    hits_out = [convert.lsp_hit(hit, folder.uri_of(hit.path)) for hit, folder in result.hits]
    return dump(wire.RelatedResult(hits=hits_out, indexing=indexing, degraded=result.degraded, hidden=result.hidden))


def register(server: BotbinLanguageServer) -> None:
    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(
        ls: BotbinLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation]:
        if not params.query.strip() or not ls.folders.folders:
            return []
        k = next(iter(ls.folders.folders.values())).service.settings.top_k
        request = SearchRequest(query=params.query, k=k)
        result = await asyncio.get_running_loop().run_in_executor(None, search_all, ls, request)
        return [symbol(hit, folder.uri_of(hit.path)) for hit, folder in result.hits]

    @server.feature(protocol.SEARCH)
    async def botbin_search(ls: BotbinLanguageServer, params: Any) -> dict[str, Any]:
        request = validated(SearchRequest, params_object(params))
        if request.k is None:  # the first folder's top_k: the merged list's length too
            default_k = next(iter(ls.folders.folders.values())).service.settings.top_k if ls.folders.folders else 10
            request = request.model_copy(update={"k": default_k})
        result = await asyncio.get_running_loop().run_in_executor(None, search_all, ls, request)
        return dump(
            wire.SearchResult(
                hits=[convert.lsp_hit(h, folder.uri_of(h.path)) for h, folder in result.hits],
                indexed_at=result.indexed_at,
                indexing=ls.folders.indexing,
                degraded=result.degraded,
                stale=result.stale,
                hidden=result.hidden,
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
                return _related(None, ls.folders.indexing)
            text, lines = paragraph.block.text, (paragraph.block.start_line, paragraph.block.end_line)
        if not isinstance(text, str) or not text.strip():
            return _related(None, ls.folders.indexing)
        result = await asyncio.get_running_loop().run_in_executor(
            None, related_hits, ls, uri, text, lines, k, source if lines is not None else None
        )
        return _related(result, ls.folders.indexing)

    @server.feature(protocol.STATUS)
    async def botbin_status(ls: BotbinLanguageServer, _params: Any) -> dict[str, Any]:
        return dump(await asyncio.get_running_loop().run_in_executor(None, status, ls))
