"""``botbin prune`` and ``botbin restore``: memos archived out of search (the notes stay as they are) and brought
back, and the archive note that lists them (``archive.md`` in the output folder; memory/notes.py writes it).
In an encrypted store the archived texts are sealed in the sidecar and the archive note lists places only."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from botbin.config import path_glob as compile_glob
from botbin.memory.memos import Memo
from botbin.memory.notes import ARCHIVE_NOTE, write_archive
from botbin.memory.sealing import seal_text

if TYPE_CHECKING:
    from botbin.index.hits import ChunkRef
    from botbin.memory.lifecycle import Lifecycle


@dataclass(frozen=True)
class PruneReport:
    archived: tuple[Memo, ...]
    """Memos archived now (or, in a dry run, that would be)."""
    threshold: float
    live: int
    """Memos left searchable."""
    archive_note: str
    dry_run: bool


@dataclass(frozen=True)
class RestoreReport:
    restored: tuple[Memo, ...]
    unknown: tuple[str, ...]
    """Requested ids that match no archived memo."""


def prunable(live: Iterable[tuple[Memo, ChunkRef]], threshold: float) -> list[tuple[Memo, ChunkRef]]:
    """Of ``live`` memos (decay scores as of now), those a prune archives: under ``threshold``, and lore (a
    directive is never archived)."""
    return [(m, r) for m, r in live if m.decay_score < threshold and r.kind == "lore"]


def prune(lc: Lifecycle, dry_run: bool = False, now: datetime | None = None) -> PruneReport:
    """Archive memos whose decay score (as of ``now``, default now) is under ``prune_threshold`` (directives are
    never archived); they leave search, the notes stay as they are. Rewrites the archive note. Raises BotbinError."""
    now = now or datetime.now().astimezone()
    threshold = lc.ws.settings.prune_threshold
    with lc.lock:
        live = lc.refresh(now)
        chosen = prunable(live, threshold)
        if not dry_run and chosen:
            key = lc.memo_keys.text
            lc.store.archive({m.id: seal_text(key, r.text) if key else r.text for m, r in chosen}, now)
            write_archive(lc.store.all(), lc.ws.output_dir, lc.ws.settings.prune_threshold, now)
            lc.view_changed()
            lc.ensure(now=now)
    archived = tuple(replace(m, archived_at=now) for m, _ in chosen)
    note = os.fspath(lc.ws.output_dir / ARCHIVE_NOTE)
    return PruneReport(archived, threshold, len(live) - len(chosen), note, dry_run)


def restore(
    lc: Lifecycle,
    ids: Iterable[str] = (),
    path_glob: str | None = None,
    everything: bool = False,
    now: datetime | None = None,
) -> RestoreReport:
    """Bring archived memos back into search: those of ``ids`` (a unique prefix is enough), of notes matching
    ``path_glob``, or all. Rewrites the archive note. Raises BotbinError."""
    now = now or datetime.now().astimezone()
    lc.flush()
    with lc.lock:
        archived = [m for m in lc.store.all() if m.archived_at is not None]
        chosen: dict[str, Memo] = {}
        unknown = []
        for want in ids:
            match = [m for m in archived if m.id.startswith(want)]
            if len(match) == 1:
                chosen[match[0].id] = match[0]
            else:
                unknown.append(want)
        matches = compile_glob(path_glob) if path_glob else None
        for m in archived:
            if everything or (matches is not None and matches(m.path)):
                chosen[m.id] = m
        if chosen:
            lc.store.restore(chosen, now)
            write_archive(lc.store.all(), lc.ws.output_dir, lc.ws.settings.prune_threshold, now)
            lc.view_changed()
    return RestoreReport(tuple(chosen.values()), tuple(unknown))
