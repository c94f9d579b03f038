"""The per-user soul file (``<soul_dir>/<user-slug>.md``): read its blocks back, append new ones.

The file is plain markdown a person may edit: a title, then blocks headed ``## [Turns a-b] ...`` with bullet
facts (distill.py). botbin only appends: the old bytes are kept exactly (a new file is written atomically, an
existing one appended to). Reading back is lenient: headers are found by the ``## [Turns a-b]`` prefix,
bullets are lines starting with ``- ``; anything else a person wrote is left alone and ignored.

A soul file is memory, never an instruction note (``Settings.written_globs`` exempts the whole soul folder), and
its name never looks like one either: a user named "agents" or "Claude" gets ``agents-soul.md``, not a file that
an ``instruction_notes`` glob or an agent host (which reads AGENTS.md, CLAUDE.md, GEMINI.md in any folder, in any
case on macOS and Windows) would take for instructions. One writer at a time per soul file (sync/note_lock.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from botbin.errors import BotbinError

_HEADER = re.compile(r"^## \[Turns (\d+)-(\d+)\]", re.MULTILINE)
_SLUG_DROP = re.compile(r"[^a-z0-9]+")
_MAX_SLUG = 64


@dataclass(frozen=True)
class SoulBlock:
    """One block read back from a soul file."""

    first_turn: int
    last_turn: int
    bullets: tuple[str, ...]
    """Bullet items as written (continuation lines joined with newlines)."""

    @property
    def body(self) -> str:
        """The bullets, one item per line (what distill.Block.body gives for the same block)."""
        return "\n".join(self.bullets)


def user_slug(user: str) -> str:
    """A file-name-safe slug of ``user``: ASCII lowercase letters, digits and dashes, at most 64 characters
    (``"Caroline K."`` -> ``caroline-k``); ``user`` for a name with nothing left. Different names can share
    a slug (``Ana`` and ``ana``): they then share a soul file."""
    ascii_name = unicodedata.normalize("NFKD", user).encode("ascii", "ignore").decode("ascii").lower()
    slug = _SLUG_DROP.sub("-", ascii_name).strip("-")[:_MAX_SLUG].strip("-")
    return slug or "user"


#: Note names (lowercase, no ``.md``) that agent hosts read as instructions in any folder: Claude Code's CLAUDE.md,
#: the AGENTS.md of Codex and others, Gemini CLI's GEMINI.md. No soul file takes one.
HOST_INSTRUCTION_NAMES = frozenset({"agents", "claude", "gemini"})
#: What a soul file's slug gets when its name would make an instruction note.
SAFE_SUFFIX = "-soul"


def soul_rel(soul_dir: str, user: str, instruction_notes: Sequence[str] = ()) -> str:
    """Relative POSIX path of ``user``'s soul file under ``soul_dir``: ``<slug>.md``, or ``<slug>-soul.md`` when
    that name is one of HOST_INSTRUCTION_NAMES or an ``instruction_notes`` glob (the setting; ``!`` globs are
    ignored) matches the path."""
    from botbin.directives.partition import is_instruction_path

    folder, slug = soul_dir.strip("/"), user_slug(user)
    positive = [g for g in instruction_notes if not g.startswith("!")]
    rel = f"{folder}/{slug}.md"
    if slug in HOST_INSTRUCTION_NAMES or is_instruction_path(rel, positive):
        rel = f"{folder}/{slug}{SAFE_SUFFIX}.md"
    return rel


def title(user: str) -> str:
    """The first lines of a new soul file."""
    name = " ".join(user.split()) or "user"
    return (
        f"# Soul file: {name}\n\nWhat botbin distilled from conversations with {name} (`botbin ingest`, MCP "
        "`observe_turn`). Edit freely: new blocks are only ever appended.\n"
    )


def parse_soul(text: str) -> list[SoulBlock]:
    """The ``## [Turns a-b]`` blocks of a soul file's text, in file order (a header with a < 1 or b < a
    still counts: its numbers are taken as written)."""
    heads = list(_HEADER.finditer(text))
    blocks: list[SoulBlock] = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        section = text[head.end() : end].split("\n")[1:]
        bullets: list[str] = []
        for line in section:
            if line.startswith("- "):
                bullets.append(line.rstrip())
            elif bullets and (line.startswith("  ") or not line.strip()):
                bullets[-1] += "\n" + line.rstrip()
            elif line.startswith("#"):
                break  # a heading of the person's own ends the block
        blocks.append(SoulBlock(int(head.group(1)), int(head.group(2)), tuple(b.rstrip("\n") for b in bullets)))
    return blocks


def last_turn(blocks: list[SoulBlock]) -> int:
    """The highest turn number in ``blocks`` (0 for none): numbering goes on after it."""
    return max((b.last_turn for b in blocks), default=0)


def read_soul(root: Path, rel: str, follow_symlinks: bool = False) -> str | None:
    """The text of soul file ``rel`` (None when it does not exist yet). Undecodable bytes are replaced.

    Raises BotbinError if it links outside the workspace (unless ``follow_symlinks``) or cannot be read.
    """
    from botbin.sync.scan import read_note

    try:
        data = read_note(root, rel, follow_symlinks)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BotbinError(f"cannot read the soul file ({exc.strerror or exc})", root / rel) from exc
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def append_blocks(
    root: Path,
    rel: str,
    user: str,
    text: str,
    follow_symlinks: bool = False,
    lock_dir: Path | None = None,
    lock_timeout_s: float = 10.0,
) -> int:
    """Append ``text`` (blocks, each ending with a newline) to soul file ``rel``, created with a title if
    new; a blank line separates it from what was there. The existing bytes are never rewritten: a new file
    is written atomically, an existing one is opened for appending and the new bytes fsynced, so each block
    writes its own bytes only (the file is read, to place the block, but never rewritten: a 10,000-turn
    conversation would otherwise rewrite its soul file about 2,000 times). A failed write is cut back to the
    old size; a crash mid-append can leave the old bytes plus the start of the new block. One writer at a time
    (the note's lock in ``lock_dir``, default: the default output folder's ``.locks/``; ``lock_timeout_s``).
    Returns the 0-based line where ``text`` starts.

    Raises BotbinError for a link outside the workspace (unless ``follow_symlinks``), a read-only soul
    file, a failed write, or the lock held too long (LockedError).
    """
    from botbin.config import DEFAULTS
    from botbin.sync.note_lock import LOCK_DIR, note_lock
    from botbin.sync.scan import write_target

    write_target(root, rel, follow_symlinks, "the soul file")  # a link out: refused before any lock
    folder = lock_dir if lock_dir is not None else root / DEFAULTS.output_dir / LOCK_DIR
    with note_lock(folder, rel, lock_timeout_s):
        return _append_block(root, rel, user, text, follow_symlinks)


def _append_block(root: Path, rel: str, user: str, text: str, follow_symlinks: bool) -> int:
    """``append_blocks``' work under the soul file's lock."""
    from botbin.sync.atomic import atomic_write
    from botbin.sync.scan import read_regular, write_target

    path = write_target(root, rel, follow_symlinks, "the soul file")
    try:
        exists = path.exists()
        old = read_regular(path) if exists else b""  # a FIFO put there is refused, never waited on
    except OSError as exc:
        raise BotbinError(f"cannot read the soul file ({exc.strerror or exc})", path) from exc
    head = old or title(user).encode("utf-8")  # an empty file gets the title too
    blank = head.endswith((b"\n\n", b"\r\n\r\n", b"\r\r"))
    sep = b"" if blank else b"\n" if head.endswith((b"\n", b"\r")) else b"\n\n"
    start = _lines(head + sep)
    new = (b"" if old else head) + sep + text.encode("utf-8")
    try:
        if not exists:
            atomic_write(path, new)
            return start
        _append(path, new)
    except OSError as exc:
        raise BotbinError(f"cannot write the soul file ({exc.strerror or exc})", path) from exc
    return start


def _append(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` and fsync it; if that fails, cut the file back to its old size (so a caller
    that keeps its buffer and tries again writes the block once) and raise the OSError."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NONBLOCK", 0))
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def _lines(data: bytes) -> int:
    """Line breaks in ``data`` (CRLF, CR or LF, each one break)."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
