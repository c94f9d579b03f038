"""The two notes the lifecycle writes: the roots note (durable memory, in the workspace, synced) and the
archive note (in the output folder, not synced). Pure text builders plus one atomic write each.

The roots note keeps everything outside botbin's marked block byte for byte, and every line inside it:
new roots are appended before the end marker, so a user's edits are never undone.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from botbin.errors import BotbinError, storage_error
from botbin.memory.consolidate import Root
from botbin.memory.memos import Memo
from botbin.memory.sealing import is_sealed
from botbin.sync.atomic import atomic_write

BEGIN = "<!-- botbin:roots:begin (written by `botbin consolidate`; lines here are kept, new ones appended) -->"
END = "<!-- botbin:roots:end -->"
ARCHIVE_NOTE = "archive.md"


def _lines(start: int, end: int) -> str:
    """1-based lines as editors show them: ``L3`` or ``L3-5`` (``start`` 0-based, ``end`` exclusive)."""
    return f"L{start + 1}" if end - start <= 1 else f"L{start + 1}-{end}"


def root_line(root: Root, roots_note: str) -> str:
    """``- text ([memory/a.md L3-5](a.md), ...) · reason``; links are relative to the roots note's folder."""
    here = posixpath.dirname(roots_note) or "."
    links = ", ".join(
        f"[{c.path} {_lines(c.start_line, c.end_line)}]({posixpath.relpath(c.path, here).replace(' ', '%20')})"
        for c in root.sources
    )
    reason = {
        "recurs": f"recurs in {len({c.path for c in root.sources})} notes",
        "reinforced": f"retrieved {max(c.reinforcement_count for c in root.sources)} times",
        "stated": "stated",
    }.get(root.reason, root.reason)
    how = ", abstractive" if root.abstractive else ""
    return f"- {root.text} ({links}) · {reason}{how}"


def existing_roots(text: str) -> list[str]:
    """The root texts already in the block (a line's text before its links), for de-duplication."""
    if BEGIN not in text:
        return []
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    return [line[2:].rsplit(" ([", 1)[0].strip() for line in block.splitlines() if line.startswith("- ")]


@dataclass(frozen=True)
class RootLine:
    """One root of the roots note's block, read back: its text, the branches it came from, and why."""

    text: str
    """The root's text (the line before its links)."""
    sources: tuple[tuple[str, int, int], ...]
    """Its sources as (workspace-relative path, 0-based first line, line after the last), from its links."""
    reason: str
    """What the line says after its links (``recurs in 2 notes``, ``retrieved 3 times``, ``stated``); may be empty."""
    line: int
    """0-based line of the root in the roots note."""


_SOURCE = re.compile(r"\[(?P<path>[^\]]+?) L(?P<start>\d+)(?:-(?P<end>\d+))?\]\(")


def roots_in(text: str) -> list[RootLine]:
    """The roots of the block, in order, each with the sources its links name (``root_line`` wrote them; a line a
    person edited keeps what can still be read of it)."""
    if BEGIN not in text:
        return []
    offset = text[: text.index(BEGIN)].count("\n") + 1
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    roots = []
    for number, raw in enumerate(block.splitlines()[1:], start=offset):
        if not raw.startswith("- "):
            continue
        main, _, reason = raw[2:].rpartition(" · ") if " · " in raw else (raw[2:], "", "")
        body, _, links = main.rpartition(" ([") if " ([" in main else (main, "", "")
        sources = tuple(
            (m["path"], int(m["start"]) - 1, int(m["end"] or m["start"])) for m in _SOURCE.finditer("[" + links)
        )
        roots.append(RootLine(body.strip(), sources, reason.strip(), number))
    return roots


def with_roots(old: str | None, lines: list[str], title: str = "Roots") -> str:
    """The roots note's new text: ``lines`` appended inside the block (created at the end if missing)."""
    added = "".join(f"{line}\n" for line in lines)
    if old is None:
        return (
            f"# {title}\n\nDurable memory distilled from recurring, reinforced and stated memos. Each line links "
            f"to its sources.\n\n{BEGIN}\n{added}{END}\n"
        )
    if BEGIN in old and END in old.split(BEGIN, 1)[1]:
        head, rest = old.split(BEGIN, 1)
        body, tail = rest.split(END, 1)
        body = body if body.endswith("\n") else body + "\n"
        return f"{head}{BEGIN}{body}{added}{END}{tail}"
    sep = "" if not old or old.endswith("\n") else "\n"
    return f"{old}{sep}\n{BEGIN}\n{added}{END}\n"


def write_note(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping an existing note's permissions. Raises BotbinError for a read-only
    note, StorageError when the disk refuses the write."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o600
        if path.exists() and not mode & stat.S_IWUSR:
            raise BotbinError("the note is read-only; botbin leaves it as it is", path)
        atomic_write(path, text.encode("utf-8"))
        os.chmod(path, mode)
    except OSError as exc:  # disk full, read-only, permission: StorageError (exit 3); the old note is intact
        raise storage_error(exc, path) from exc


def archive_text(memos: list[Memo], threshold: float, now: datetime) -> str:
    """The archive note: every archived memo by note, with how to bring it back."""
    out = [
        f"# botbin archive\n\nMemos archived by `botbin prune` (decay score under {threshold:g}). They are hidden "
        "from search, not deleted: the notes themselves are unchanged. `botbin restore ID` (or `--all`, or "
        f"`--path GLOB`) brings them back. Updated {now.isoformat(timespec='seconds')}.\n"
    ]
    path = None
    for m in sorted((m for m in memos if m.archived_at is not None), key=lambda m: (m.path, m.start_line)):
        if m.path != path:
            path = m.path
            out.append(f"\n## {m.path}\n")
        when = m.archived_at.date().isoformat() if m.archived_at else "?"
        out.append(
            f"- `{m.id}` lines {m.start_line + 1}-{m.end_line}, archived {when}, retrieved "
            f"{m.reinforcement_count} times, decay {m.decay_score:.3f}"
        )
        if m.archived_text:
            out.extend(f"  > {line}" for line in m.archived_text.strip().splitlines())
    if path is None:
        out.append("\nNothing is archived.")
    return "\n".join(out) + "\n"


def write_archive(memos: Iterable[Memo], output_dir: Path, threshold: float, now: datetime) -> None:
    """Rewrite the archive note (``ARCHIVE_NOTE`` in ``output_dir``) from the sidecar's ``memos``; a sealed text is
    left out (it stays in the sidecar, sealed). Raises BotbinError."""
    shown = [replace(m, archived_text=None) if is_sealed(m.archived_text) else m for m in memos]
    write_note(output_dir / ARCHIVE_NOTE, archive_text(shown, threshold, now))
