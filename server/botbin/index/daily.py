"""Daily notes, and why the per-note cap leaves them alone. Pure.

``max_hits_per_note`` keeps one long note from filling the top k: its chunks are parts of one document. A daily
note (``memory/YYYY-MM-DD.md``) is a log of separate entries, each its own memory (the chunker keeps each dated
entry a chunk of its own), so the default cap leaves its entries alone (a cap the caller asks for, ``botbin
search --per-note N``, holds for every note): on LoCoMo kept as daily notes with one ``botbin remember`` entry
per turn, the cap of 2 held evidence recall@10 at 0.53 where the uncapped ranking found 0.65
(bench/bench_locomo_daily.py, bench/README.md). Both index backends apply the cap and its exemption in the one
ranking pass (``exempt_daily`` of their ``search``), so a workspace pays nothing for it.
"""

from __future__ import annotations

import re

_DAILY = re.compile(r"(?:^|/)(\d{4}-\d{2}-\d{2})(?:-(\d{1,6}))?\.md$")


def daily_date(path: str) -> str | None:
    """The date of a daily note (``YYYY-MM-DD.md`` in any folder, e.g. ``memory/2026-11-03.md``, or a continuation
    ``remember`` opened when the day's note was full: ``memory/2026-11-03-2.md``), else None."""
    match = _DAILY.search(path)
    return match.group(1) if match else None


def daily_order(path: str) -> tuple[str, int] | None:
    """(date, part) of a daily note, part 1 for ``YYYY-MM-DD.md`` and N for its continuation ``YYYY-MM-DD-N.md``:
    the later part holds the later entries. None for any other note."""
    match = _DAILY.search(path)
    return (match.group(1), int(match.group(2) or 1)) if match else None
