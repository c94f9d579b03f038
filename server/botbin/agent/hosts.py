"""What an agent host's plugin gets (the Claude Code hooks, the OpenClaw context engine; wire/hosts.py): the context
a session starts with, memories recalled for each prompt, a context block for each model call, compaction, the
turns captured (agent/capture.py), and ``expand`` of an item's short id (agent/expand.py).

A session starts with what ``get_context`` puts first, by the same tier law (agent/context.py): the hard rules and
preferences of the instruction notes, read from the notes on disk (current even when one changed since the last
sync, and there when the store is locked), and the latest daily note's recent entries. Each prompt then gets the
memories that clear agent recall's relevance floor (search/pipeline.py), each with its short id, none that this
session was given already (they are still in its conversation), within the budget.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from botbin.agent.capture import Capture, HostTurn, IngestReport
from botbin.agent.context import Candidates, ContextResult, Item, assemble
from botbin.agent.expand import Expanded, chunk_id, expand, ids_of, text_id
from botbin.agent.gather import build_context, latest_daily, recent_entries
from botbin.agent.rules import rules_on_disk
from botbin.errors import BotbinError
from botbin.memory.conversation.compact import Compaction, compact
from botbin.wire.requests import ContextRequest, SearchRequest

if TYPE_CHECKING:
    from botbin.index.hits import Hit
    from botbin.search.pipeline import Searcher

log = logging.getLogger(__name__)

RECALL_HEADER = "## Related memories (botbin; the expand_memory tool gives an [id]'s whole section)"
#: A recalled chunk longer than this (tokens) is shown by its best sentence; ``expand`` gives the rest.
ITEM_MAX_TOKENS = 120
#: Sessions whose given items are remembered (the oldest forgotten first).
MAX_SESSIONS = 256
#: Seconds a prompt's recall waits for the session's start-up sync (under the hook's 2 s time limit): a note
#: written since the last session is then found by the session's first prompt.
SYNC_WAIT_S = 1.5


@dataclass(frozen=True)
class HostItem:
    """One piece of memory put before a model."""

    id: str
    """Short id for ``expand``."""
    tier: str
    """agent/context.py's tier name."""
    item: Item


@dataclass(frozen=True)
class HostBlock:
    """A block of memory for a host: its text, its items and the tokens it uses."""

    text: str
    """Markdown; empty when there is nothing."""
    used_tokens: int
    budget_tokens: int
    items: tuple[HostItem, ...]
    indexing: bool = False
    """True while the notes are being indexed."""
    rules: int = 0
    """Hard rules in ``text``."""
    repeated: int = 0
    """Relevant items left out because the session has them."""
    degraded: bool = False
    """True when the search used words only (no model)."""


class HostMemory:
    """The host ops of one workspace. Thread-safe."""

    def __init__(self, searcher: Searcher) -> None:
        self.searcher = searcher
        self.ws = searcher.ws
        self.capture = Capture(self.ws)
        """Turns in (agent/capture.py)."""
        self._given: OrderedDict[str, set[str]] = OrderedDict()
        self._lock = threading.Lock()
        self._syncing: threading.Thread | None = None
        self._used = False
        """True once an op ran: only then does ``close`` distil (a server no host talked to touches no file)."""

    def _count(self, text: str) -> int:
        return self.ws.models.counter.count(text)

    # -- a session's start ----------------------------------------------------------------------------
    def session_context(self, budget_tokens: int, session: str | None = None) -> HostBlock:
        """Rules, preferences and the recent tail within ``budget_tokens``; starts a background sync so the
        session's first prompt recalls what changed since. Raises ContextBudgetError if the hard rules alone
        exceed the budget."""
        self._used = True
        self._sync_in_background()
        rules = rules_on_disk(self.ws)
        now = datetime.now().astimezone()
        latest = latest_daily(self._tracked(), now)
        recent = recent_entries(self.ws.root, latest, self.ws.settings.follow_symlinks) if latest else []
        candidates = Candidates(
            hard=[Item(d.path, d.start_line, d.end_line, d.text) for d in rules if d.kind == "hard"],
            soft=[Item(d.path, d.start_line, d.end_line, d.text) for d in rules if d.kind == "soft"],
            recent=recent,
        )
        result = assemble(candidates, budget_tokens, self._count)
        items = self._with_ids(result)
        if session is not None:  # a new context window: it holds these, and nothing recalled before
            with self._lock:
                self._given.pop(session, None)
            self._remember_given(session, [i.id for i in items])
        hard = sum(1 for i in items if i.tier == "hard")
        return HostBlock(result.text, result.used_tokens, budget_tokens, items, self.ws.indexing, rules=hard)

    def _tracked(self) -> list[str]:
        from botbin.sync.scan import scan_workspace

        try:
            return list(scan_workspace(self.ws.root, self.ws.settings).files)
        except BotbinError:
            return []

    def _sync_in_background(self) -> None:
        """Sync the workspace on a daemon thread (one at a time); a failure is logged."""

        def run() -> None:
            try:
                self.capture.recover()  # turns a killed server journaled
                self.ws.sync()
            except BotbinError as exc:
                log.info("background sync of %s: %s", self.ws.root, exc)

        with self._lock:
            if self._syncing is None or not self._syncing.is_alive():
                self._syncing = threading.Thread(target=run, name="botbin-host-sync", daemon=True)
                self._syncing.start()

    def _with_ids(self, result: ContextResult) -> tuple[HostItem, ...]:
        pairs = [(t.name, i) for t in result.tiers for i in t.items]
        try:
            index, _ = self.ws.index.get()
            refs = index.chunk_refs({i.path for _, i in pairs})
        except BotbinError:  # a locked store: the rules are there, their ids cannot be expanded
            refs = []
        ids = ids_of(refs, [(i.path, i.start_line, i.text) for _, i in pairs])
        return tuple(HostItem(item_id, tier, item) for item_id, (tier, item) in zip(ids, pairs, strict=True))

    # -- each prompt ----------------------------------------------------------------------------------
    def recall(self, prompt: str, budget_tokens: int, k: int = 5, session: str | None = None) -> HostBlock:
        """Memories relevant to ``prompt`` (not instruction notes: their rules came with the session), at most
        ``k``, within ``budget_tokens``; an empty block when nothing clears the relevance floor. Raises
        BotbinError (a locked store, a missing workspace)."""
        self._used = True
        if not prompt.strip():
            return HostBlock("", 0, budget_tokens, ())
        syncing = self._syncing
        if syncing is not None and syncing.is_alive():
            syncing.join(SYNC_WAIT_S)
        result = self.searcher.recall(SearchRequest(query=prompt, k=max(2 * k, 10)), reinforce=False)
        with self._lock:
            given = set(self._given.get(session, ())) if session is not None else set()
        chosen: list[tuple[Hit, HostItem, str]] = []
        used, repeated = self._count(RECALL_HEADER), 0
        for hit in result.hits:
            if hit.instruction:
                continue
            item_id = chunk_id(hit.path, hit.text_md5) if hit.text_md5 else text_id(hit.path, hit.text)
            if item_id in given:
                repeated += 1
                continue
            line = self._line(item_id, hit)
            need = self._count(line)
            if used + need <= budget_tokens and len(chosen) < k:
                item = Item(hit.path, hit.start_line, hit.end_line, hit.text, hit.score)
                chosen.append((hit, HostItem(item_id, "recalled", item), line))
                used += need
        text = "\n".join([RECALL_HEADER, *(line for _, _, line in chosen)]) if chosen else ""
        if session is not None and chosen:
            self._remember_given(session, [i.id for _, i, _ in chosen])
        self.searcher.lifecycle.reinforce([h for h, _, _ in chosen])
        items = tuple(i for _, i, _ in chosen)
        return HostBlock(text, self._count(text) if text else 0, budget_tokens, items, repeated=repeated,
                         degraded=result.degraded)  # fmt: skip

    def _line(self, item_id: str, hit: Hit) -> str:
        """``- [id] words (path:line)``: the chunk, or its best sentence when it is long."""
        short = self._count(hit.text) <= ITEM_MAX_TOKENS or not hit.snippet
        body, line = (hit.text, hit.start_line) if short else (hit.snippet, hit.snippet_start_line)
        return f"- [{item_id}] {Item(hit.path, line, line + 1, body).render()[2:]}"

    def _remember_given(self, session: str, ids: Sequence[str]) -> None:
        with self._lock:
            self._given.setdefault(session, set()).update(ids)
            self._given.move_to_end(session)
            while len(self._given) > MAX_SESSIONS:
                self._given.popitem(last=False)

    # -- each model call (OpenClaw) -------------------------------------------------------------------
    def assemble(self, request: ContextRequest) -> HostBlock:
        """The whole context for ``request`` (every tier of get_context) within its ``budget_tokens`` and, when
        given, ``max_chars`` (agent/gather.py). Raises ContextBudgetError if the hard rules alone exceed either."""
        self._used = True
        result = build_context(self.searcher, request)
        budget_tokens = request.budget_tokens
        items = self._with_ids(result)
        hard = sum(1 for i in items if i.tier == "hard")
        return HostBlock(result.text, result.used_tokens, budget_tokens, items, result.indexing, rules=hard)

    def compact(self, messages: Sequence[tuple[str, str]], budget_tokens: int) -> Compaction:
        """``messages`` folded into one summary of at most ``budget_tokens`` (memory/conversation/compact.py).
        Raises ModelError when the model is unavailable."""

        def embed(texts: list[str]) -> np.ndarray:
            return np.asarray(self.ws.models.embedder.embed(texts), dtype=np.float32)

        return compact(messages, budget_tokens, embed, self._count)

    def expand(self, item_id: str) -> Expanded:
        """The section and source turns of item ``item_id`` (agent/expand.py). Raises ExpandError, BotbinError."""
        self._used = True
        return expand(self.ws, self.capture.ledger, item_id)

    def ingest(
        self, turns: Sequence[HostTurn], user: str | None = None, source: str | None = None, flush: bool = False
    ) -> IngestReport:
        """A host's turns taken in (agent/capture.py ``Capture.ingest``)."""
        self._used = True
        return self.capture.ingest(turns, user, source, flush)

    def close(self) -> None:
        """Distil the buffered turns (the server stops); nothing when no op ran."""
        if self._used:
            self.capture.flush()
