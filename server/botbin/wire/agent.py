"""Payloads of agent memory: ``botbin/context`` and ``botbin/remember`` (LSP), and the MCP tools
``get_context``, ``remember`` and ``observe_turn``."""

from __future__ import annotations

from pydantic import Field

from botbin.wire.model import WireModel
from botbin.wire.requests import ContextRequest
from botbin.wire.search import Range


class ContextParams(ContextRequest):
    """``botbin/context`` params: a ContextRequest, and which folder to ask."""

    uri: str | None = None
    """A note of the workspace folder to ask (default: the first folder)."""


class ContextItem(WireModel):
    """One piece of an assembled context."""

    path: str
    """Its note's path."""
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after the last (exclusive)."""
    text: str
    """The verbatim source text."""


class CutItem(ContextItem):
    """A candidate a tier left out, and why."""

    reason: str
    """``duplicate`` (it repeats a passage already chosen), ``budget`` (over the whole budget), ``share`` (over the
    tier's share of it) or ``after_cut`` (soft and recent are prefixes: an entry before it was left out)."""


class ContextTier(WireModel):
    """One tier of an assembled context."""

    name: str
    """``hard``, ``guidance``, ``soft``, ``recent`` or ``recalled``."""
    tier: str
    """Its number: ``1``, ``1.5``, ``2``, ``3`` or ``4``."""
    tokens: int
    """Tokens of this tier's rendered text."""
    items: list[ContextItem]
    """What the tier holds."""
    cut: list[CutItem]
    """Candidates left out, each with why."""


class ContextResult(WireModel):
    """``botbin/context`` and MCP ``get_context`` result."""

    text: str
    """The context as one markdown block."""
    used_tokens: int
    """Tokens ``text`` uses."""
    budget_tokens: int
    """The budget asked for."""
    indexing: bool
    """True when notes were still being indexed: the tiers in ``partialTiers`` may miss some."""
    partial_tiers: list[str]
    """Names of the tiers that may be incomplete."""
    tiers: list[ContextTier]
    """The tiers, in order."""


class RememberParams(WireModel):
    """``botbin/remember`` params: append ``text`` (with ``#tags``) to today's daily note ``memory/YYYY-MM-DD.md``."""

    text: str
    """What to keep (markdown allowed)."""
    tags: list[str] = Field(default_factory=list)
    """Tags without ``#``; each is appended as ``#tag``."""
    uri: str | None = None
    """A note of the workspace folder to remember in (default: the first folder)."""


class Remembered(WireModel):
    """Where a remembered entry was written."""

    path: str
    """The daily note's path relative to its workspace folder."""
    text: str
    """The line appended (``- HH:MM text #tag``)."""


class RememberResult(Remembered):
    """``botbin/remember`` result."""

    uri: str
    """The daily note's URI."""
    range: Range
    """Where the appended entry is in the note."""


class RememberToolResult(Remembered):
    """MCP ``remember`` result."""

    start_line: int
    """0-based first line of the entry."""
    end_line: int
    """0-based line after it (exclusive)."""
    indexed: bool
    """True when the note was indexed at once (search finds it; on the postgres backend: published too)."""
    reason: str | None = None
    """Why the entry, which is written, is not indexed yet (None when ``indexed``)."""


class DistilledBlock(WireModel):
    """A block distilled from buffered turns: written to the soul file, or skipped."""

    user: str
    """Whose memory."""
    soul_file: str
    """The soul file's path (``memory/soul/<user>.md``)."""
    first_turn: int
    """1-based number of the block's first turn."""
    last_turn: int
    """1-based number of its last turn."""
    status: str
    """``written``, ``duplicate`` or ``dry-run``."""
    cosine: float
    """Highest cosine to the blocks already in the soul file."""
    text: str
    """The distilled text."""


class ObserveTurnResult(WireModel):
    """MCP ``observe_turn`` result."""

    turn: int
    """The turn's 1-based number for its user."""
    buffered: int
    """Turns waiting in the user's buffer afterwards."""
    admitted: bool
    """The admission gate let the turn in."""
    protected: bool
    """A rule turn, kept verbatim."""
    score: float
    """The gate's score, in [0, 1]."""
    soul_file: str
    """The user's soul file."""
    distilled: list[DistilledBlock]
    """Blocks distilled because of this turn."""
