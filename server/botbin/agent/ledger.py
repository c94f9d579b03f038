"""The captured-turn ledger: which turns of an agent host (by the host's own turn id) are on disk already, so that a
resumed, forked or compacted session, or a hook that sends a turn twice, is captured once; and where each came from,
so that ``expand`` reads a soul file block's turns back from their source.

One JSON object per line in ``captured-turns.jsonl`` beside ``sync-state.json`` (``id``, ``soul`` (the soul file),
``turn`` (its 1-based number there), ``source`` (a transcript path, or null)): appended and fsynced after the turns
are durable; rewritten only to seal it (an encrypted store: agent/host_files.py), which a reader notices (another
file) and reads again. It holds ids and paths, never what was said. A locked store gets no line: its captures are
remembered by this process only. A line that cannot be read (damaged, a field of the wrong type, a ``soul`` that
is no note path, a ``source`` that is no absolute ``.jsonl`` path) is skipped: at worst that turn is captured
again, and the soul file's near-duplicate check keeps the second copy out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from botbin.agent.host_files import (
    PLAIN,
    HostKey,
    append_private,
    encode_line,
    host_lock,
    read_lines,
    rewrite_private,
)
from botbin.sync.confine import note_path_problem

LEDGER_FILE = "captured-turns.jsonl"
MAX_ID_CHARS = 4096
"""Longest turn id or source path read back."""
LEDGER_AAD = b"botbin captured turns"
"""What each sealed ledger line is bound to."""


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


def source_problem(source: object) -> str | None:
    """Why ``source`` is not a transcript botbin reads turns back from (an absolute path of a ``.jsonl`` file, no
    NUL), None when it is one (or None)."""
    if source is None:
        return None
    if not isinstance(source, str) or len(source) > MAX_ID_CHARS or "\0" in source:
        return "not a path"
    if not (source.startswith("/") or Path(source).is_absolute()) or not source.endswith(".jsonl"):
        return f"{source[:80]!r} is not an absolute path of a .jsonl transcript"
    return None


def captured_of(value: dict[str, Any]) -> Captured | None:
    """The Captured a ledger line holds, None when a field is missing or bad (see the module docstring)."""
    turn_id, soul, turn, source = value.get("id"), value.get("soul"), value.get("turn"), value.get("source")
    if not isinstance(turn_id, str) or not turn_id or len(turn_id) > MAX_ID_CHARS or note_path_problem(soul):
        return None
    if not isinstance(turn, int) or isinstance(turn, bool) or not 1 <= turn < 2**63 or source_problem(source):
        return None
    return Captured(turn_id, str(soul), turn, source)


class Ledger:
    """The ledger of one workspace, kept in memory and brought up to date with what other processes appended
    (``botbin mcp`` expands what ``botbin serve`` captured); thread-safe. ``key()`` gives the store's host key
    (agent/host_files.py ``host_key``) each time the file is read or written."""

    def __init__(self, folder: Path, key: Callable[[], HostKey] | None = None, lock_timeout_s: float = 10.0) -> None:
        self.folder = folder
        """The output folder."""
        self.path = folder / LEDGER_FILE
        """The ledger file."""
        self._key = key if key is not None else (lambda: PLAIN)
        self.lock_timeout_s = lock_timeout_s
        self._lock = threading.Lock()
        self._entries: dict[str, Captured] = {}
        self._read_bytes = 0
        """Bytes of the file read so far (only ever appended to, but for a rewrite that seals it)."""
        self._identity: tuple[int, int] | None = None
        self._plain = 0

    def _load(self, key: HostKey) -> dict[str, Captured]:
        """The entries, after reading what was appended since the last call (all of it again when the file was
        replaced since)."""
        lines = read_lines(self.folder, self.path, key, LEDGER_AAD, self._read_bytes)
        if lines.identity is not None and (lines.identity != self._identity or lines.shrunk):
            if self._identity is not None or self._read_bytes:
                lines = read_lines(self.folder, self.path, key, LEDGER_AAD, 0)
                self._plain = 0
            self._identity = lines.identity
        self._read_bytes = lines.end
        self._plain += lines.plain
        for value in lines.values:
            entry = captured_of(value)
            if entry is not None:
                self._entries[entry.id] = entry
        return self._entries

    def has(self, turn_id: str) -> bool:
        """True when the turn ``turn_id`` is on disk already."""
        with self._lock:
            return turn_id in self._load(self._key())

    def of_soul(self, soul: str, first: int, last: int) -> list[Captured]:
        """The captured turns of soul file ``soul`` numbered ``first`` .. ``last`` (inclusive), in number order."""
        with self._lock:
            found = [e for e in self._load(self._key()).values() if e.soul == soul and first <= e.turn <= last]
        return sorted(found, key=lambda e: e.turn)

    def add(self, entries: Iterable[Captured]) -> None:
        """Append ``entries`` (their turns are durable now); in a locked store they are remembered in memory only.
        An encrypted store's ledger found holding lines in the clear is rewritten sealed first. Raises OSError if
        the ledger cannot be written, BotbinError if its lock is held too long."""
        fresh = list(entries)
        if not fresh:
            return
        with self._lock:
            key = self._key()
            known = self._load(key)
            known.update((e.id, e) for e in fresh)
            if key.locked is not None:
                return
            data = b"".join(encode_line(asdict(e), key, LEDGER_AAD) for e in fresh)
            with host_lock(self.folder, self.lock_timeout_s):
                if key.key is not None and self._plain:
                    self._seal(key)
                else:
                    append_private(self.folder, self.path, data)

    def _seal(self, key: HostKey) -> None:
        """Rewrite the whole ledger (every entry known, the new ones too) sealed with ``key``."""
        data = b"".join(encode_line(asdict(e), key, LEDGER_AAD) for e in self._entries.values())
        rewrite_private(self.folder, self.path, data)
        self._plain, self._read_bytes, self._identity = 0, 0, None  # the next read takes the new file from its start
