"""Reconciling a workspace's memos with its indexed chunks: new chunks get a memo, moved ones are updated,
vanished ones dropped unless archived, and an edited chunk inherits the counts of the vanished memo of its note
nearest its lines. ``Lifecycle`` (memory/lifecycle.py) decides which chunks to reconcile."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from botbin.memory.memos import MemoPlace, MemoSeed, MemoStore

if TYPE_CHECKING:
    from botbin.index.hits import ChunkRef


def reconcile(
    store: MemoStore, refs: dict[str, ChunkRef], now: datetime, sealed: bool, paths: set[str] | None = None
) -> None:
    """Memos of ``refs`` (memo id -> chunk): every chunk of the workspace, or of the notes ``paths`` only (then
    ``refs`` holds exactly their chunks). ``sealed``: an encrypted store, whose memos keep no tags."""
    known = {m.id: m for m in store.places(paths)}
    fresh = {i: r for i, r in refs.items() if i not in known}
    moved = [
        i
        for i, r in refs.items()
        if i in known and (known[i].start_line, known[i].end_line, known[i].path) != (r.start_line, r.end_line, r.path)
    ]
    gone = sorted((m for i, m in known.items() if i not in refs and not m.archived), key=_place_order)
    seeds = [
        MemoSeed(i, r.path, r.start_line, r.end_line, _created(r, now), () if sealed else r.tags)
        for i, r in refs.items()
        if i in fresh or i in moved
    ]
    if seeds:
        store.seed(seeds)
    pairs = []
    by_path: dict[str, list[MemoPlace]] = {}
    for m in gone:
        by_path.setdefault(m.path, []).append(m)
    for i, r in fresh.items():  # an edited chunk: the vanished memo of the same note nearest its lines
        olds = by_path.get(r.path)
        if olds:
            old = min(olds, key=lambda m: abs(m.start_line - r.start_line))
            olds.remove(old)
            pairs.append((old.id, i))
    if pairs:
        store.inherit(pairs)
    if gone:
        store.remove(m.id for m in gone)


def _created(ref: ChunkRef, now: datetime) -> datetime:
    """A memo's birth: when botbin first stored its note (first sync), else the note's date, else now. Not the
    note's date first: a vault's old notes would start faded on the day they are first synced."""
    for raw in (ref.created_at, ref.date):
        if raw:
            try:
                when = datetime.fromisoformat(raw)
            except ValueError:
                continue
            return when if when.tzinfo else when.astimezone()
    return now


def _place_order(m: MemoPlace) -> tuple[str, int, str]:
    """By path, then line (an edited chunk inherits from the nearest vanished memo, the first on a tie)."""
    return (m.path, m.start_line, m.id)
