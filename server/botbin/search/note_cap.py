"""The per-note cap, with daily notes exempt. Pure.

``max_hits_per_note`` keeps one long note from filling the top k: its chunks are parts of one document. A daily
note (``memory/YYYY-MM-DD.md``) is a log of separate entries, each its own memory (the chunker keeps each dated
entry a chunk of its own), so the default cap leaves its entries alone (a cap the caller asks for, ``botbin
search --per-note N``, holds for every note): on LoCoMo kept as daily notes with one ``botbin remember`` entry
per turn, the cap of 2 held evidence recall@10 at 0.53 where the uncapped ranking found 0.65
(bench/bench_locomo_daily.py, bench/README.md). The index applies the cap (fast, and the same on every backend);
the pipeline asks again without it only when a daily note reached the cap (``daily_at_cap``), and merges
(``exempt_daily``). A workspace without daily notes pays nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from botbin.search.recency import daily_date

if TYPE_CHECKING:
    from botbin.index.hits import Hit


def daily_at_cap(hits: Sequence[Hit], cap: int) -> bool:
    """True when some daily note has ``cap`` hits in ``hits`` (a capped result that may have left some out)."""
    if cap <= 0:
        return False
    counts = Counter(h.path for h in hits if daily_date(h.path) is not None)
    return any(n >= cap for n in counts.values())


def exempt_daily(capped: Sequence[Hit], wide: Sequence[Hit], cap: int, k: int) -> list[Hit]:
    """The best ``k`` hits of ``capped`` (a result with at most ``cap`` hits per note) and ``wide`` (the same
    search without the cap), with at most ``cap`` hits of each note that is not a daily note, best first.

    The cap keeps a note's best chunks, so both lists agree on which chunks of a capped note are kept."""
    taken: Counter[str] = Counter()
    seen: set[tuple[str, int, int]] = set()
    out: list[Hit] = []
    for hit in sorted([*capped, *wide], key=lambda h: h.score, reverse=True):
        key = (hit.path, hit.start_line, hit.end_line)
        if key in seen:
            continue
        seen.add(key)
        if daily_date(hit.path) is None:
            if taken[hit.path] >= cap:
                continue
            taken[hit.path] += 1
        out.append(hit)
        if len(out) == k:
            break
    return out
