"""Payloads of the host ops: what an agent host's plugin (the Claude Code hooks, the OpenClaw context engine) asks a
running botbin server over its warm socket (cli/warm.py), one JSON line each way.

A request is ``{"v": HOST_PROTOCOL, "op": <HostOp>, ...the op's params}``; the answer is ``{"v": HOST_PROTOCOL,
"ok": true, ...the op's result}`` or ``{"v": HOST_PROTOCOL, "ok": false, "error": {kind, message}}`` (ErrorData).
Token counts are WordPiece tokens of all-MiniLM-L6-v2 (about 1.3 per English word), botbin's one counter; they
approximate the host model's own."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from botbin.wire.errors import ErrorData
from botbin.wire.model import WireModel
from botbin.wire.requests import MAX_BUDGET_TOKENS

HOST_PROTOCOL: Final = 1
"""Version of the host ops: a server of another version answers ``ok: false`` with kind ``bad_request``."""
#: The host ops.
HostOp = Literal["session_context", "recall", "ingest", "expand", "assemble", "compact"]
#: Which tier of the context an item comes from (agent/context.py).
TierName = Literal["hard", "guidance", "soft", "recent", "recalled"]


class HostEnvelope(WireModel):
    """The head of every host request, beside the op's params."""

    v: int
    """HOST_PROTOCOL."""
    op: HostOp
    """Which op."""


class HostReplyHead(WireModel):
    """The head of every host answer, beside the op's result (when ``ok``) or ``error`` (when not)."""

    v: int
    """HOST_PROTOCOL."""
    ok: bool
    """True when the op ran; its result's fields sit beside this one."""
    error: ErrorData | None = None
    """Why it did not run (``ok`` false). ``bad_request`` from ``session_context`` or ``assemble`` with valid params
    means the hard rules alone exceed the budget (the message gives their size); ``locked``: an encrypted store
    without its passphrase."""


class HostItem(WireModel):
    """One piece of memory put before the model, with the short id that ``expand`` takes."""

    id: str
    """Short id (hex): ``expand`` gives the item's whole section and, for a captured conversation, its turns."""
    tier: TierName
    """The tier it fills."""
    path: str
    """Its note's workspace-relative path."""
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after the last (exclusive)."""
    text: str
    """The verbatim source text."""
    score: float
    """Agent recall score in [0, 1] (recalled items); 0 for the other tiers."""


class SessionContextParams(WireModel):
    """``session_context``: what a session starts with (hard rules, preferences and the recent tail of the latest
    daily note, by the tier law of ``get_context``), no search and no model needed."""

    budget_tokens: int = Field(default=1500, ge=1)
    """The most tokens ``text`` may use."""
    session: str | None = None
    """The host's session id: the items ``recall`` already gave this session are forgotten (a new context
    window starts: a start, resume, clear or compaction)."""


class SessionContextResult(WireModel):
    """``session_context`` result."""

    text: str
    """The block to put before the model (markdown); empty when the workspace has nothing for it."""
    used_tokens: int
    """Tokens ``text`` uses (never over ``budgetTokens``)."""
    budget_tokens: int
    """The budget asked for."""
    rules: int
    """Hard rules in ``text`` (always all of them)."""
    items: list[HostItem]
    """What ``text`` holds."""
    indexing: bool
    """True while notes are still being indexed (the rules are read from the notes themselves)."""


class RecallParams(WireModel):
    """``recall``: memories relevant to a prompt (the relevance floor applied), within a budget."""

    prompt: str
    """The user's prompt."""
    budget_tokens: int = Field(default=600, ge=1)
    """The most tokens ``text`` may use."""
    k: int = Field(default=5, ge=1, le=50)
    """At most this many items."""
    session: str | None = None
    """The host's session id: an item already given to this session (since its last ``session_context``) is not
    given again (it is still in the conversation)."""


class RecallResult(WireModel):
    """``recall`` result; ``text`` is empty when nothing clears the relevance floor."""

    text: str
    """The block to put before the model (markdown, each item with its id); empty when there is nothing."""
    used_tokens: int
    """Tokens ``text`` uses (never over ``budgetTokens``)."""
    budget_tokens: int
    """The budget asked for."""
    items: list[HostItem]
    """What ``text`` holds, best first."""
    repeated: int
    """Relevant items left out because this session already has them."""
    degraded: bool
    """True when the model was unavailable and the search used words only."""


class IngestTurn(WireModel):
    """One turn of a conversation."""

    role: str
    """``user``, ``assistant`` or a speaker's name."""
    content: str
    """What was said (plain text)."""
    id: str | None = None
    """The host's id of the turn (a transcript line's uuid): a turn whose id was captured before is skipped, so a
    resumed, forked or compacted session is captured once."""
    timestamp: str | None = None
    """When it was said, ISO 8601."""
    session: str | None = None
    """The conversation's id (a new session distils the previous one's buffer first)."""
    name: str | None = None
    """The speaker's display name, when the host knows it."""


class IngestParams(WireModel):
    """``ingest``: turns through the conversation pipeline (admission gate, rules kept verbatim as guidance,
    distillation) into the user's soul file, which is then indexed."""

    turns: list[IngestTurn] = Field(default_factory=list)
    """The new turns, in order."""
    user: str | None = None
    """Whose memory (picks the soul file; default ``user``)."""
    source: str | None = None
    """Where the turns came from (a transcript's path): ``expand`` reads a captured turn back from it."""
    flush: bool = False
    """Distil every buffered turn now (a session's end, a compaction): afterwards ``pending`` is empty."""


class IngestResult(WireModel):
    """``ingest`` result."""

    accepted: int
    """Turns taken in: journaled before this answer, so a server killed later loses none of them."""
    duplicates: int
    """Turns left out because their id was captured before or is buffered already."""
    skipped: int
    """Empty turns left out."""
    admitted: int
    """Of the accepted, those the admission gate let in (the rest: small talk, repeats)."""
    rules: int
    """Of the accepted, rules the user gave (kept verbatim)."""
    pending: list[str]
    """Ids of the turns buffered, not distilled yet (journaled: the next server distils them if this one dies)."""
    written: list[str]
    """Soul files written to."""
    not_indexed: str | None = None
    """Why the soul files written are not searchable yet (``not indexed: no passphrase (...)`` in an encrypted store
    the server has no passphrase for; another process syncing); null when they are, or when nothing was written."""


class ExpandParams(WireModel):
    """``expand``: an item's whole section, and the turns it was distilled from."""

    id: str = Field(min_length=4)
    """An item's id (a unique prefix of at least 4 characters is enough)."""


class SourceTurn(WireModel):
    """A captured turn read back from its source."""

    id: str
    """The host's id of the turn."""
    role: str
    """Who spoke."""
    content: str
    """What was said."""
    timestamp: str | None
    """When, ISO 8601, if known."""


class ExpandResult(WireModel):
    """``expand`` result."""

    id: str
    """The item's full short id."""
    path: str
    """Its note."""
    start_line: int
    """0-based first line of the section."""
    end_line: int
    """0-based line after the section (exclusive)."""
    heading_path: list[str]
    """Headings above the section."""
    text: str
    """The whole section, verbatim."""
    turns: list[SourceTurn]
    """For a captured conversation: the turns of the section's block, read from their source (none when the
    source is gone or the note is not a soul file)."""


class HostMessage(WireModel):
    """A message of the host's conversation."""

    role: str
    """``user``, ``assistant``, ``system``, ``tool``."""
    content: str
    """Its text."""
    id: str | None = None
    """The host's id of the message, if it has one."""


class AssembleParams(WireModel):
    """``assemble``: the memory for the next model call, as a system prompt addition within the budget."""

    messages: list[HostMessage] = Field(default_factory=list)
    """The conversation so far (the last user message is the query unless ``prompt`` is given)."""
    budget_tokens: int = Field(ge=1, le=MAX_BUDGET_TOKENS)
    """The most tokens the addition may use."""
    prompt: str | None = None
    """The query (default: the last user message)."""
    max_chars: int | None = Field(default=None, ge=1)
    """At most this many characters as well (a host that counts characters): whole items are left out, never cut."""
    session: str | None = None
    """The host's session id (for the server's log)."""


class AssembleResult(WireModel):
    """``assemble`` result."""

    system_prompt_addition: str
    """Rules, guidance, preferences, the recent tail and recalled memories (markdown); never over the budget (nor
    ``maxChars``)."""
    used_tokens: int
    """Tokens it uses."""
    budget_tokens: int
    """The budget asked for."""
    items: list[HostItem]
    """What it holds."""
    indexing: bool
    """True while notes are still being indexed."""


class CompactParams(WireModel):
    """``compact``: older messages folded into one extractive summary (rules kept verbatim). Stateless."""

    messages: list[HostMessage]
    """The messages to fold, oldest first."""
    budget_tokens: int = Field(ge=1)
    """The most tokens the summary may use."""


class CompactResult(WireModel):
    """``compact`` result, with the summary's confidence measured in embedding space."""

    summary: str
    """The summary (markdown bullets, each ``- role: words``); never over the budget."""
    tokens_before: int
    """Tokens of the messages folded."""
    tokens_after: int
    """Tokens of ``summary``."""
    confidence: float
    """How well the summary represents the messages, in [0, 1]: the cosine of its embedding to the mean of theirs
    (a negative cosine is 0)."""
    coverage: float
    """Share of the messages with substance that some kept sentence represents (cosine >= 0.5), in [0, 1]."""
    covered: int
    """Messages the summary replaces: all of those sent (a prefix of the conversation)."""
    rules_kept: int
    """Rules the user gave, kept verbatim."""
    messages: int
    """Messages folded."""


#: Each op's params model.
PARAMS_OF: dict[str, type[WireModel]] = {
    "session_context": SessionContextParams,
    "recall": RecallParams,
    "ingest": IngestParams,
    "expand": ExpandParams,
    "assemble": AssembleParams,
    "compact": CompactParams,
}
HOST_PARAMS: tuple[type[WireModel], ...] = (HostEnvelope, *PARAMS_OF.values())
HOST_RESULTS: tuple[type[WireModel], ...] = (
    HostReplyHead,
    SessionContextResult,
    RecallResult,
    IngestResult,
    ExpandResult,
    AssembleResult,
    CompactResult,
)
