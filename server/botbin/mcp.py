"""``botbin mcp``: the MCP server (official ``mcp`` SDK, stdio) that gives AI agents memory of one workspace.

Tools: ``search_memory``, ``remember``, ``get_context``, ``memory_status``, ``observe_turn`` (conversation
turns buffered and distilled into the user's soul file, memory/conversation/observer.py; the buffer is distilled on
SIGINT/SIGTERM and when the client disconnects, before the server exits), ``expand_memory`` (the whole section and
source turns of an item a host's hook put before the model with its ``[id]``: agent/expand.py). Results are typed
in botbin.wire (each tool's output schema). A tool's failure is returned as an MCP tool error whose structured
content is ``{kind, message}`` (botbin.wire.errors), never as a crash. The workspace is synced in the background at
start, so the first call answers at once with what was already indexed.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from mcp_types import CallToolResult, TextContent
from pydantic import Field, ValidationError, WithJsonSchema

from botbin import __version__
from botbin.errors import BotbinError
from botbin.facade import single_threaded_blas
from botbin.mcp_stdio import BotbinMCPServer
from botbin.service import MemoryService
from botbin.wire import agent as wire_agent
from botbin.wire import convert, host_convert
from botbin.wire import hosts as wire_hosts
from botbin.wire import search as wire
from botbin.wire import status as wire_status
from botbin.wire.errors import error_data
from botbin.wire.model import WireModel, dump
from botbin.wire.requests import (
    DEFAULT_BUDGET_TOKENS,
    ISO_DAY_PATTERN,
    MAX_BUDGET_TOKENS,
    MAX_K,
    ContextRequest,
    SearchRequest,
    problem,
)

if TYPE_CHECKING:
    from botbin.memory.conversation.observer import TurnObserver

log = logging.getLogger(__name__)
M = TypeVar("M", bound=WireModel)

INSTRUCTIONS = """botbin is the user's long-term memory: their markdown notes (MEMORY.md, AGENTS.md, daily notes in
memory/YYYY-MM-DD.md), searchable by meaning. Call get_context at the start of a task to receive the user's rules
(always follow them) plus the notes most relevant to the request, within a token budget. Use search_memory to
look something up, and remember to save a fact, decision or preference the user will want kept. Pass each turn of the
conversation (yours and the user's) to observe_turn: botbin distils them into the user's soul file
(memory/soul/<user>.md), which search_memory and get_context then find. A memory shown to you with an [id] (botbin's
hooks add them) expands to its whole note section, and its source turns, with expand_memory."""


FIRST_SYNC_WAIT_S = 20.0
"""How long a search waits for the start-up sync of a workspace whose index is still empty (most MCP clients give
a tool call 60 s)."""
INDEXING_WARNING = (
    "still indexing this workspace (a sync runs, e.g. the first one at start-up): notes not embedded yet may be "
    "missing from these hits; ask again shortly"
)

# Tool parameters: their JSON schema (descriptions, bounds, enums) is what an agent reads to call a tool.
Query = Annotated[str, Field(description="What to look for, in natural language.")]
# The bounded ones pass the raw value through (``Any``, their schema given whole): the typed request checks it
# (``_valid``), so an agent's ``k: "5"`` or ``k: true`` gets the message every surface gives, not a coercion.
K = Annotated[
    Any,
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_K, "description": "How many passages to return."}),
]
PathGlob = Annotated[
    str | None,
    Field(description='Only notes whose path matches this glob, e.g. "memory/2026-11-*" ("**" spans folders).'),
]
Tag = Annotated[
    str | None, Field(description="Only notes with this tag (frontmatter tags; a parent tag matches its children).")
]
Kind = Annotated[
    Any,
    WithJsonSchema(
        {
            "anyOf": [{"enum": ["hard", "soft", "lore"], "type": "string"}, {"type": "null"}],
            "description": "Only 'hard' rules, 'soft' rules (guidance) or 'lore' (everything else).",
        }
    ),
]


def _day(description: str) -> WithJsonSchema:
    """The schema of a date parameter (``DateFrom``, ``DateTo``)."""
    day = {"anyOf": [{"type": "string", "pattern": ISO_DAY_PATTERN}, {"type": "null"}], "description": description}
    return WithJsonSchema(day)


DateFrom = Annotated[Any, _day("Only notes dated on or after this day: YYYY, YYYY-MM or YYYY-MM-DD.")]
DateTo = Annotated[Any, _day("Only notes dated on or before this day: YYYY, YYYY-MM or YYYY-MM-DD.")]
RememberText = Annotated[
    str, Field(description="The fact, decision or preference to keep, in plain words (markdown allowed).")
]
Tags = Annotated[list[str] | None, Field(description='Optional single-word tags, e.g. ["decision", "billing"].')]
Task = Annotated[str, Field(description="The task or question at hand.")]
Budget = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_BUDGET_TOKENS,
            "description": "The most tokens the block may use (WordPiece tokens of all-MiniLM-L6-v2; about 1.3 per "
            "English word).",
        }
    ),
]
Role = Annotated[str, Field(description='Who speaks: "user", "assistant", or a name.')]
Content = Annotated[str, Field(description="What was said.")]
User = Annotated[str | None, Field(description='Whose memory this is (default "user"); picks the soul file.')]
Session = Annotated[
    str | None, Field(description="An id of this conversation; a new session distils the previous one's buffer first.")
]
Timestamp = Annotated[str | None, Field(description="When it was said, ISO 8601 (default: now).")]
ItemId = Annotated[
    str, Field(description="The [id] shown before a memory in your context (a unique prefix will do).", min_length=4)
]


class _BadArguments(BotbinError):
    """A tool's arguments are wrong in a way their schema cannot say (an empty query, a bad date)."""

    kind = "bad_request"


def _valid(model: type[M], fields: dict[str, Any]) -> M:
    """A tool's arguments as the typed request ``model`` (wire/requests.py), empty strings as absent. Raises
    _BadArguments naming the argument."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        raise _BadArguments(problem(exc)) from exc


def _answer(work: Callable[[], WireModel]) -> CallToolResult:
    """The tool result of ``work()``: its payload as structured content and as JSON text; a BotbinError
    becomes a tool error whose structured content is ``{kind, message}`` (botbin.wire.errors)."""
    try:
        payload = dump(work())
        is_error = False
    except BotbinError as exc:
        payload, is_error = dump(error_data(exc)), True
    text = payload["message"] if is_error else json.dumps(payload, ensure_ascii=False, indent=2)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload, is_error=is_error)


def _await_first_sync(service: MemoryService, first_sync: threading.Thread | None) -> None:
    """Wait (at most FIRST_SYNC_WAIT_S) for the start-up sync when the index holds nothing yet: on a workspace
    never synced, answering at once would say "no memory" when the notes are merely not embedded yet."""
    if first_sync is None or not first_sync.is_alive():
        return
    if len(service.index()[0]) == 0:
        first_sync.join(FIRST_SYNC_WAIT_S)


def create_server(
    service: MemoryService, observer: TurnObserver | None = None, first_sync: threading.Thread | None = None
) -> BotbinMCPServer:
    """An MCP server over ``service`` with the six tools registered; ``observer`` (a TurnObserver that
    syncs after each block; one is made when None) receives the turns of ``observe_turn``; ``first_sync``: the
    start-up sync's thread, which a search on a still-empty index waits for (_await_first_sync)."""
    server = BotbinMCPServer("botbin", instructions=INSTRUCTIONS, version=__version__)
    turns = observer if observer is not None else service.observer(sync_each_block=True)

    @server.tool()
    def search_memory(
        query: Query,
        k: K = 5,
        path_glob: PathGlob = None,
        tag: Tag = None,
        kind: Kind = None,
        date_from: DateFrom = None,
        date_to: DateTo = None,
    ) -> Annotated[CallToolResult, wire.SearchMemoryResult]:
        """Search the user's notes by meaning (hybrid semantic + keyword; among relevant passages, recent and
        durable notes come first). Returns the best passages with their note path, 0-based line range, heading
        path, kind ('hard' rule, 'soft' rule or 'lore') and score in [0, 1]."""

        def work() -> wire.SearchMemoryResult:
            filters = {"path_glob": path_glob, "tag": tag, "kind": kind, "date_from": date_from, "date_to": date_to}
            fields = {"query": query, "k": k, "filters": {key: v for key, v in filters.items() if v}}
            request = _valid(SearchRequest, fields)
            _await_first_sync(service, first_sync)
            result = service.recall(request)
            busy = result.indexing
            return wire.SearchMemoryResult(
                hits=[convert.memory_hit(h) for h in result.hits],
                degraded=result.degraded,
                stale=result.stale,
                warnings=list(result.warnings) + ([INDEXING_WARNING] if busy else []),
                indexed_at=result.indexed_at,
                indexing=busy,
            )

        return _answer(work)

    @server.tool()
    def remember(text: RememberText, tags: Tags = None) -> Annotated[CallToolResult, wire_agent.RememberToolResult]:
        """Save something to the user's memory: appends a timestamped entry to today's daily note
        (memory/YYYY-MM-DD.md) and indexes it at once, so search_memory finds it immediately."""

        def work() -> wire_agent.RememberToolResult:
            written, report = service.remember(text, tags or [])
            settings = service.settings
            reads_db = settings.backend == "postgres"  # search reads the database: only a publish makes it findable
            why = [f.reason for f in report.failed if f.path == written.path]
            if reads_db and not settings.postgres_publish:
                why.append("this workspace only reads the team database (postgres_publish = false)")
            elif reads_db and report.publish_error is not None:
                why.append(f"not published to the team database: {report.publish_error}")
            return convert.remembered_tool(written, indexed=not why, reason="; ".join(why) or None)

        return _answer(work)

    @server.tool()
    def get_context(
        query: Task, budget_tokens: Budget = DEFAULT_BUDGET_TOKENS
    ) -> Annotated[CallToolResult, wire_agent.ContextResult]:
        """The user's memory for a task, as one markdown block that fits budget_tokens: all of the user's
        hard rules (always), relevant guidance, their preferences, the latest notes verbatim, then the most
        related memories. Put `text` in your context and follow its rules."""
        request = {"query": query, "budget_tokens": budget_tokens}
        return _answer(lambda: convert.context(service.context(_valid(ContextRequest, request))))

    @server.tool()
    def memory_status() -> Annotated[CallToolResult, wire_status.WorkspaceStatus]:
        """How much is indexed: notes, chunks, last sync, the model, notes changed since, and rule conflicts."""
        return _answer(lambda: convert.workspace_status(service.status()))

    @server.tool()
    def observe_turn(
        role: Role, content: Content, user: User = None, session: Session = None, timestamp: Timestamp = None
    ) -> Annotated[CallToolResult, wire_agent.ObserveTurnResult]:
        """Record one conversation turn. Turns are buffered and distilled (every 5 turns, or when the topic
        changes) into bullet facts appended to the user's soul file, memory/soul/<user>.md, which is then
        indexed; the user's rules ("never ...", "always ...", "from now on ...") are kept verbatim."""
        return _answer(lambda: convert.observed(turns.observe_message(role, content, user, session, timestamp)))

    @server.tool()
    def expand_memory(id: ItemId) -> Annotated[CallToolResult, wire_hosts.ExpandResult]:
        """The whole note section behind a memory shown with an [id] in your context (botbin's hooks add them), and
        for a remembered conversation the turns it was distilled from. Use it when a memory's line is not enough."""
        return _answer(lambda: host_convert.expanded(service.hosts.expand(id)))

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


def main(workspace: Path, overrides: dict[str, Any] | None = None, service: MemoryService | None = None) -> int:
    """Serve MCP on stdio for ``workspace``; logs go to stderr. ``service``: that workspace's, already warming
    (``MemoryService.warm_in_background``); made and warmed here when None."""
    single_threaded_blas()  # each tool call embeds, then searches: BLAS threads would spin against the model's
    if service is None:
        service = MemoryService(workspace, overrides)
        service.warm_in_background()
    for warning in service.warnings:
        log.warning("%s", warning)
    first_sync = threading.Thread(target=_initial_sync, args=(service,), name="botbin-initial-sync", daemon=True)
    first_sync.start()
    observer = service.observer(sync_each_block=True)
    from botbin.cli.warm_server import WarmServer

    warm = WarmServer(service)  # `botbin search` in this workspace asks this process (cli/warm.py)
    warm.start()
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        create_server(service, observer, first_sync).run("stdio")
    except KeyboardInterrupt:
        log.info("stopped by a signal")
    finally:
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the flush is what a signal asked for
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _flush(observer)
        warm.stop()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, interrupt)
    if first_sync.is_alive() or any(t.name.startswith("botbin-warm") and t.is_alive() for t in threading.enumerate()):
        _leave_mid_sync()
    return 0


def _leave_mid_sync() -> None:
    """Exit now although the start-up sync (or the index and model warm-up) still runs: letting the interpreter
    finalize under a thread that is inside the model's native code aborts ("terminate called without an active
    exception", exit 134). What the sync wrote is safe (atomic files and a journal; sync/engine.py) and the next
    start carries on."""
    log.info("client gone while the first sync or the warm-up runs; exiting (the next start resumes the sync)")
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
