"""``workspace/executeCommand`` ``botbin.studio``: Recall Studio (botbin/studio/) over the folders this server has
open, started on the first call on 127.0.0.1 and kept until the server exits; answers the page's URL (it holds the
session's token). Argument: ``{editor?: "vscode" | "obsidian" | "none"}``, the editor its links open (default:
the one the first folder looks kept in)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from botbin.lsp import protocol
from botbin.lsp.errors import bad_request
from botbin.lsp.features.search import plain
from botbin.lsp.server import BotbinLanguageServer  # at run time: pygls reads command annotations
from botbin.studio.app import StudioConfig
from botbin.studio.links import Editor, detect_editor
from botbin.studio.serve import StudioServer
from botbin.wire.model import dump
from botbin.wire.studio import StudioOpened

EDITORS: tuple[Editor, ...] = ("vscode", "obsidian", "none")


def _editor(ls: BotbinLanguageServer, args: tuple[Any, ...]) -> Editor:
    given = plain(args[0]) if args else {}
    asked = given.get("editor") if isinstance(given, Mapping) else None
    if asked is not None and asked not in EDITORS:
        raise bad_request(f"editor must be one of {', '.join(EDITORS)}, not {asked!r}")
    if asked is not None:
        return asked  # type: ignore[no-any-return]
    folders = list(ls.folders.folders.values())
    return detect_editor(folders[0].root) if folders else "none"


def register(server: BotbinLanguageServer) -> None:
    running: list[StudioServer] = []
    lock = threading.Lock()

    def open_studio(ls: BotbinLanguageServer, editor: Editor) -> str:
        with lock:
            if not running:
                config = StudioConfig(lambda: [f.service for f in list(ls.folders.folders.values())], editor)
                studio = StudioServer(config)
                studio.start()
                running.append(studio)
            return running[0].url

    @server.command(protocol.COMMAND_STUDIO)
    async def studio(ls: BotbinLanguageServer, *args: Any) -> dict[str, Any]:
        editor = _editor(ls, args)  # a studio that cannot start raises a BotbinError, answered with its kind
        url = await asyncio.get_running_loop().run_in_executor(None, open_studio, ls, editor)
        return dump(StudioOpened(url=url))
