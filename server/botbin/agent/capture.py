"""An agent host's turns captured through the conversation pipeline (memory/conversation/: the admission gate, rules
kept verbatim, distillation into the user's soul file), each turn once, whatever the host sends again.

A turn with an id is skipped when the ledger (agent/ledger.py) has it or it waits in this process's buffer. The
TurnObserver keeps up to ``turn_buffer_size`` turns in memory before it distils them: those are ``pending`` in the
report, and a host sends them again when this server went away before they reached the disk (a killed server loses
nothing). A turn goes into the ledger only once it is on disk (or the gate dropped it with its buffer).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from botbin.agent.ledger import Captured, Ledger
from botbin.errors import BotbinError
from botbin.memory.conversation.observer import TurnObserver, tool_turn
from botbin.memory.conversation.turns import DEFAULT_USER, Turn, TurnError

if TYPE_CHECKING:
    from botbin.workspace import Workspace

log = logging.getLogger(__name__)


class HostTurn(Protocol):
    """One turn as a host sends it (wire/hosts.py's IngestTurn is one)."""

    @property
    def role(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def id(self) -> str | None:
        """The host's id of the turn (a transcript line's uuid)."""

    @property
    def timestamp(self) -> str | None:
        """ISO 8601, if known."""

    @property
    def session(self) -> str | None: ...
    @property
    def name(self) -> str | None:
        """The speaker's display name, if the host knows it."""


@dataclass(frozen=True)
class IngestReport:
    """What one ``ingest`` did."""

    accepted: int
    skipped: int
    """Captured before (by id), or empty."""
    admitted: int
    rules: int
    pending: tuple[str, ...]
    """Ids of the turns still buffered (not on disk yet)."""
    written: tuple[str, ...]
    """Soul files written to (relative POSIX paths)."""


@dataclass(frozen=True)
class _Waiting:
    id: str | None
    soul: str
    number: int
    source: str | None


class Capture:
    """The turns of every host session of one workspace; thread-safe (one ingest at a time)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.ledger = Ledger(ws.output_dir)
        """Which turns are on disk (agent/ledger.py)."""
        self._observer = TurnObserver(ws)
        self._waiting: dict[str, list[_Waiting]] = {}
        """Per user, the buffered turns, in the order observed."""
        self._lock = threading.Lock()

    def _known(self, turn_id: str | None) -> bool:
        if turn_id is None:
            return False
        return any(w.id == turn_id for ws in self._waiting.values() for w in ws) or self.ledger.has(turn_id)

    def _turn(self, turn: HostTurn, user: str) -> Turn | None:
        """The pipeline's Turn of ``turn`` (a bad timestamp is dropped, not the turn); None when it is empty."""
        if not turn.content.strip() or not turn.role.strip():
            return None
        try:
            made = tool_turn(turn.role, turn.content, user, turn.session, turn.timestamp)
        except TurnError:
            made = tool_turn(turn.role, turn.content, user, turn.session, None)
        return replace(made, name=turn.name) if turn.name else made

    def ingest(
        self, turns: Sequence[HostTurn], user: str | None = None, source: str | None = None, flush: bool = False
    ) -> IngestReport:
        """Observe the new ``turns`` (and with ``flush`` distil every buffer), then sync what was written.

        Raises BotbinError when a soul file cannot be written (nothing is lost: the turns stay pending) and
        ModelError when the model is unavailable."""
        who = user or DEFAULT_USER
        with self._lock:
            fresh: list[tuple[HostTurn, Turn]] = []
            skipped = 0
            for turn in turns:
                made = None if self._known(turn.id) else self._turn(turn, who)
                if made is None or any(t.id is not None and t.id == turn.id for t, _ in fresh):
                    skipped += 1
                    continue
                fresh.append((turn, made))
            admitted = rules = 0
            written: set[str] = set()
            for (turn, _), result in zip(fresh, self._observer.observe_all(t for _, t in fresh), strict=True):
                admitted += result.admitted
                rules += result.protected
                written.update(d.soul_file for d in result.distilled if d.status == "written")
                waiting = _Waiting(turn.id, result.soul_file, result.turn_number, source)
                self._waiting.setdefault(result.user, []).append(waiting)
                self._settle(result.user, result.buffered)
            if flush:
                written.update(d.soul_file for d in self._observer.flush() if d.status == "written")
                for name in list(self._waiting):
                    self._settle(name, 0)
            if written:
                self._sync()
            pending = tuple(w.id for ws in self._waiting.values() for w in ws if w.id is not None)
            return IngestReport(len(fresh), skipped, admitted, rules, pending, tuple(sorted(written)))

    def _sync(self) -> None:
        """Index the soul files just written; a failure (a locked store, another process syncing) is logged: the
        notes are on disk and the next sync indexes them."""
        try:
            self.ws.sync()
        except BotbinError as exc:
            log.warning("captured turns written but not indexed yet: %s", exc)

    def _settle(self, user: str, buffered: int) -> None:
        """The turns of ``user`` no longer buffered (all but the last ``buffered``) are on disk: into the ledger."""
        waiting = self._waiting.get(user, [])
        done, self._waiting[user] = waiting[: len(waiting) - buffered], waiting[len(waiting) - buffered :]
        try:
            self.ledger.add(Captured(w.id, w.soul, w.number, w.source) for w in done if w.id is not None)
        except OSError as exc:  # the turns are on disk; at worst they are sent again and found duplicate
            log.warning("%s: cannot append to the captured-turn ledger (%s)", self.ledger.path, exc)

    def flush(self) -> None:
        """Distil every buffered turn now (the server stops). Logs rather than raises."""
        try:
            self.ingest([], flush=True)
        except Exception as exc:
            log.warning("could not distil the buffered host turns: %s", exc)
