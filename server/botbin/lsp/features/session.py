"""``initialize``, ``initialized``, configuration and workspace-folder changes, ``shutdown``, ``exit``.

``exit`` ends the process with status 0 after ``shutdown``, else 1; the server also exits (status 1) when
the client process named by ``initialize``'s ``processId`` dies.

Settings come from ``initializationOptions`` and ``workspace/didChangeConfiguration`` with the keys of
botbin.toml (``top_k``; ``topK`` and a ``botbin`` section are accepted too). Bad values fall back to
their defaults with one ``window/showMessage``. Indexing starts after ``initialized``, off the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from botbin.errors import ModelError
from botbin.lsp.guards import watch_client
from botbin.lsp.warm import serve_folders, stop_serving

if TYPE_CHECKING:
    from botbin.lsp.server import BotbinLanguageServer

log = logging.getLogger(__name__)
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def settings_from(raw: Any) -> tuple[dict[str, Any], list[str]]:
    """botbin.toml-style settings from LSP options: a ``botbin`` section is unwrapped, camelCase keys become
    snake_case. Returns the settings and problems found (not a JSON object, ...)."""
    if raw is None:
        return {}, []
    if hasattr(raw, "_asdict"):
        raw = raw._asdict()
    if not isinstance(raw, Mapping):
        return {}, [f"LSP settings: expected an object, got {type(raw).__name__}; using defaults"]
    section = raw.get("botbin")
    as_dict = getattr(section, "_asdict", None)
    if as_dict is not None:
        section = as_dict()
    if isinstance(section, Mapping):
        raw = section
    return {_CAMEL.sub(r"_\1", str(k)).lower(): v for k, v in raw.items()}, []


def _folder_uris(params: types.InitializeParams) -> list[str]:
    if params.workspace_folders:
        return [f.uri for f in params.workspace_folders]
    return [params.root_uri] if params.root_uri else []


def apply_settings(ls: BotbinLanguageServer, uris: list[str], raw: Any) -> None:
    options, problems = settings_from(raw)
    ls.forget_shown("passphrase")  # a new passphrase may be wrong again: say so again
    problems += ls.folders.set_folders(uris, options)
    if problems:
        ls.show_once("botbin: settings: " + "; ".join(problems))  # each names its file or source, key and reason


def _warm_model(ls: BotbinLanguageServer) -> None:
    """Load each folder's model in the background (folders with one model share it: shared_embedder),
    so the first hover does not wait ~6 s for it."""
    for folder in list(ls.folders.folders.values()):
        try:
            folder.service.warm_up()
            folder.model_error = None
        except ModelError as exc:
            folder.model_error = str(exc)
            ls.model_unavailable(str(exc))


def _warm(ls: BotbinLanguageServer) -> None:
    """At ``initialize``: each folder's index and the model start loading now, on daemon threads (exiting must
    not wait for them), so that the first hover after start waits for neither the catch-up scan nor the
    model (the scan then finds the index loaded)."""
    for folder in list(ls.folders.folders.values()):
        folder.service.warm_in_background(model=False)
    threading.Thread(target=_warm_model, args=(ls,), name="botbin-warm-model", daemon=True).start()


def register(server: BotbinLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: BotbinLanguageServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.adopt_encoding()
        uris = _folder_uris(params)
        apply_settings(ls, uris, params.initialization_options)
        _warm(ls)
        if not uris:
            ls.show_once("botbin: no workspace folder is open, so there is no memory to search; open a folder")
        if params.process_id is not None and params.process_id != os.getpid():
            watch_client(params.process_id, lambda: _client_gone(ls))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: BotbinLanguageServer, _params: types.InitializedParams) -> None:
        from botbin.lsp.features.textsync import start_watching

        await start_watching(ls)
        await ls.start_sync()
        serve_folders(ls.folders)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: BotbinLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        if params.settings is None:
            return
        apply_settings(ls, list(ls.folders.folders), params.settings)
        serve_folders(ls.folders)
        await ls.start_sync()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(ls: BotbinLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        removed = {f.uri for f in params.event.removed}
        uris = [u for u in ls.folders.folders if u not in removed]
        added = [f.uri for f in params.event.added if f.uri not in uris]
        ls.folders.set_folders(uris + added, ls.folders.options)
        serve_folders(ls.folders)
        if added:
            await ls.start_sync(added)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: BotbinLanguageServer, _params: None) -> None:
        ls.shut_down = True
        ls.folders.stop()
        stop_serving()
        for task in ls.watch_tasks:
            task.cancel()

    @server.feature(types.EXIT)
    def exit_(ls: BotbinLanguageServer, _params: None) -> None:
        ls.exit_code = 0 if ls.shut_down else 1  # LSP 3.17: 1 when no shutdown came first


def _client_gone(ls: BotbinLanguageServer) -> None:
    """The client process died: stop syncing and leave (outputs are written atomically, so a sync cut
    short leaves every file whole; the next one finishes its work)."""
    ls.folders.stop()
    stop_serving()
    logging.shutdown()
    os._exit(1)
