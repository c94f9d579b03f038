"""Text synchronization and live sync: open buffers, ``didSave`` re-syncs at once, outside changes arrive
through ``workspace/didChangeWatchedFiles`` (when the client watches) or a watchfiles watcher (when not).
Each syncs just the notes named (content-hashed, no folder scan); the start-up sync, a watcher's catch-up and
the ``botbin.sync`` command scan whole folders and catch anything missed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from botbin.lsp.positions import apply_change

if TYPE_CHECKING:
    from botbin.lsp.folders import Folder
    from botbin.lsp.server import BotbinLanguageServer

log = logging.getLogger(__name__)
WATCH_GLOB = "**/*.md"


async def start_watching(ls: BotbinLanguageServer) -> None:
    """Ask the client to watch ``**/*.md``; when it cannot, watch each folder with watchfiles."""
    if ls.client_supports("workspace.did_change_watched_files.dynamic_registration"):
        watcher = types.FileSystemWatcher(
            glob_pattern=WATCH_GLOB, kind=types.WatchKind.Create | types.WatchKind.Change | types.WatchKind.Delete
        )
        registration = types.Registration(
            id=str(uuid.uuid4()),
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher]),
        )
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
            ls.client_watches = True
            return
        except Exception as exc:
            log.info("client refused to watch files (%s); watching with watchfiles", exc)
    for folder in ls.folders.folders.values():
        ls.watch_tasks.append(asyncio.create_task(_watch(ls, folder)))


async def _watch(ls: BotbinLanguageServer, folder: Folder) -> None:
    """Sync the folder after each burst of note changes that its watcher reports (sync/watch.py)."""
    try:
        async for changed in folder.service.note_changes():
            if folder.uri in ls.folders.folders:
                await ls.start_sync([folder.uri], notes=_named_notes(folder.root, changed))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the watcher is a convenience: saves in the editor still sync
        ls.show_once(f"botbin: cannot watch {folder.root} for outside changes ({exc}); saves still sync")


def _named_notes(root: Path, changed: list[str]) -> frozenset[str] | None:
    """The notes of a watcher burst (absolute paths) relative to ``root``; None (scan the whole folder) for a
    catch-up burst (empty) or one that names anything but a note inside ``root`` (a folder moved, ...)."""
    rels = [Path(os.path.relpath(path, root)).as_posix() for path in changed]
    if not rels or any(not rel.endswith(".md") or rel.startswith("../") for rel in rels):
        return None
    return frozenset(rels)


def register(server: BotbinLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: BotbinLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.buffers[params.text_document.uri] = params.text_document.text

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: BotbinLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        text = ls.buffers.get(uri, "")
        for change in params.content_changes:
            text = apply_change(text, change, ls.encoding)
        ls.buffers[uri] = text

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: BotbinLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.buffers.pop(params.text_document.uri, None)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: BotbinLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        found = ls.folders.folder_of(params.text_document.uri)
        if found is not None and ls.folders.tracks(params.text_document.uri):
            await ls.start_sync([found[0].uri], notes=frozenset([found[1]]))  # that note only, no folder scan

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: BotbinLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        named: dict[str, set[str]] = {}
        for change in params.changes:
            found = ls.folders.folder_of(change.uri)
            if found is not None and change.uri.endswith(".md"):
                named.setdefault(found[0].uri, set()).add(found[1])
        for uri, rels in named.items():  # the notes named only; a full scan runs at start and on botbin.sync
            await ls.start_sync([uri], notes=frozenset(rels))
