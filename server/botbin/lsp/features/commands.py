"""``workspace/executeCommand``: ``botbin.sync`` (changed notes) and ``botbin.reindex`` (re-chunk all)."""

from __future__ import annotations

import asyncio
from typing import Any

from botbin.lsp import protocol
from botbin.lsp.server import BotbinLanguageServer  # at run time: pygls reads command annotations
from botbin.wire import convert
from botbin.wire.model import dump
from botbin.wire.status import FolderSyncSummary, SyncResult

#: Longest wait for a command's sync before it answers "still running" (seconds).
COMMAND_WAIT_S = 600.0


async def run_sync(ls: BotbinLanguageServer, full: bool) -> dict[str, Any]:
    """Queue a sync of every folder, wait for it off the loop, and summarize each folder."""
    await ls.start_sync(full=full)
    done = await asyncio.get_running_loop().run_in_executor(None, ls.folders.wait_idle, COMMAND_WAIT_S)
    folders = [
        FolderSyncSummary.model_validate(
            {
                **convert.sync_fields(folder.last_report),
                "uri": folder.uri,
                "error": folder.last_error,
                "error_kind": folder.last_error_kind,
            },
            by_name=True,
        )
        for folder in ls.folders.folders.values()
    ]
    return dump(SyncResult(done=done, folders=folders))


def register(server: BotbinLanguageServer) -> None:
    @server.command(protocol.COMMAND_SYNC)
    async def sync(ls: BotbinLanguageServer, *_args: Any) -> dict[str, Any]:
        return await run_sync(ls, full=False)

    @server.command(protocol.COMMAND_REINDEX)
    async def reindex(ls: BotbinLanguageServer, *_args: Any) -> dict[str, Any]:
        return await run_sync(ls, full=True)
