"""``workspace/executeCommand``: ``botbin.sync`` (changed notes) and ``botbin.reindex`` (re-chunk all)."""

from __future__ import annotations

import asyncio
from typing import Any

from botbin.lsp import protocol
from botbin.lsp.server import BotbinLanguageServer  # at run time: pygls reads command annotations

#: A folder that has not synced yet.
_NO_REPORT: dict[str, Any] = {"added": [], "modified": [], "deleted": [], "unchanged": 0, "failed": []}
#: Longest wait for a command's sync before it answers "still running" (seconds).
COMMAND_WAIT_S = 600.0


async def run_sync(ls: BotbinLanguageServer, full: bool) -> dict[str, Any]:
    """Queue a sync of every folder, wait for it off the loop, and summarize each folder."""
    await ls.start_sync(full=full)
    done = await asyncio.get_running_loop().run_in_executor(None, ls.folders.wait_idle, COMMAND_WAIT_S)
    folders = [
        {
            "uri": folder.uri,
            "error": folder.last_error,
            **(folder.last_report.to_dict() if folder.last_report else _NO_REPORT),
        }
        for folder in ls.folders.folders.values()
    ]
    return {"done": done, "folders": folders}


def register(server: BotbinLanguageServer) -> None:
    @server.command(protocol.COMMAND_SYNC)
    async def sync(ls: BotbinLanguageServer, *_args: Any) -> dict[str, Any]:
        return await run_sync(ls, full=False)

    @server.command(protocol.COMMAND_REINDEX)
    async def reindex(ls: BotbinLanguageServer, *_args: Any) -> dict[str, Any]:
        return await run_sync(ls, full=True)
