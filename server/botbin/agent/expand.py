"""Progressive disclosure: the short id of a piece of memory put before a model, and ``expand``, which gives that
piece's whole section of its note and, for a captured conversation, the turns it was distilled from.

An id is the first ID_CHARS hex digits of the memo key of the indexed chunk that holds the piece (memo_id of its
path and text MD5, memory/memos.py, without a store key): stateless, so any process of the workspace (the warm
server, ``botbin mcp``) resolves it by hashing the index's chunks, and it stays valid while the chunk is unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botbin.agent.ledger import Ledger, source_problem
from botbin.errors import BotbinError
from botbin.memory.conversation.soul import parse_soul
from botbin.memory.memos import memo_id

if TYPE_CHECKING:
    from botbin.index.hits import ChunkRef
    from botbin.parsing.blocks import Block
    from botbin.workspace import Workspace

ID_CHARS = 10
"""Hex digits of a short id (40 bits: two chunks of a 100,000-chunk index share one with odds of about 1 in 200)."""
MAX_SECTION_CHARS = 16_000
"""A longer section is cut at the chunk's own lines (a note without headings can be one huge section)."""
MAX_SOURCE_BYTES = 1 << 30
"""Bytes of a transcript read at most to find a block's turns."""
MAX_LINE_BYTES = 32 << 20
"""A transcript line read at most (a longer one is read in pieces, none of them a turn)."""


class ExpandError(BotbinError):
    """An id that names no indexed piece of memory, or more than one."""

    kind = "bad_request"


@dataclass(frozen=True)
class SourceTurn:
    """A captured turn read back from its source."""

    id: str
    role: str
    content: str
    timestamp: str | None


@dataclass(frozen=True)
class Expanded:
    """An item's whole section and its source turns."""

    id: str
    path: str
    start_line: int
    """0-based first line of the section."""
    end_line: int
    """0-based line after the section (exclusive)."""
    heading_path: tuple[str, ...]
    text: str
    turns: tuple[SourceTurn, ...]


def chunk_id(path: str, text_md5: str) -> str:
    """The short id of the chunk of note ``path`` whose text has MD5 ``text_md5``."""
    return memo_id(path, text_md5)[:ID_CHARS]


def text_id(path: str, text: str) -> str:
    """The id of a piece no indexed chunk holds (a note not synced yet): unique, but ``expand`` cannot resolve it."""
    return chunk_id(path, hashlib.md5(text.encode(), usedforsecurity=False).hexdigest())


def ids_of(refs: list[ChunkRef], pieces: list[tuple[str, int, str]]) -> list[str]:
    """The id of each (path, 0-based first line, text) piece: that of the chunk of its note holding its first line."""
    by_path: dict[str, list[ChunkRef]] = {}
    for ref in refs:
        by_path.setdefault(ref.path, []).append(ref)
    out = []
    for path, line, text in pieces:
        holder = next((r for r in by_path.get(path, ()) if r.start_line <= line < r.end_line), None)
        out.append(chunk_id(path, holder.text_md5) if holder is not None else text_id(path, text))
    return out


def resolve(refs: list[ChunkRef], wanted: str) -> ChunkRef:
    """The chunk whose id starts with ``wanted``. Raises ExpandError for none or several."""
    prefix = wanted.strip().lower()
    found = {chunk_id(r.path, r.text_md5): r for r in refs if chunk_id(r.path, r.text_md5).startswith(prefix)}
    if not found:
        raise ExpandError(f"no memory item has the id {wanted!r} (its note changed or was removed since)")
    if len(found) > 1:
        raise ExpandError(f"the id {wanted!r} is ambiguous ({len(found)} items); give more of it")
    return next(iter(found.values()))


def section_of(blocks: list[Block], start_line: int, end_line: int) -> tuple[int, int, tuple[str, ...]]:
    """Lines (0-based, end exclusive) and heading path of the section holding lines ``start_line``..``end_line``:
    from its heading (the note's start when none is above) to the next heading at its level or above."""
    first = next((b for b in blocks if b.end_line > start_line), None)
    if first is None:
        return start_line, end_line, ()
    path = first.heading_path
    heads = [b for b in blocks if b.kind == "heading" and b.heading_path == path and b.start_line <= first.start_line]
    begin = heads[-1].start_line if path and heads else 0
    depth = max(len(path), 1)  # a heading's path holds itself: a sibling has the same depth, a subheading more
    after = [b for b in blocks if b.start_line >= end_line and b.kind == "heading" and len(b.heading_path) <= depth]
    finish = after[0].start_line if after else max(b.end_line for b in blocks)
    return min(begin, start_line), max(finish, end_line), path


def expand(ws: Workspace, ledger: Ledger, wanted: str) -> Expanded:
    """Expand the item with id ``wanted`` (a unique prefix will do). Raises ExpandError, BotbinError (a locked
    store, a note that cannot be read)."""
    from botbin.directives.partition import parse_source
    from botbin.parsing import decode_note
    from botbin.sync.scan import read_note

    index, _ = ws.index.get()
    ref = resolve(index.chunk_refs(), wanted)
    try:
        text = decode_note(read_note(ws.root, ref.path, ws.settings.follow_symlinks), ref.path).text
    except OSError as exc:
        raise BotbinError(f"cannot read the note ({exc.strerror or exc})", ws.root / ref.path) from exc
    start, end, heading_path = section_of(list(parse_source(text, ref.path).blocks), ref.start_line, ref.end_line)
    lines = text.split("\n")
    section = "\n".join(lines[start:end]).rstrip()
    if len(section) > MAX_SECTION_CHARS:
        start, end, section = ref.start_line, ref.end_line, ref.text
    turns = (
        _source_turns(ledger, ref.path, section) if ref.path.startswith(ws.settings.soul_dir.strip("/") + "/") else ()
    )
    return Expanded(chunk_id(ref.path, ref.text_md5), ref.path, start, end, heading_path, section, turns)


def _source_turns(ledger: Ledger, soul: str, section: str) -> tuple[SourceTurn, ...]:
    """The turns of the soul file block in ``section``, read from the sources the ledger names."""
    blocks = parse_soul(section)
    if not blocks:
        return ()
    captured = ledger.of_soul(soul, blocks[0].first_turn, blocks[-1].last_turn)
    by_source: dict[str, set[str]] = {}
    for entry in captured:
        if entry.source:
            by_source.setdefault(entry.source, set()).add(entry.id)
    found: dict[str, SourceTurn] = {}
    for source, ids in by_source.items():
        found.update(read_source_turns(Path(source), ids))
    return tuple(found[e.id] for e in captured if e.id in found)


def read_source_turns(path: Path, ids: set[str]) -> dict[str, SourceTurn]:
    """The turns with ``ids`` of JSONL file ``path``: a line whose ``uuid`` (or ``id``) is one of them, its
    ``message`` (or the line itself) giving ``role`` and ``content`` (a string or text parts). A missing file, one
    that is no ``.jsonl`` transcript (agent/ledger.py ``source_problem``) or no regular file (a FIFO, a device: the
    path came from a file in the output folder, or a host's request), and a bad line give nothing; at most
    MAX_SOURCE_BYTES are read."""
    out: dict[str, SourceTurn] = {}
    if source_problem(str(path)) is not None:
        return out
    try:
        handle = os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb")
    except (OSError, ValueError):
        return out
    with handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return out
        left = MAX_SOURCE_BYTES
        while left > 0 and (raw := handle.readline(min(left, MAX_LINE_BYTES))):
            left -= len(raw)
            if not any(i.encode() in raw for i in ids):
                continue
            turn = _turn_of(raw, ids)
            if turn is not None:
                out[turn.id] = turn
    return out


def _turn_of(raw: bytes, ids: set[str]) -> SourceTurn | None:
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    turn_id = obj.get("uuid", obj.get("id"))
    message = obj.get("message", obj)
    if turn_id not in ids or not isinstance(message, dict):
        return None
    content = _text(message.get("content"))
    role = message.get("role")
    stamp = obj.get("timestamp")
    if not content or not isinstance(role, str):
        return None
    return SourceTurn(str(turn_id), role, content, stamp if isinstance(stamp, str) else None)


def _text(value: Any) -> str:
    if isinstance(value, list):
        value = "\n".join(p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str))
    return value.strip() if isinstance(value, str) else ""
