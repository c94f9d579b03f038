"""The journal of host turns taken in but not distilled yet (``pending-turns.jsonl`` beside ``sync-state.json``): each
turn is appended and fsynced before ``ingest`` answers, so a server killed with turns in its buffer loses none; the
next server observes them again (agent/capture.py). Emptied whenever nothing is buffered, rewritten with only the
buffered turns when it grows past REWRITE_BYTES (or holds lines in the clear in an encrypted store). It holds the
turns' words: sealed in an encrypted store, and never written while that store is locked (agent/host_files.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from botbin.agent.host_files import HostKey, Lines, append_private, encode_line, host_lock, read_lines, rewrite_private

log = logging.getLogger(__name__)

JOURNAL_FILE = "pending-turns.jsonl"
REWRITE_BYTES = 1 << 20
"""A journal this large is rewritten with only the turns still buffered."""
MAX_TEXT_CHARS = 1 << 20
"""Longest ``content`` read back (a request to the warm socket is at most 1 MiB)."""
MAX_LABEL_CHARS = 4096
"""Longest id, role, user, timestamp, session, name or source read back."""
JOURNAL_AAD = b"botbin pending turns"
"""What each sealed journal line is bound to (a line moved from another file does not open)."""


@dataclass(frozen=True)
class Entry:
    """One host turn, as taken in."""

    id: str
    """The host's id of the turn (or one botbin made for a turn without)."""
    role: str
    content: str
    user: str
    """Whose memory (picks the soul file)."""
    timestamp: str | None = None
    session: str | None = None
    name: str | None = None
    source: str | None = None
    """Where it came from (a transcript's path)."""


def entry_of(value: dict[str, Any]) -> Entry | None:
    """The Entry a journal line holds; None when a field is missing, of another type, empty where it may not be, or
    too long (a line read back is untrusted)."""
    fields: dict[str, str | None] = {}
    for name in ("id", "role", "content", "user", "timestamp", "session", "name", "source"):
        item = value.get(name)
        required = name in ("id", "role", "content", "user")
        limit = MAX_TEXT_CHARS if name == "content" else MAX_LABEL_CHARS
        if item is None and not required:
            fields[name] = None
        elif not isinstance(item, str) or len(item) > limit or (required and not item.strip()):
            return None
        else:
            fields[name] = item
    return Entry(**fields)  # type: ignore[arg-type]


class Journal:
    """The journal of one workspace. Not thread-safe: agent/capture.py holds its lock around every call."""

    def __init__(self, folder: Path, lock_timeout_s: float = 10.0) -> None:
        self.folder = folder
        """The output folder."""
        self.path = folder / JOURNAL_FILE
        """The journal file."""
        self.lock_timeout_s = lock_timeout_s
        self._plain = 0
        """Lines in the clear the last read found."""

    def append(self, entries: Iterable[Entry], key: HostKey) -> None:
        """Append ``entries`` durably (fsync), sealed with ``key``. Raises OSError, BotbinError (the lock)."""
        data = b"".join(encode_line(asdict(e), key, JOURNAL_AAD) for e in entries)
        if data:
            with host_lock(self.folder, self.lock_timeout_s):
                append_private(self.folder, self.path, data)

    def read(self, key: HostKey) -> list[Entry]:
        """The entries, in order; a line that cannot be read (a torn last append, damage, a field of the wrong type)
        is skipped with a warning."""
        lines: Lines = read_lines(self.folder, self.path, key, JOURNAL_AAD)
        self._plain = lines.plain
        out = [e for e in (entry_of(v) for v in lines.values) if e is not None]
        if len(out) < len(lines.values):
            bad = len(lines.values) - len(out)
            log.warning("%s: %d entries with a missing or bad field were skipped", self.path, bad)
        return out

    def keep_only(self, entries: list[Entry], key: HostKey) -> None:
        """Make the journal hold just ``entries`` (and, in a locked store, the sealed lines it cannot open): emptied
        when there are none, rewritten (to a temporary file, then renamed) when it has grown past REWRITE_BYTES or
        holds lines in the clear under a key; else left as it is (the extra entries are in the ledger and skipped
        when read back). Raises OSError, BotbinError (the lock)."""
        try:
            size = self.path.lstat().st_size
        except FileNotFoundError:
            return
        kept = read_lines(self.folder, self.path, key, JOURNAL_AAD).opaque if key.locked is not None else []
        mixed = key.key is not None and self._plain > 0
        if entries and size <= REWRITE_BYTES and not mixed:
            return
        if not (entries or kept or size):
            return
        data = b"".join([*(encode_line(asdict(e), key, JOURNAL_AAD) for e in entries), *(raw + b"\n" for raw in kept)])
        with host_lock(self.folder, self.lock_timeout_s):
            rewrite_private(self.folder, self.path, data)
        self._plain = 0 if key.key is not None else len(entries)
