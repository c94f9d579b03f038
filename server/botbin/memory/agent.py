"""Agent memory over one workspace: recency-ranked recall, context candidates per tier, and ``remember``.

The service facade calls these; they read the index and the notes, and ``remember`` is the one place that
writes a note (it appends to today's daily note, atomically, never touching what was there).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from botbin.errors import BotbinError
from botbin.memory.context import Candidates, Item
from botbin.memory.recency import RecencyPolicy, age_hours, daily_date, final_score, scope_of

if TYPE_CHECKING:
    from botbin.index.store import Hit, SearchFilters
    from botbin.service import MemoryService

_TAG = re.compile(r"^[^\s#][^\s]*$")
#: Order of instruction notes in tier 1: the agent's own memory first, then the repository's files.
_INSTRUCTION_ORDER = {"MEMORY.md": 0, "AGENTS.md": 1, "CLAUDE.md": 2}
#: Tier 1.5 takes directives of memory notes whose chunk is this similar to the request, at most 8.
GUIDANCE_MIN_COSINE = 0.35
GUIDANCE_MAX = 8
#: Tier 4 leaves out hits this unrelated to the request (no shared keyword and cosine under 0.2).
RECALL_MIN_COSINE = 0.2
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_EOL = re.compile(rb"\r\n|\r|\n")


def policy_of(service: MemoryService) -> RecencyPolicy:
    s = service.settings
    return RecencyPolicy(s.recency_weight, s.scope_weight, s.daily_half_life_h, s.durable_half_life_h)


def recall(service: MemoryService, query: str, k: int, filters: SearchFilters | None = None,
           now: datetime | None = None) -> tuple[list[Hit], bool]:
    """Hits re-ranked by similarity, recency and scope (memory/recency.py), best first; and whether the
    model was unavailable. ``hit.score`` becomes the final score."""
    now = now or datetime.now().astimezone()
    result = service.search(query, k=max(k * 3, k + 10), filters=filters, reinforce=False)
    policy = policy_of(service)
    ranked = [
        replace(h, score=final_score(h.score, scope_of(h.path, h.instruction), age_hours(h.date, now), policy))
        for h in result.hits
    ]
    ranked.sort(key=lambda h: h.score, reverse=True)
    return ranked[:k], result.degraded


def _instruction_key(path: str) -> tuple[int, str]:
    return (_INSTRUCTION_ORDER.get(path, 3), path)


def _latest_daily(paths: list[str], now: datetime) -> str | None:
    """The daily note (same rule as recency's) with the newest date not after today."""
    today = now.strftime("%Y-%m-%d")
    dated = [(d, p) for p in paths if (d := daily_date(p)) is not None and d <= today]
    return max(dated)[1] if dated else None


def recent_entries(root: Path, rel: str, follow_symlinks: bool = False) -> list[Item]:
    """The body blocks of daily note ``rel`` (headings left out), verbatim, in source order; none if it
    is gone or became a link outside the workspace (unless ``follow_symlinks``)."""
    from botbin.directives.partition import parse_source
    from botbin.parsing import decode_note
    from botbin.sync.scan import read_note

    try:
        text = decode_note(read_note(root, rel, follow_symlinks), rel).text
    except (OSError, BotbinError):
        return []
    note = parse_source(text, rel)
    return [Item(rel, b.start_line, b.end_line, b.text) for b in note.blocks if b.kind != "heading"]


def gather(service: MemoryService, query: str, now: datetime | None = None) -> Candidates:
    """Candidates of each tier for ``query`` from the indexed notes (and the latest daily note on disk)."""
    index, _ = service.index()
    instruction = set(index.instruction_notes())
    directives = index.directives()
    ordered = sorted((d for d in directives if d.path in instruction),
                     key=lambda d: (_instruction_key(d.path), d.start_line))
    hard = [Item(d.path, d.start_line, d.end_line, d.text) for d in ordered if d.kind == "hard"]
    soft = [Item(d.path, d.start_line, d.end_line, d.text) for d in ordered if d.kind == "soft"]
    guidance: list[Item] = []
    if query.strip():
        from botbin.index.store import SearchFilters

        hits = service.search(query, k=GUIDANCE_MAX * 2, filters=SearchFilters(kind="soft"), reinforce=False).hits
        for hit in hits:
            if hit.instruction or hit.cosine < GUIDANCE_MIN_COSINE:
                continue
            for d in directives:
                if d.path == hit.path and d.start_line < hit.end_line and hit.start_line < d.end_line:
                    item = Item(d.path, d.start_line, d.end_line, d.text, hit.score)
                    if not any(item.overlaps(g) for g in guidance) and len(guidance) < GUIDANCE_MAX:
                        guidance.append(item)
    latest = _latest_daily(index.note_paths(), now or datetime.now().astimezone())
    recent = recent_entries(service.root, latest, service.settings.follow_symlinks) if latest else []
    recalled_hits, degraded = recall(service, query, 20, now=now) if query.strip() else ([], False)
    recalled = [Item(h.path, h.start_line, h.end_line, h.text, h.score) for h in recalled_hits
                if degraded or h.cosine >= RECALL_MIN_COSINE or h.bm25 > 0]
    return Candidates(hard, guidance, soft, recent, recalled)


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
