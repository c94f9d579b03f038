"""The journal of host turns taken in but not distilled yet (``pending-turns.jsonl`` beside ``sync-state.json``): each
turn is appended and fsynced before ``ingest`` answers, so a server killed with turns in its buffer loses none; the
next server observes them again (agent/capture.py). Emptied whenever nothing is buffered, rewritten with only the
buffered turns when it grows past REWRITE_BYTES. It holds the turns' words, as the soul file they go to does."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

log = logging.getLogger(__name__)

JOURNAL_FILE = "pending-turns.jsonl"
REWRITE_BYTES = 1 << 20
"""A journal this large is rewritten with only the turns still buffered."""


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


class Journal:
    """The journal of one workspace. Not thread-safe: agent/capture.py holds its lock around every call."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / JOURNAL_FILE
        """The journal file."""

    def append(self, entries: Iterable[Entry]) -> None:
        """Append ``entries`` durably (fsync). Raises OSError."""
        data = b"".join(json.dumps(asdict(e), ensure_ascii=False).encode() + b"\n" for e in entries)
        if data:
            self._write(data, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    def _write(self, data: bytes, flags: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, flags, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> list[Entry]:
        """The entries, in order; a line that cannot be read (a torn last append) is skipped."""
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.warning("%s: cannot read the turn journal (%s)", self.path, exc)
            return []
        out = []
        for line in lines:
            try:
                out.append(Entry(**json.loads(line)))
            except (ValueError, TypeError):
                log.warning("%s: a line that is not a journal entry was skipped", self.path)
        return out

    def keep_only(self, entries: list[Entry]) -> None:
        """Make the journal hold just ``entries``: emptied when there are none, rewritten (to a temporary file,
        then renamed) when it has grown past REWRITE_BYTES; else left as it is (the extra entries are in the ledger
        and skipped when read back). Raises OSError."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if not entries:
            if size:
                self._write(b"", os.O_WRONLY | os.O_TRUNC)
            return
        if size > REWRITE_BYTES:
            temp = self.path.with_suffix(f".{os.getpid()}.tmp")
            temp.write_bytes(b"".join(json.dumps(asdict(e), ensure_ascii=False).encode() + b"\n" for e in entries))
            os.replace(temp, self.path)
