"""The per-note cap with daily notes exempt (search/note_cap.py), pure and through MemoryService.search."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from botbin.index.hits import Hit
from botbin.search.note_cap import daily_at_cap, exempt_daily
from botbin.service import MemoryService


def _hit(path: str, line: int, score: float) -> Hit:
    return Hit(path, line, line + 1, (), "lore", path, "", "", score, 0.5, 0.0)


DAY = "memory/2026-11-29.md"


def test_daily_at_cap_only_for_a_daily_note_that_reached_the_cap() -> None:
    two_daily = [_hit(DAY, 1, 0.9), _hit(DAY, 2, 0.8), _hit("notes.md", 1, 0.7), _hit("notes.md", 2, 0.6)]
    assert daily_at_cap(two_daily, 2)
    assert not daily_at_cap(two_daily[1:], 2)  # notes.md at the cap is not a daily note
    assert not daily_at_cap(two_daily, 0)  # no cap, nothing left out


def test_exempt_daily_keeps_every_entry_of_a_day_and_caps_other_notes() -> None:
    capped = [_hit(DAY, 1, 0.9), _hit(DAY, 2, 0.8), _hit("notes.md", 1, 0.7), _hit("notes.md", 2, 0.6)]
    wide = [
        _hit(DAY, 1, 0.9),
        _hit(DAY, 2, 0.8),
        _hit(DAY, 3, 0.75),
        _hit("notes.md", 1, 0.7),
        _hit("notes.md", 2, 0.6),
        _hit("notes.md", 3, 0.55),
        _hit(DAY, 4, 0.5),
    ]
    out = exempt_daily(capped, wide, 2, 10)
    assert [(h.path, h.start_line) for h in out] == [
        (DAY, 1),
        (DAY, 2),
        (DAY, 3),
        ("notes.md", 1),
        ("notes.md", 2),
        (DAY, 4),
    ]
    assert len(exempt_daily(capped, wide, 2, 3)) == 3


def test_search_returns_every_matching_entry_of_a_daily_note_but_caps_a_long_note(
    make_service: Callable[..., MemoryService],
) -> None:
    day = "\n".join(f"- 09:{m:02d} Paddled the kayak on lake number {m}." for m in range(5))
    long_note = "# Kayak\n\n" + "\n\n".join(f"## Part {m}\n\nThe kayak needs wax, coat {m}." for m in range(5))
    service = make_service({DAY: f"# 2026-11-29\n\n{day}\n", "memory/kayak.md": long_note + "\n"})
    service.sync()
    hits = service.search("kayak", k=10).hits
    assert Counter(h.path for h in hits) == {DAY: 5, "memory/kayak.md": 2}
    # a cap the caller asks for (botbin search --per-note N) holds for every note
    assert Counter(h.path for h in service.search("kayak", k=10, per_note=1).hits) == {DAY: 1, "memory/kayak.md": 1}
    assert Counter(h.path for h in service.search("kayak", k=10, per_note=0).hits) == {DAY: 5, "memory/kayak.md": 5}
    assert len(service.search("kayak", k=10, best_per_note=True).hits) == 2
