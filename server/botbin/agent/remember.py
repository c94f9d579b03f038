"""``remember``: the one place botbin writes a note. It appends to today's daily note, atomically, never touching
what was there."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from botbin.errors import BotbinError

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


def entry_text(text: str, tags: list[str], now: datetime) -> str:
    """One list item: ``- HH:MM text #tag ...``; further lines indented so the entry stays one item.

    Raises BotbinError for empty text or a tag with spaces.
    """
    body = text.strip()
    if not body:
        raise BotbinError("nothing to remember: the text is empty")
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
    root: Path, text: str, tags: list[str], now: datetime | None = None, follow_symlinks: bool = False
) -> Remembered:
    """Append an entry to today's ``memory/YYYY-MM-DD.md`` (created with a ``# YYYY-MM-DD`` heading if
    new). The note's existing bytes are kept exactly; the new file replaces it atomically. The path comes
    from the date alone; a link (the note or ``memory/``) is written through only while it stays inside
    ``root``, unless ``follow_symlinks``. A retried call (RETRY_WINDOW_MIN) returns the entry already written.

    Raises BotbinError for bad input, a link leading outside the workspace, or an unwritable note.
    """
    from botbin.sync.atomic import atomic_write
    from botbin.sync.scan import write_target

    now = now or datetime.now().astimezone()
    rel = f"memory/{now.strftime('%Y-%m-%d')}.md"
    entry = entry_text(text, tags, now)
    path = write_target(root, rel, follow_symlinks, "the daily note")  # the rename replaces a link's target
    try:
        exists = path.exists()
        old = path.read_bytes() if exists else f"# {now.strftime('%Y-%m-%d')}\n\n".encode()
        mode = stat.S_IMODE(path.stat().st_mode) if exists else 0o600  # a new note is private, like the store
    except OSError as exc:
        raise BotbinError(f"cannot read ({exc.strerror or exc})", path) from exc
    retried = _retried(old, entry, now)
    if retried is not None:
        return Remembered(rel, retried, retried + entry.count("\n") + 1, retried_text(old, retried, entry))
    sep = b"" if old.endswith(b"\n") or not old else b"\n"
    data = old + sep + entry.encode("utf-8") + b"\n"
    start = len(_EOL.findall(old + sep))  # lines as botbin reads them: CRLF, CR or LF
    try:
        atomic_write(path, data)
        os.chmod(path, mode)  # the temp file was private; the note keeps the permissions it had
    except OSError as exc:
        raise BotbinError(f"cannot write ({exc.strerror or exc})", path) from exc
    return Remembered(rel, start, start + entry.count("\n") + 1, entry)
