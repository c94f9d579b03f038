"""``workspace/executeCommand``: ``botbin.sync`` (changed notes) and ``botbin.reindex`` (re-chunk all)."""

from __future__ import annotations

import asyncio
from typing import Any

from botbin.lsp import protocol
from botbin.lsp.server import BotbinLanguageServer  # at run time: pygls reads command annotations

#: Longest wait for a command's sync before it answers "still running" (seconds).
COMMAND_WAIT_S = 600.0


async def run_sync(ls: BotbinLanguageServer, full: bool) -> dict[str, Any]:
    """Queue a sync of every folder, wait for it off the loop, and summarize each folder."""
    await ls.start_sync(full=full)
    done = await asyncio.get_running_loop().run_in_executor(None, ls.folders.wait_idle, COMMAND_WAIT_S)
    folders = []
    for folder in ls.folders.folders.values():
        report = folder.last_report
        folders.append({
            "uri": folder.uri, "error": folder.last_error,
            "added": list(report.added) if report else [], "modified": list(report.modified) if report else [],
            "deleted": list(report.deleted) if report else [], "unchanged": report.unchanged if report else 0,
            "failed": [{"path": f.path, "reason": f.reason} for f in report.failed] if report else [],
        })
    return {"done": done, "folders": folders}


def register(server: BotbinLanguageServer) -> None:
    @server.command(protocol.COMMAND_SYNC)
    async def sync(ls: BotbinLanguageServer, *_args: Any) -> dict[str, Any]:
        return await run_sync(ls, full=False)

    @server.command(protocol.COMMAND_REINDEX)
    async def reindex(ls: BotbinLanguageServer, *_args: Any) -> dict[str, Any]:
        return await run_sync(ls, full=True)
