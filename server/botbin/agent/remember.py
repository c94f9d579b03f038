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
    clean = [t.strip().lstrip("#") for t in tags if t.strip()]
    for tag in clean:
        if not _TAG.match(tag):
            raise BotbinError(f"tag {tag!r} must be one word without spaces")
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = f"- {now.strftime('%H:%M')} {lines[0]}" + "".join(f" #{t}" for t in clean)
    return "\n".join([first, *(f"  {line}" if line.strip() else "" for line in lines[1:])])


def remember(root: Path, text: str, tags: list[str], now: datetime | None = None,
             follow_symlinks: bool = False) -> Remembered:
    """Append an entry to today's ``memory/YYYY-MM-DD.md`` (created with a ``# YYYY-MM-DD`` heading if
    new). The note's existing bytes are kept exactly; the new file replaces it atomically. The path comes
    from the date alone; a link (the note or ``memory/``) is written through only while it stays inside
    ``root``, unless ``follow_symlinks``.

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
    sep = b"" if old.endswith(b"\n") or not old else b"\n"
    data = old + sep + entry.encode("utf-8") + b"\n"
    start = len(_EOL.findall(old + sep))  # lines as botbin reads them: CRLF, CR or LF
    try:
        atomic_write(path, data)
        os.chmod(path, mode)  # the temp file was private; the note keeps the permissions it had
    except OSError as exc:
        raise BotbinError(f"cannot write ({exc.strerror or exc})", path) from exc
    return Remembered(rel, start, start + entry.count("\n") + 1, entry)
