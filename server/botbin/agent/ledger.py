"""The captured-turn ledger: which turns of an agent host (by the host's own turn id) are on disk already, so that a
resumed, forked or compacted session, or a hook that sends a turn twice, is captured once; and where each came from,
so that ``expand`` reads a soul file block's turns back from their source.

One JSON object per line in ``captured-turns.jsonl`` beside ``sync-state.json`` (``id``, ``soul`` (the soul file),
``turn`` (its 1-based number there), ``source`` (a transcript path, or null)): appended and fsynced after the turns
are durable, never rewritten. It holds ids and paths, never what was said (an encrypted store stays so). A line
that cannot be read is skipped: at worst that turn is captured again, and the soul file's near-duplicate check
keeps the second copy out.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

LEDGER_FILE = "captured-turns.jsonl"


@dataclass(frozen=True)
class Captured:
    """One captured turn."""

    id: str
    """The host's id of the turn."""
    soul: str
    """Relative POSIX path of the soul file it went to."""
    turn: int
    """Its 1-based turn number in that soul file."""
    source: str | None
    """Where it came from (a transcript's path), if the host said."""


class Ledger:
    """The ledger of one workspace, kept in memory and brought up to date with what other processes appended
    (``botbin mcp`` expands what ``botbin serve`` captured); thread-safe."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LEDGER_FILE
        """The ledger file."""
        self._lock = threading.Lock()
        self._entries: dict[str, Captured] | None = None
        self._read_bytes = 0
        """Bytes of the file read so far (only ever appended to)."""

    def _load(self) -> dict[str, Captured]:
        """The entries, after reading what was appended since the last call."""
        entries = self._entries if self._entries is not None else {}
        self._entries = entries
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._read_bytes)
                tail = handle.read()
        except FileNotFoundError:
            return entries
        except OSError as exc:
            log.warning("%s: cannot read the captured-turn ledger (%s); turns may be captured again", self.path, exc)
            return entries
        complete = tail[: tail.rfind(b"\n") + 1]  # a line being appended is read next time
        self._read_bytes += len(complete)
        for line in complete.splitlines():
            entry = _entry(line)
            if entry is not None:
                entries[entry.id] = entry
        return entries

    def has(self, turn_id: str) -> bool:
        """True when the turn ``turn_id`` is on disk already."""
        with self._lock:
            return turn_id in self._load()

    def of_soul(self, soul: str, first: int, last: int) -> list[Captured]:
        """The captured turns of soul file ``soul`` numbered ``first`` .. ``last`` (inclusive), in number order."""
        with self._lock:
            found = [e for e in self._load().values() if e.soul == soul and first <= e.turn <= last]
        return sorted(found, key=lambda e: e.turn)

    def add(self, entries: Iterable[Captured]) -> None:
        """Append ``entries`` (their turns are durable now). Raises OSError if the ledger cannot be written."""
        fresh = list(entries)
        if not fresh:
            return
        data = "".join(json.dumps(e.__dict__, ensure_ascii=False) + "\n" for e in fresh).encode()
        with self._lock:
            known = self._load()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            known.update((e.id, e) for e in fresh)  # read back too, by the next _load: the same entries


def _entry(line: bytes) -> Captured | None:
    try:
        obj = json.loads(line)
        entry = Captured(str(obj["id"]), str(obj["soul"]), int(obj["turn"]), obj.get("source"))
    except (ValueError, KeyError, TypeError):
        return None
    return entry if entry.source is None or isinstance(entry.source, str) else None
