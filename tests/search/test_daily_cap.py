"""The per-note cap with daily notes exempt (index/daily.py), in the ranking and through MemoryService.search."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np

from botbin.index.daily import daily_date
from botbin.index.ranking import capped_top_k
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

DAY = "memory/2026-11-29.md"


def test_daily_date_names_only_a_dated_note() -> None:
    assert daily_date(DAY) == "2026-11-29"
    assert daily_date("2026-11-29.md") == "2026-11-29"
    assert daily_date("memory/2026-11-29 notes.md") is None
    assert daily_date("memory/kayak.md") is None


def test_capped_top_k_leaves_uncapped_notes_alone_and_caps_the_others() -> None:
    # rows by score: day 0.9, day 0.8, notes 0.7, day 0.75, notes 0.6, notes 0.55, day 0.5
    scores = np.array([0.9, 0.8, 0.7, 0.75, 0.6, 0.55, 0.5], dtype=np.float32)
    note_of_row = np.array([0, 0, 1, 0, 1, 1, 0], dtype=np.int64)
    uncapped = np.array([True, False])
    assert capped_top_k(scores, 10, None, note_of_row, 2, uncapped) == [0, 1, 3, 2, 4, 6]
    assert capped_top_k(scores, 3, None, note_of_row, 2, uncapped) == [0, 1, 3]
    assert capped_top_k(scores, 10, None, note_of_row, 2) == [0, 1, 2, 4]  # no exemption: both capped
    mask = np.array([True, True, True, False, True, True, True])
    assert capped_top_k(scores, 10, mask, note_of_row, 1, uncapped) == [0, 1, 2, 6]


def test_search_returns_every_matching_entry_of_a_daily_note_but_caps_a_long_note(
    make_service: Callable[..., MemoryService],
) -> None:
    day = "\n".join(f"- 09:{m:02d} Paddled the kayak on lake number {m}." for m in range(5))
    long_note = "# Kayak\n\n" + "\n\n".join(f"## Part {m}\n\nThe kayak needs wax, coat {m}." for m in range(5))
    service = make_service({DAY: f"# 2026-11-29\n\n{day}\n", "memory/kayak.md": long_note + "\n"})
    service.sync()
    hits = service.search(SearchRequest(query="kayak", k=10, show_all=True)).hits
    assert Counter(h.path for h in hits) == {DAY: 5, "memory/kayak.md": 2}
    # a cap the caller asks for (botbin search --per-note N) holds for every note
    assert Counter(
        h.path for h in service.search(SearchRequest(query="kayak", k=10, per_note=1, show_all=True)).hits
    ) == {DAY: 1, "memory/kayak.md": 1}
    assert Counter(
        h.path for h in service.search(SearchRequest(query="kayak", k=10, per_note=0, show_all=True)).hits
    ) == {DAY: 5, "memory/kayak.md": 5}
    assert len(service.search(SearchRequest(query="kayak", k=10, best_per_note=True, show_all=True)).hits) == 2
