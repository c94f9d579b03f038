"""``botbin mcp``: the MCP server (official ``mcp`` SDK, stdio) that gives AI agents memory of one workspace.

Tools: ``search_memory``, ``remember``, ``get_context``, ``memory_status``, ``observe_turn`` (conversation
turns buffered and distilled into the user's soul file, memory/conversation/observer.py; the buffer is distilled on
SIGINT/SIGTERM and when the client disconnects, before the server exits). A tool's failure is returned as
an MCP tool error with its reason (ToolError), never as a crash. The workspace is synced in the background
at start, so the first call answers at once with what was already indexed.
"""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from botbin.errors import BotbinError
from botbin.service import MemoryService, SearchFilters, check_filters, check_k, single_threaded_blas

if TYPE_CHECKING:
    from botbin.memory.conversation.observer import TurnObserver

log = logging.getLogger(__name__)

INSTRUCTIONS = """botbin is the user's long-term memory: their markdown notes (MEMORY.md, AGENTS.md, daily notes in
memory/YYYY-MM-DD.md), searchable by meaning. Call get_context at the start of a task to receive the user's rules
(always follow them) plus the notes most relevant to the request, within a token budget. Use search_memory to
look something up, and remember to save a fact, decision or preference the user will want kept. Pass each turn of the
conversation (yours and the user's) to observe_turn: botbin distils them into the user's soul file
(memory/soul/<user>.md), which search_memory and get_context then find."""


def _filters(path_glob: str | None, tag: str | None, kind: str | None, date_from: str | None,
             date_to: str | None) -> SearchFilters:
    filters = SearchFilters(path_glob or None, tag or None, kind or None, date_from or None, date_to or None)
    problem = check_filters(filters)
    if problem:
        raise ToolError(problem)
    return filters


def create_server(service: MemoryService, observer: TurnObserver | None = None) -> MCPServer:
    """An MCP server over ``service`` with the five tools registered; ``observer`` (a TurnObserver that
    syncs after each block; one is made when None) receives the turns of ``observe_turn``."""
    server = MCPServer("botbin", instructions=INSTRUCTIONS)
    turns = observer if observer is not None else service.observer(sync_each_block=True)

    @server.tool()
    def search_memory(query: str, k: int = 5, path_glob: str | None = None, tag: str | None = None,
                      kind: str | None = None, date_from: str | None = None,
                      date_to: str | None = None) -> dict[str, Any]:
        """Search the user's notes by meaning (hybrid semantic + keyword, with recent and durable notes
        slightly preferred). Returns the best passages with their note path, 0-based line range, heading path,
        kind ('hard' rule, 'soft' rule or 'lore') and score in [0, 1].

        Args:
            query: what to look for, in natural language.
            k: number of passages, 1-1000.
            path_glob: only notes whose path matches, e.g. "memory/2026-11-*".
            tag: only notes with this tag.
            kind: only 'hard' rules, 'soft' rules or 'lore'.
            date_from: only notes dated on or after this ISO date (YYYY-MM-DD).
            date_to: only notes dated on or before this ISO date.
        """
        if not query.strip():
            raise ToolError("query is empty")
        problem = check_k(k)
        if problem:
            raise ToolError(problem)
        try:
            result = service.recall(query, k, _filters(path_glob, tag, kind, date_from, date_to))
        except BotbinError as exc:
            raise ToolError(str(exc)) from exc
        hits = [{**h.to_dict(), "text": h.text} for h in result.hits]
        return {"hits": hits, "degraded": result.degraded, "indexedAt": result.indexed_at}

    @server.tool()
    def remember(text: str, tags: list[str] | None = None) -> dict[str, Any]:
        """Save something to the user's memory: appends a timestamped entry to today's daily note
        (memory/YYYY-MM-DD.md) and indexes it at once, so search_memory finds it immediately.

        Args:
            text: the fact, decision or preference to keep, in plain words (markdown allowed).
            tags: optional single-word tags, e.g. ["decision", "billing"].
        """
        try:
            written, report = service.remember(text, tags or [])
        except BotbinError as exc:
            raise ToolError(str(exc)) from exc
        return {"path": written.path, "startLine": written.start_line, "endLine": written.end_line,
                "text": written.text, "indexed": not report.failed}

    @server.tool()
    def get_context(query: str, budget_tokens: int = 2000) -> dict[str, Any]:
        """The user's memory for a task, as one markdown block that fits budget_tokens: all of the user's
        hard rules (always), relevant guidance, their preferences, the latest notes verbatim, then the most
        related memories. Put `text` in your context and follow its rules.

        Args:
            query: the task or question at hand.
            budget_tokens: the most tokens the block may use (WordPiece tokens of all-MiniLM-L6-v2).
        """
        try:
            return service.context(query, budget_tokens).to_dict()
        except BotbinError as exc:
            raise ToolError(str(exc)) from exc

    @server.tool()
    def memory_status() -> dict[str, Any]:
        """How much is indexed: notes, chunks, last sync, the model, notes changed since, and rule conflicts."""
        try:
            return service.status().to_dict()
        except BotbinError as exc:
            raise ToolError(str(exc)) from exc

    @server.tool()
    def observe_turn(role: str, content: str, user: str | None = None, session: str | None = None,
                     timestamp: str | None = None) -> dict[str, Any]:
        """Record one conversation turn. Turns are buffered and distilled (every 5 turns, or when the topic
        changes) into bullet facts appended to the user's soul file, memory/soul/<user>.md, which is then
        indexed; the user's rules ("never ...", "always ...", "from now on ...") are kept verbatim.

        Args:
            role: who speaks: "user", "assistant", or a name.
            content: what was said.
            user: whose memory this is (default "user"); picks the soul file.
            session: an id of this conversation (a new session distils the previous one's buffer).
            timestamp: when it was said, ISO 8601 (default: now).
        """
        try:
            result = turns.observe_message(role, content, user, session, timestamp)
        except BotbinError as exc:
            raise ToolError(str(exc)) from exc
        return {"turn": result.turn_number, "buffered": result.buffered, "admitted": result.admitted,
                "protected": result.protected, "score": round(result.gate.score, 4), "soulFile": result.soul_file,
                "distilled": [d.to_dict() for d in result.distilled]}

    return server


def _flush(observer: TurnObserver) -> None:
    """Distil the buffered turns into the soul files (and sync), logging rather than raising."""
    try:
        blocks = observer.flush()
        if any(d.status == "written" for d in blocks):
            log.info("distilled %d buffered blocks before exit", len(blocks))
    except BotbinError as exc:
        log.warning("could not distil the buffered turns: %s", exc)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGTERM ends the server like Ctrl+C: through the finally that flushes


def _initial_sync(service: MemoryService) -> None:
    try:
        service.index()
        report = service.sync()
        for failure in report.failed:
            log.warning("%s: %s", failure.path, failure.reason)
    except BotbinError as exc:
        log.warning("initial sync failed: %s", exc)


def main(workspace: Path, overrides: dict[str, Any] | None = None) -> int:
    """Serve MCP on stdio for ``workspace``; logs go to stderr."""
    single_threaded_blas()  # each tool call embeds, then searches: BLAS threads would spin against the model's
    service = MemoryService(workspace, overrides)
    for warning in service.warnings:
        log.warning("%s", warning)
    threading.Thread(target=_initial_sync, args=(service,), name="botbin-initial-sync", daemon=True).start()
    observer = service.observer(sync_each_block=True)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        create_server(service, observer).run("stdio")
    except KeyboardInterrupt:
        log.info("stopped by a signal")
    finally:
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the flush is what a signal asked for
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _flush(observer)
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, interrupt)
    return 0
