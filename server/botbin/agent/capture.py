"""An agent host's turns captured through the conversation pipeline (memory/conversation/: the admission gate, rules
kept verbatim, distillation into the user's soul file), each turn once, whatever the host sends again.

A turn with an id is skipped when the ledger (agent/ledger.py) has it or it waits in this process's buffer. Every
turn taken in is journaled (agent/journal.py) before ``ingest`` answers; the TurnObserver keeps up to
``turn_buffer_size`` turns in memory before it distils them (``pending`` in the report), and a server killed with
turns in its buffer leaves them in the journal, which the next server observes again: nothing is lost. A turn goes
into the ledger once it is on disk in its soul file (or the gate dropped it with its buffer).

What a host sends is mended, never refused: a NUL or a lone surrogate becomes U+FFFD and a label's control
characters spaces (a refused turn would be sent again by every later hook, and block the ones after it). In an
encrypted store the journal and the ledger are sealed (agent/host_files.py); in one that is locked (no passphrase)
nothing is journaled: every turn goes to its soul file at once, a note in the clear like every note (the store's
encryption covers the output folder), and the report says why it is not indexed yet. No one could retry a host's
capture, so what was said is kept; ``remember`` in a locked store refuses instead (its caller can retry).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from botbin.agent.host_files import HostKey, convert_file, host_key
from botbin.agent.journal import JOURNAL_AAD, JOURNAL_FILE, Entry, Journal
from botbin.agent.ledger import LEDGER_AAD, LEDGER_FILE, Captured, Ledger
from botbin.errors import BotbinError, PassphraseError
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
    not_indexed: str | None = None
    """Why the soul files written are not indexed yet (a locked store, another process syncing); None when they
    are, or when nothing was written."""


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
        timeout = ws.settings.lock_timeout_s
        self.ledger = Ledger(ws.output_dir, self._key, timeout)
        """Which turns are on disk (agent/ledger.py)."""
        self.journal = Journal(ws.output_dir, timeout)
        """The turns taken in and not distilled yet (agent/journal.py)."""
        self._observer = TurnObserver(ws, refuse_locked=False)
        self._waiting: dict[str, list[_Waiting]] = {}
        """Per user, the buffered turns, in the order observed."""
        self._recovered = False
        self._lock = threading.Lock()
        self._now: HostKey | None = None
        """The store's host key for the ingest under way (None: read it anew)."""

    def _key(self) -> HostKey:
        return self._now if self._now is not None else host_key(self.ws)

    def _known(self, turn_id: str) -> bool:
        return any(w.entry.id == turn_id for ws in self._waiting.values() for w in ws) or self.ledger.has(turn_id)

    def recover(self) -> None:
        """Observe again the journal's turns that a server before this one took in and did not distil (once per
        process; the next ingest does it when this is not called). Raises as ``ingest`` does."""
        with self._lock:
            self._now = host_key(self.ws)
            try:
                self._recover(self._now)
            finally:
                self._now = None

    def _recover(self, key: HostKey) -> None:
        if self._recovered:
            return
        waiting = {w.entry.id for ws in self._waiting.values() for w in ws}
        journaled = {e.id: e for e in self.journal.read(key) if e.id not in waiting and not self.ledger.has(e.id)}
        if journaled:
            log.info("%s: %d journaled turns not distilled yet, observed again", self.ws.root, len(journaled))
            self._observe(list(journaled.values()), _Tally())
        self._recovered = True

    def ingest(
        self, turns: Sequence[HostTurn], user: str | None = None, source: str | None = None, flush: bool = False
    ) -> IngestReport:
        """Take in the new ``turns`` (journaled before this returns: durable), observe them (and with ``flush``
        distil every buffer), then sync what was written. In a locked store nothing is journaled and every buffer is
        distilled at once (see the module docstring).

        Raises OSError-based BotbinError when the journal cannot be written (nothing was taken in), BotbinError
        when a soul file cannot be written and ModelError when the model is unavailable (both after the journal:
        the turns are kept and observed again)."""
        with self._lock:
            self._now = key = host_key(self.ws)
            try:
                return self._ingest(turns, user, source, flush or key.locked is not None, key)
            finally:
                self._now = None

    def _ingest(
        self, turns: Sequence[HostTurn], user: str | None, source: str | None, flush: bool, key: HostKey
    ) -> IngestReport:
        self._recover(key)
        entries: list[Entry] = []
        duplicates = skipped = 0
        for turn in turns:
            if not turn.content.strip() or not turn.role.strip():
                skipped += 1
            elif turn.id is not None and (self._known(turn.id) or any(e.id == turn.id for e in entries)):
                duplicates += 1
            else:
                entries.append(_entry(turn, user or DEFAULT_USER, source))
        if key.locked is None:
            try:
                self.journal.append(entries, key)
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
        self._tidy(key)
        not_indexed = self._sync(key) if tally.written else None
        pending = tuple(w.entry.id for ws in self._waiting.values() for w in ws)
        return IngestReport(len(entries), duplicates, skipped, tally.admitted, tally.rules, pending,
                            tuple(sorted(tally.written)), not_indexed)  # fmt: skip

    def _observe(self, entries: list[Entry], tally: _Tally) -> None:
        made = [(e, _turn(e)) for e in entries]
        try:
            results = self._observer.observe_all(t for _, t in made)
            for (entry, _), result in zip(made, results, strict=True):
                tally.admitted += result.admitted
                tally.rules += result.protected
                tally.written.update(d.soul_file for d in result.distilled if d.status == "written")
                self._waiting.setdefault(result.user, []).append(_Waiting(entry, result.soul_file, result.turn_number))
                self._settle(result.user, result.buffered)
        except BaseException:
            self._recovered = False  # the journal holds what was not observed: the next call observes it
            raise

    def _tidy(self, key: HostKey) -> None:
        try:
            self.journal.keep_only([w.entry for ws in self._waiting.values() for w in ws], key)
        except (OSError, BotbinError) as exc:  # what it holds is in the ledger: read back, it is skipped
            log.warning("%s: cannot tidy the turn journal (%s)", self.journal.path, exc)

    def _sync(self, key: HostKey) -> str | None:
        """Index the soul files just written; why not, when they cannot be now (a locked store, another process
        syncing): the notes are on disk, logged, and the next sync indexes them."""
        if key.locked is not None:
            why = f"not indexed: no passphrase ({key.locked}); the next sync that has it indexes them"
            log.warning("captured turns written to their soul files, %s", why)
            return why
        try:
            self.ws.sync()
        except PassphraseError as exc:
            return f"not indexed: no passphrase ({exc.reason}); the next sync that has it indexes them"
        except BotbinError as exc:
            log.warning("captured turns written but not indexed yet: %s", exc)
            return f"not indexed yet ({exc}); the next sync indexes them"
        return None

    def _settle(self, user: str, buffered: int) -> None:
        """The turns of ``user`` no longer buffered (all but the last ``buffered``) are on disk: into the ledger."""
        waiting = self._waiting.get(user, [])
        done, self._waiting[user] = waiting[: len(waiting) - buffered], waiting[len(waiting) - buffered :]
        try:
            self.ledger.add(Captured(w.entry.id, w.soul, w.number, w.entry.source) for w in done)
        except (OSError, BotbinError) as exc:  # the turns are on disk; at worst they are sent again, found duplicate
            log.warning("%s: cannot append to the captured-turn ledger (%s)", self.ledger.path, exc)

    def flush(self) -> None:
        """Distil every buffered turn now (the server stops). Logs rather than raises."""
        try:
            self.ingest([], flush=True)
        except Exception as exc:
            log.warning("could not distil the buffered host turns: %s", exc)


@contextmanager
def following_host_keys(ws: Workspace) -> Iterator[None]:
    """Around a sync that may encrypt or decrypt the store: afterwards the journal and the ledger are in the store's
    new form (agent/host_files.py ``convert_file``), converted with the key the store had before (what opens them
    after a decryption). Logs rather than raises: a file left as it was is converted by the next capture."""
    paths = {ws.output_dir / JOURNAL_FILE: JOURNAL_AAD, ws.output_dir / LEDGER_FILE: LEDGER_AAD}
    if not any(os.path.lexists(p) for p in paths):
        yield
        return
    old = host_key(ws)
    yield
    new = host_key(ws)
    for path, aad in paths.items():
        try:
            if new != old:
                convert_file(ws.output_dir, path, aad, old, new, ws.settings.lock_timeout_s)
        except (OSError, BotbinError) as exc:
            log.warning("%s: not converted to the store's encryption now (%s); the next capture does it", path, exc)


_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def mended(text: str) -> str:
    """``text`` with each NUL and lone surrogate replaced by U+FFFD (a soul file holding a NUL is binary: never
    indexed)."""
    return _NOT_TEXT.sub("\ufffd", text)


def _label(text: str | None) -> str | None:
    """A name, role or session as a soul file's one line takes it: ``mended``, control characters as spaces,
    stripped (None when nothing is left)."""
    return (_CONTROL.sub(" ", mended(text)).strip() or None) if text is not None else None


def _entry(turn: HostTurn, user: str, source: str | None) -> Entry:
    turn_id = turn.id if turn.id is not None else f"botbin-{uuid.uuid4().hex}"
    return Entry(mended(turn_id), _label(turn.role) or "user", mended(turn.content), _label(user) or DEFAULT_USER,
                 _label(turn.timestamp), _label(turn.session), _label(turn.name), _label(source))  # fmt: skip


def _turn(entry: Entry) -> Turn:
    """The pipeline's Turn of ``entry`` (a bad timestamp is dropped, not the turn; an entry read back from the
    journal is mended again)."""
    role, content = _label(entry.role) or "user", mended(entry.content)
    user, session = _label(entry.user), _label(entry.session)
    try:
        made = tool_turn(role, content, user, session, entry.timestamp)
    except TurnError:
        made = tool_turn(role, content, user, session, None)
    name = _label(entry.name)
    return replace(made, name=name) if name else made
