"""Agent memory over LSP: ``botbin/context`` (token-budgeted context) and ``botbin/remember`` (append to today's
daily note and index it). Both act on the folder of ``uri`` when given, else on the first workspace folder."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botbin.errors import BotbinError, WorkspaceError
from botbin.lsp import protocol
from botbin.lsp.errors import bad_request, request_failed
from botbin.lsp.features.search import params_object, validated
from botbin.wire import convert
from botbin.wire.agent import ContextParams
from botbin.wire.model import dump

if TYPE_CHECKING:
    from botbin.lsp.folders import Folder
    from botbin.lsp.server import BotbinLanguageServer


def _folder(ls: BotbinLanguageServer, raw: Mapping[str, Any]) -> Folder:
    uri = raw.get("uri")
    if uri is not None and not isinstance(uri, str):
        raise bad_request("uri must be a string")
    found = ls.folders.folder_of(uri) if isinstance(uri, str) else None
    if found is not None:
        return found[0]
    if not ls.folders.folders:
        raise request_failed(WorkspaceError("no workspace folder is open"))
    return next(iter(ls.folders.folders.values()))


def register(server: BotbinLanguageServer) -> None:
    @server.feature(protocol.CONTEXT)
    async def botbin_context(ls: BotbinLanguageServer, params: Any) -> dict[str, Any]:
        raw = params_object(params)
        request = validated(ContextParams, raw)  # a ContextRequest, and the folder's uri
        folder = _folder(ls, raw)
        try:
            result = await asyncio.get_running_loop().run_in_executor(None, folder.service.context, request)
        except BotbinError as exc:
            raise request_failed(exc) from exc
        return dump(convert.context(result))

    @server.feature(protocol.REMEMBER)
    async def botbin_remember(ls: BotbinLanguageServer, params: Any) -> dict[str, Any]:
        raw = params_object(params)
        text, tags = raw.get("text"), raw.get("tags") or []
        if not isinstance(text, str) or not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise bad_request("give {text: string, tags?: string[]}")
        folder = _folder(ls, raw)
        try:
            written, _report = await asyncio.get_running_loop().run_in_executor(
                None, folder.service.remember, text, tags
            )
        except BotbinError as exc:
            raise request_failed(exc) from exc
        return dump(convert.remembered(written, folder.uri_of(written.path)))
