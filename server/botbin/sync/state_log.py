"""The state file's journal: what a note-level sync (a saved note, a watcher event) changed, appended as one JSON
line beside the state file instead of rewriting the whole file (~3 MB at 10,000 notes, ~0.14 s a save).

Each line is ``{"base": ID, "header": {...}, "files": {rel: entry-or-null}}``; it applies to the state file whose
``log_id`` is ``ID`` (a full write of the state file takes a new id, then removes the journal, so lines written
for an older state file are never replayed onto a newer one). A line cut short by a killed process is skipped
(that sync left the store marked interrupted, so the next sync re-checks every note); a whole line with a bad
value is damage or tampering: the reader rebuilds the state (``BadLine``). Plain JSON: the state file's own values
(file entries, model, chunker), nothing secret.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

from botbin.sync.confine import read_confined

log = logging.getLogger(__name__)

LOG_SUFFIX = ".log"
"""The journal is the state file's name with this suffix (``sync-state.log``)."""
MIN_COMPACT_BYTES = 256 * 1024
"""A journal is folded into the state file once it is this big and half the state file's size."""


class BadLine(ValueError):
    """A journal line that is whole JSON but holds a bad value (its number and reason in the message)."""

    def __init__(self, state_path: Path, number: int, reason: object) -> None:
        super().__init__(f"{log_path(state_path)}: line {number} holds a bad value ({reason})")


def log_path(state_path: Path) -> Path:
    """The journal beside the state file at ``state_path``."""
    return state_path.with_suffix(LOG_SUFFIX)


def needs_compaction(state_path: Path) -> bool:
    """True when the journal has grown enough that the next save should rewrite the state file, or when it is
    not a plain file (a link planted in its place, which an append would write through: the rewrite removes
    it)."""
    try:
        logged = os.lstat(log_path(state_path))
        base = state_path.stat().st_size
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(logged.st_mode) or logged.st_size >= max(MIN_COMPACT_BYTES, base // 2)


def append(state_path: Path, base: str, header: dict[str, Any], files: dict[str, dict[str, Any] | None]) -> None:
    """Append one line to the journal and flush it to disk. Raises OSError naming the journal if it cannot be
    written."""
    line = json.dumps({"base": base, "header": header, "files": files}, ensure_ascii=False, separators=(",", ":"))
    path = log_path(state_path)
    try:
        # private, as the state file; never through a link planted in its place (it would append to its target)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "rb+") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() > 0:  # a line cut short by a kill must not swallow this one
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    handle.write(b"\n")
            handle.write(line.encode("utf-8") + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:  # a failed flush names no file; a line cut short is skipped by replay
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc


def replay(state_path: Path, base: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, line) of the journal's lines for the state file with id ``base``, oldest first; a line
    that is not whole JSON is skipped (a kill cut it). Raises BadLine for a whole line of the wrong shape."""
    path = log_path(state_path)
    try:
        raw = read_confined(state_path.parent, path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        log.warning("%s: unreadable (%s); the notes it recorded are re-checked", path, exc)
        return []
    lines = []
    for number, text in enumerate(raw.splitlines(), 1):
        try:
            line = json.loads(text)
        except (ValueError, RecursionError):  # ValueError: JSON cut short, not UTF-8, or a 4,300-digit integer
            log.info("%s: skipped a damaged line (a sync was killed while writing it)", path)
            continue
        if not isinstance(line, dict) or "base" not in line:
            raise BadLine(state_path, number, "not a journal entry")
        if line.get("base") != base:
            continue
        if not isinstance(line.get("files"), dict) or not isinstance(line.get("header", {}), dict):
            raise BadLine(state_path, number, "'files' or 'header' is not an object")
        lines.append((number, line))
    return lines


def remove(state_path: Path) -> None:
    """Drop the journal (after the state file was written whole)."""
    log_path(state_path).unlink(missing_ok=True)
