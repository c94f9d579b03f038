"""``remember``: the one place botbin writes a note. It appends to today's daily note, atomically, never touching
what was there, one writer at a time (sync/note_lock.py), and reports success only once the entry is on disk.

A text is at most MAX_TEXT_BYTES (a memory, not a document: a long text belongs in a note of its own). When the
entry would take today's note past ``max_note_bytes`` (which a sync would then skip, leaving it unsearchable), it
opens a continuation, ``memory/YYYY-MM-DD-2.md`` (then ``-3``, ...): a daily note like the first.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from botbin.config import DEFAULTS
from botbin.errors import BotbinError, LockedError, storage_error

if TYPE_CHECKING:
    from botbin.sync.report import SyncReport
    from botbin.workspace import Workspace

_TAG = re.compile(r"^[^\s#][^\s]*$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_EOL = re.compile(rb"\r\n|\r|\n")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Remembered:
    """Where ``remember`` wrote."""

    path: str
    """Relative POSIX path of the daily note."""
    start_line: int
    """0-based first line of the new entry."""
    end_line: int
    """0-based line after it (exclusive)."""
    text: str
    """The entry as written."""


#: The longest text ``remember`` takes, in UTF-8 bytes (64 KiB: a long meeting's notes), and never more than a
#: quarter of ``max_note_bytes``, so an entry always fits a note that a sync indexes.
MAX_TEXT_BYTES = 65_536


def text_limit(max_note_bytes: int) -> int:
    """The most UTF-8 bytes a remembered text may have under ``max_note_bytes``."""
    return max(1, min(MAX_TEXT_BYTES, max_note_bytes // 4))


def entry_text(text: str, tags: list[str], now: datetime, max_text_bytes: int = MAX_TEXT_BYTES) -> str:
    """One list item: ``- HH:MM text #tag ...``; further lines indented so the entry stays one item.

    Raises BotbinError for empty text, a text over ``max_text_bytes`` (UTF-8), or a tag with spaces.
    """
    body = text.strip()
    if not body:
        raise BotbinError("nothing to remember: the text is empty")
    size = len(body.encode("utf-8", "surrogatepass"))
    if size > max_text_bytes:
        raise BotbinError(
            f"the text is {size:,} bytes; remember takes at most {max_text_bytes:,} (an entry of a daily note, "
            "not a document: save a long text as a note of its own); nothing was written"
        )
    if _CONTROL.search(body):
        raise BotbinError("the text holds control characters (such as NUL); remove them and try again")
    if _LONE_SURROGATE.search(body + "".join(tags)):
        raise BotbinError("the text or a tag is not valid Unicode (a lone surrogate, U+D800 to U+DFFF)")
    clean = [t.strip().lstrip("#") for t in tags if t.strip()]
    for tag in clean:
        if not _TAG.match(tag):
            raise BotbinError(f"tag {tag!r} must be one word without spaces")
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = f"- {now.strftime('%H:%M')} {lines[0]}" + "".join(f" #{t}" for t in clean)
    return "\n".join([first, *(f"  {line}" if line.strip() else "" for line in lines[1:])])


#: A call that repeats an entry written this recently (same text, same tags, same note) is a retry: the entry
#: is not written twice (an agent retries when an answer is slow or lost).
RETRY_WINDOW_MIN = 10
_STAMP = re.compile(r"^- (\d\d):(\d\d) ")


def _lines(data: bytes) -> list[str]:
    """Lines as botbin reads them (CRLF, CR or LF)."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _retried(old: bytes, entry: str, now: datetime) -> int | None:
    """The 0-based line of the latest entry of ``old`` equal to ``entry`` but for its ``HH:MM`` stamp, if that
    stamp is at most RETRY_WINDOW_MIN minutes before ``now``; else None."""
    lines = _lines(old)
    want = entry.split("\n")
    for start in range(len(lines) - len(want), -1, -1):
        stamp = _STAMP.match(lines[start])
        after = lines[start + len(want)] if start + len(want) < len(lines) else ""
        if (
            stamp is None
            or lines[start][8:] != want[0][8:]
            or lines[start + 1 : start + len(want)] != want[1:]
            or after.startswith("  ")
        ):  # a longer entry that begins the same way is another entry
            continue
        minutes = now.hour * 60 + now.minute - (int(stamp.group(1)) * 60 + int(stamp.group(2)))
        return start if 0 <= minutes <= RETRY_WINDOW_MIN else None
    return None


def retried_text(old: bytes, start: int, entry: str) -> str:
    """The entry as it already stands at line ``start`` of ``old``."""
    lines = _lines(old)
    return "\n".join(lines[start : start + entry.count("\n") + 1])


def remember(
    root: Path,
    text: str,
    tags: list[str],
    now: datetime | None = None,
    follow_symlinks: bool = False,
    max_note_bytes: int = DEFAULTS.max_note_bytes,
    lock_dir: Path | None = None,
    lock_timeout_s: float = DEFAULTS.lock_timeout_s,
) -> Remembered:
    """Append an entry to today's ``memory/YYYY-MM-DD.md`` (created with a ``# YYYY-MM-DD`` heading if new), or
    to its latest continuation; a new continuation when the entry would take that note past ``max_note_bytes``.
    The note's existing bytes are kept exactly; the new file (fsynced) replaces it atomically, under the day's
    lock in ``lock_dir`` (default: the default output folder's ``.locks/``; ``lock_timeout_s``). The path comes
    from the date alone; a link (the note or ``memory/``) is written through only while it stays inside
    ``root``, unless ``follow_symlinks``. A retried call (RETRY_WINDOW_MIN) returns the entry already written.

    Raises BotbinError for bad input (a text over ``text_limit(max_note_bytes)``), a link leading outside the
    workspace, an unwritable note, or the lock held too long (LockedError).
    """
    from botbin.sync.note_lock import LOCK_DIR, note_lock
    from botbin.sync.scan import write_target

    now = now or datetime.now().astimezone()
    entry = entry_text(text, tags, now, text_limit(max_note_bytes))
    day = now.strftime("%Y-%m-%d")
    write_target(root, part_rel(day, 1), follow_symlinks, "the daily note")  # a link out: refused before any lock
    folder = lock_dir if lock_dir is not None else root / DEFAULTS.output_dir / LOCK_DIR
    with note_lock(folder, part_rel(day, 1), lock_timeout_s):  # every part of the day: one writer
        return _append(root, day, entry, now, follow_symlinks, max_note_bytes)


def remember_in(ws: Workspace, text: str, tags: list[str] | None = None) -> tuple[Remembered, SyncReport]:
    """Append ``text`` to today's daily note of ``ws`` (``remember``) and sync it at once (and publish it: the
    workspace's one post-sync pipeline). Raises BotbinError for bad input, PassphraseError before writing anything
    when the store is encrypted and its passphrase is missing or wrong (the entry could not be indexed). A sync
    that finds the store locked leaves the entry on disk and says so in the report (the next sync indexes it)."""
    from botbin.sync.encryption import check_writable
    from botbin.sync.note_lock import LOCK_DIR
    from botbin.sync.report import NoteFailure, SyncReport
    from botbin.sync.scan import check_root

    s = ws.settings
    check_root(ws.root)
    check_writable(ws.output_dir, s, ws.passphrase)
    written = remember(
        ws.root,
        text,
        list(tags or []),
        follow_symlinks=s.follow_symlinks,
        max_note_bytes=s.max_note_bytes,
        lock_dir=ws.output_dir / LOCK_DIR,
        lock_timeout_s=s.lock_timeout_s,
    )
    try:
        return written, ws.sync()
    except LockedError as exc:
        why = f"written, not indexed yet ({exc}); the next sync indexes it"
        return written, SyncReport(failed=(NoteFailure(written.path, why),))


def part_rel(day: str, part: int) -> str:
    """Relative path of part ``part`` (1-based) of day ``day``'s note: ``memory/2026-12-01.md``, then
    ``memory/2026-12-01-2.md``."""
    return f"memory/{day}.md" if part == 1 else f"memory/{day}-{part}.md"


def _read(root: Path, rel: str, follow_symlinks: bool) -> tuple[Path, bytes | None, int]:
    """The write target of ``rel``, its bytes (None when new) and the mode to keep. Raises BotbinError."""
    from botbin.sync.scan import read_regular, write_target

    path = write_target(root, rel, follow_symlinks, "the daily note")  # the rename replaces a link's target
    try:
        if not path.exists():
            return path, None, 0o600  # a new note is private, like the store
        return path, read_regular(path), stat.S_IMODE(path.stat().st_mode)
    except OSError as exc:
        raise BotbinError(f"cannot read ({exc.strerror or exc}); nothing was written", path) from exc


def _append(root: Path, day: str, entry: str, now: datetime, follow_symlinks: bool, max_note_bytes: int) -> Remembered:
    """``remember``'s work under the day's lock."""
    from botbin.sync.atomic import atomic_write

    part = 1
    while (root / part_rel(day, part + 1)).exists():
        part += 1
    rel = part_rel(day, part)
    path, old, mode = _read(root, rel, follow_symlinks)
    if old is not None and (retried := _retried(old, entry, now)) is not None:
        return Remembered(rel, retried, retried + entry.count("\n") + 1, retried_text(old, retried, entry))
    body = entry.encode("utf-8") + b"\n"
    if old is not None and len(old) + 1 + len(body) > max_note_bytes:  # a sync would skip the note: go on in the next
        part += 1
        rel = part_rel(day, part)
        path, old, mode = _read(root, rel, follow_symlinks)
    if old is None:
        old = f"# {day}\n\n".encode() if part == 1 else f"# {day} (part {part})\n\n".encode()
    sep = b"" if old.endswith(b"\n") or not old else b"\n"
    start = len(_EOL.findall(old + sep))  # lines as botbin reads them: CRLF, CR or LF
    try:
        atomic_write(path, old + sep + body)
        os.chmod(path, mode)  # the temp file was private; the note keeps the permissions it had
    except OSError as exc:  # disk full, read-only, permission: StorageError (exit 3), the note as it was
        raise storage_error(exc, path) from exc
    return Remembered(rel, start, start + entry.count("\n") + 1, entry)
