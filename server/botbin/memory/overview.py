"""What a workspace's memos look like now, for a person to inspect (Recall Studio's lifecycle view): the most faded
memos with their retention curves, what the next ``botbin prune`` would archive, the archived memos, and the roots
of the roots note with the branches they came from. Reads only: no decay score, memo or note is written."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from botbin.errors import BotbinError
from botbin.memory.archive import prunable
from botbin.memory.memos import Memo
from botbin.memory.notes import RootLine, roots_in
from botbin.memory.retention import DecayPolicy, age_days, curve, days_until, half_life
from botbin.memory.sealing import is_sealed

if TYPE_CHECKING:
    from botbin.index.hits import ChunkRef
    from botbin.memory.lifecycle import Lifecycle

#: The longest stretch of a curve ahead of now, in days (a memo retrieved often fades over years).
MAX_AHEAD_DAYS = 3650.0
#: The shortest stretch ahead of now, in days, so that a curve shows where it is going.
MIN_AHEAD_DAYS = 7.0


@dataclass(frozen=True)
class MemoCurve:
    """One live memo and how it fades."""

    memo: Memo
    """The memo; its ``decay_score`` is the one as of now."""
    kind: str
    """Its chunk's kind: ``hard``, ``soft`` or ``lore`` (only lore is ever archived)."""
    text: str
    """Its chunk's text."""
    half_life_days: float
    """Its half-life now, in days (stretched by each retrieval)."""
    age_days: float
    """Days since its last retrieval, or since its creation when never retrieved."""
    fades_in_days: float
    """Days until its score falls under the prune threshold (0: it already has; infinite for a threshold of 0)."""
    curve: tuple[tuple[float, float], ...]
    """(days from now, negative in the past; score) from its last retrieval (or creation) to some days past
    ``fades_in_days``."""


@dataclass(frozen=True)
class Overview:
    """The memos of one workspace now."""

    live: int
    """Memos searchable now."""
    threshold: float
    """The prune threshold (``prune_threshold``)."""
    policy: DecayPolicy
    """The decay settings."""
    faded: tuple[MemoCurve, ...]
    """The most faded live memos, least retained first (at most the ``limit`` asked for)."""
    prunable: tuple[MemoCurve, ...]
    """What the next prune would archive (at most the ``limit`` asked for), least retained first."""
    prunable_count: int
    """How many the next prune would archive in all."""
    archived: tuple[Memo, ...]
    """Archived memos, newest archived first; a sealed text (encrypted store) is left out (None)."""
    roots_note: str
    """The roots note's path (``roots_note``)."""
    roots: tuple[RootLine, ...]
    """The roots in it, each with its sources."""
    warnings: tuple[str, ...] = ()
    """Problems met (a roots note that cannot be read)."""


def _curve(lc: Lifecycle, memo: Memo, ref: ChunkRef, now: datetime) -> MemoCurve:
    policy, threshold = lc.policy, lc.ws.settings.prune_threshold
    age = max(0.0, age_days(memo.created, memo.last_retrieved, now))
    fades = days_until(threshold, age, memo.reinforcement_count, policy)
    ahead = min(MAX_AHEAD_DAYS, max(MIN_AHEAD_DAYS, fades * 1.25 if math.isfinite(fades) else MAX_AHEAD_DAYS))
    return MemoCurve(
        memo,
        ref.kind,
        ref.text,
        half_life(memo.reinforcement_count, policy),
        age,
        fades,
        curve(age, memo.reinforcement_count, policy, ahead),
    )


def _roots(lc: Lifecycle) -> tuple[tuple[RootLine, ...], tuple[str, ...]]:
    from botbin.parsing import decode_note
    from botbin.sync.scan import read_note

    ws = lc.ws
    rel = ws.settings.roots_note
    if not (ws.root / rel).is_file():
        return (), ()
    try:
        text = decode_note(read_note(ws.root, rel, ws.settings.follow_symlinks), rel).text
    except (OSError, BotbinError) as exc:
        return (), (f"{rel}: cannot read the roots note ({exc})",)
    return tuple(roots_in(text)), ()


def overview(lc: Lifecycle, limit: int, now: datetime) -> Overview:
    """The Overview of ``lc``'s memos at ``now``, ``limit`` memos at most in each list. Raises BotbinError (a
    locked store)."""
    live: list[tuple[Memo, ChunkRef]] = []
    archived: list[Memo] = []
    if lc.ws.output_dir.is_dir():  # before the first sync there is no memo (and no store is made here)
        with lc.lock:
            live = lc.live(now)
            archived = [m for m in lc.store.all() if m.archived_at is not None]
    by_score = sorted(live, key=lambda pair: pair[0].decay_score)
    pruned = prunable(by_score, lc.ws.settings.prune_threshold)
    hidden = [replace(m, archived_text=None) if is_sealed(m.archived_text) else m for m in archived]
    hidden.sort(key=lambda m: m.archived_at or now, reverse=True)
    roots, warnings = _roots(lc)
    return Overview(
        len(live),
        lc.ws.settings.prune_threshold,
        lc.policy,
        tuple(_curve(lc, m, r, now) for m, r in by_score[:limit]),
        tuple(_curve(lc, m, r, now) for m, r in pruned[:limit]),
        len(pruned),
        tuple(hidden[:limit]),
        lc.ws.settings.roots_note,
        roots,
        warnings,
    )
