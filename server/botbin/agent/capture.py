"""An agent host's turns captured through the conversation pipeline (memory/conversation/: the admission gate, rules
kept verbatim, distillation into the user's soul file), each turn once, whatever the host sends again.

A turn with an id is skipped when the ledger (agent/ledger.py) has it or it waits in this process's buffer. Every
turn taken in is journaled (agent/journal.py) before ``ingest`` answers; the TurnObserver keeps up to
``turn_buffer_size`` turns in memory before it distils them (``pending`` in the report), and a server killed with
turns in its buffer leaves them in the journal, which the next server observes again: nothing is lost. A turn goes
into the ledger once it is on disk in its soul file (or the gate dropped it with its buffer).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from botbin.agent.journal import Entry, Journal
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
    duplicates: int
    """Turns captured before, or already buffered (by id)."""
    skipped: int
    """Empty turns."""
    admitted: int
    rules: int
    pending: tuple[str, ...]
    """Ids of the turns buffered (journaled, not distilled yet)."""
    written: tuple[str, ...]
    """Soul files written to (relative POSIX paths)."""


@dataclass(frozen=True)
class _Waiting:
    entry: Entry
    soul: str
    number: int


@dataclass
class _Tally:
    admitted: int = 0
    rules: int = 0
    written: set[str] = field(default_factory=set)


class Capture:
    """The turns of every host session of one workspace; thread-safe (one ingest at a time)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.ledger = Ledger(ws.output_dir)
        """Which turns are on disk (agent/ledger.py)."""
        self.journal = Journal(ws.output_dir)
        """The turns taken in and not distilled yet (agent/journal.py)."""
        self._observer = TurnObserver(ws)
        self._waiting: dict[str, list[_Waiting]] = {}
        """Per user, the buffered turns, in the order observed."""
        self._recovered = False
        self._lock = threading.Lock()

    def _known(self, turn_id: str) -> bool:
        return any(w.entry.id == turn_id for ws in self._waiting.values() for w in ws) or self.ledger.has(turn_id)

    def recover(self) -> None:
        """Observe again the journal's turns that a server before this one took in and did not distil (once per
        process; the next ingest does it when this is not called). Raises as ``ingest`` does."""
        with self._lock:
            self._recover()

    def _recover(self) -> None:
        if self._recovered:
            return
        waiting = {w.entry.id for ws in self._waiting.values() for w in ws}
        journaled = {e.id: e for e in self.journal.read() if e.id not in waiting and not self.ledger.has(e.id)}
        if journaled:
            log.info("%s: %d journaled turns not distilled yet, observed again", self.ws.root, len(journaled))
            self._observe(list(journaled.values()), _Tally())
        self._recovered = True

    def ingest(
        self, turns: Sequence[HostTurn], user: str | None = None, source: str | None = None, flush: bool = False
    ) -> IngestReport:
        """Take in the new ``turns`` (journaled before this returns: durable), observe them (and with ``flush``
        distil every buffer), then sync what was written.

        Raises OSError-based BotbinError when the journal cannot be written (nothing was taken in), BotbinError
        when a soul file cannot be written and ModelError when the model is unavailable (both after the journal:
        the turns are kept and observed again)."""
        with self._lock:
            self._recover()
            entries: list[Entry] = []
            duplicates = skipped = 0
            for turn in turns:
                if not turn.content.strip() or not turn.role.strip():
                    skipped += 1
                elif turn.id is not None and (self._known(turn.id) or any(e.id == turn.id for e in entries)):
                    duplicates += 1
                else:
                    entries.append(_entry(turn, user or DEFAULT_USER, source))
            try:
                self.journal.append(entries)
            except OSError as exc:
                raise BotbinError(
                    f"cannot journal the turns ({exc.strerror or exc}); none taken in", self.journal.path
                ) from exc
            tally = _Tally()
            self._observe(entries, tally)
            if flush:
                tally.written.update(d.soul_file for d in self._observer.flush() if d.status == "written")
                for name in list(self._waiting):
                    self._settle(name, 0)
            self._tidy()
            if tally.written:
                self._sync()
            pending = tuple(w.entry.id for ws in self._waiting.values() for w in ws)
            return IngestReport(len(entries), duplicates, skipped, tally.admitted, tally.rules, pending,
                                tuple(sorted(tally.written)))  # fmt: skip

    def _observe(self, entries: list[Entry], tally: _Tally) -> None:
        turns = (_turn(e) for e in entries)
        try:
            for entry, result in zip(entries, self._observer.observe_all(turns), strict=True):
                tally.admitted += result.admitted
                tally.rules += result.protected
                tally.written.update(d.soul_file for d in result.distilled if d.status == "written")
                self._waiting.setdefault(result.user, []).append(_Waiting(entry, result.soul_file, result.turn_number))
                self._settle(result.user, result.buffered)
        except BaseException:
            self._recovered = False  # the journal holds what was not observed: the next call observes it
            raise

    def _tidy(self) -> None:
        try:
            self.journal.keep_only([w.entry for ws in self._waiting.values() for w in ws])
        except OSError as exc:  # what it holds is in the ledger: read back, it is skipped
            log.warning("%s: cannot tidy the turn journal (%s)", self.journal.path, exc)

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
            self.ledger.add(Captured(w.entry.id, w.soul, w.number, w.entry.source) for w in done)
        except OSError as exc:  # the turns are on disk; at worst they are sent again and found duplicate
            log.warning("%s: cannot append to the captured-turn ledger (%s)", self.ledger.path, exc)

    def flush(self) -> None:
        """Distil every buffered turn now (the server stops). Logs rather than raises."""
        try:
            self.ingest([], flush=True)
        except Exception as exc:
            log.warning("could not distil the buffered host turns: %s", exc)


def _entry(turn: HostTurn, user: str, source: str | None) -> Entry:
    turn_id = turn.id if turn.id is not None else f"botbin-{uuid.uuid4().hex}"
    return Entry(turn_id, turn.role, turn.content, user, turn.timestamp, turn.session, turn.name, source)


def _turn(entry: Entry) -> Turn:
    """The pipeline's Turn of ``entry`` (a bad timestamp is dropped, not the turn)."""
    try:
        made = tool_turn(entry.role, entry.content, entry.user, entry.session, entry.timestamp)
    except TurnError:
        made = tool_turn(entry.role, entry.content, entry.user, entry.session, None)
    return replace(made, name=entry.name) if entry.name else made
