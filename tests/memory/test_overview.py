"""The memos as Recall Studio's lifecycle view reads them (memory/overview.py): retention curves, what the next
prune would archive (the same rule prune applies), archived memos, roots read back with their sources; and
that looking writes nothing (no decay score stored, no memo archived, no note touched)."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from botbin.memory.consolidate import Candidate, Root
from botbin.memory.notes import root_line, roots_in, with_roots
from botbin.memory.retention import DecayPolicy, curve, days_until, decay_score
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

ServiceFactory = Callable[..., MemoryService]
NOTES = {
    "AGENTS.md": "# Rules\n\n- Never push to main on Fridays.\n",
    "memory/2026-01-05.md": "# 2026-01-05\n\n- The staging database lives on host kestrel-db-2.\n",
    "memory/notes.md": (
        "# Garden\n\nThe tomatoes need water every second day in July.\n\n"
        "## Watering\n\n- Always water in the morning.\n"
    ),
}
POLICY = DecayPolicy(half_life_days=30.0, stretch=1.0)


def test_days_until_is_when_the_curve_crosses_the_threshold() -> None:
    left = days_until(0.05, 10.0, 2, POLICY)
    assert left == pytest.approx(90.0 * math.log2(20) - 10.0)
    assert decay_score(10.0 + left, 2, POLICY) == pytest.approx(0.05)
    assert days_until(0.05, 1000.0, 0, POLICY) == 0.0
    assert days_until(0.0, 5.0, 0, POLICY) == math.inf


def test_the_curve_runs_from_the_last_retrieval_to_ahead_and_only_falls() -> None:
    points = curve(12.0, 1, POLICY, 30.0, points=10)
    assert points[0] == (-12.0, 1.0) and points[-1][0] == pytest.approx(30.0)
    scores = [s for _, s in points]
    assert scores == sorted(scores, reverse=True)
    assert points[-1][1] == pytest.approx(decay_score(42.0, 1, POLICY))


def test_roots_read_back_with_their_sources_and_line() -> None:
    sources = (
        Candidate("a", "memory/2026-01-05.md", 2, 5, "x", "lore", 3, 0),
        Candidate("b", "memory/sub dir/notes.md", 7, 8, "y", "lore", 1, 1),
    )
    lines = [root_line(Root("Staging lives on kestrel-db-2.", sources, "reinforced"), "memory/roots.md")]
    text = with_roots("# My roots\n\nkept by hand\n", lines)
    [root] = roots_in(text)
    assert root.text == "Staging lives on kestrel-db-2."
    assert root.sources == (("memory/2026-01-05.md", 2, 5), ("memory/sub dir/notes.md", 7, 8))
    assert root.reason == "retrieved 3 times"
    assert text.splitlines()[root.line] == lines[0]


def test_the_overview_shows_what_prune_would_archive_and_writes_nothing(make_service: ServiceFactory) -> None:
    service = make_service(NOTES, decay_half_life_days=1.0)
    service.sync()
    service.search(SearchRequest(query="staging database host"))  # the memos, as any first search makes them
    service.lifecycle.flush()
    stored = {m.id: m.decay_score for m in service.lifecycle.store.all()}
    later = datetime.now().astimezone() + timedelta(days=30)
    view = service.memory_overview(10, now=later)
    assert view.live == len(stored)
    assert {m.memo.path for m in view.prunable} == {"memory/2026-01-05.md", "memory/notes.md"}
    assert all(m.kind == "lore" and m.memo.decay_score < view.threshold for m in view.prunable)
    soft = [m for m in view.faded if m.kind == "soft"]
    assert soft and soft[0] not in view.prunable  # a rule fades, but prune never archives it
    assert [m.memo.decay_score for m in view.faded] == sorted(m.memo.decay_score for m in view.faded)
    assert all(m.fades_in_days == 0.0 and m.curve[0][1] == 1.0 for m in view.faded)
    assert {m.id: m.decay_score for m in service.lifecycle.store.all()} == stored  # nothing written
    assert not (service.output_dir / "archive.md").exists()
    report = service.prune(now=later)  # the prune the view previewed
    assert sorted(m.id for m in report.archived) == sorted(m.memo.id for m in view.prunable)
    assert [m.id for m in service.memory_overview(10, now=later).archived] == [m.id for m in report.archived]


def test_the_overview_lists_the_roots_of_the_roots_note(make_service: ServiceFactory) -> None:
    source = Candidate("a", "memory/2026-01-05.md", 2, 3, "x", "lore", 0, 0)
    note = with_roots(None, [root_line(Root("Staging is kestrel-db-2.", (source,), "stated"), "memory/roots.md")])
    service = make_service({**NOTES, "memory/roots.md": note})
    service.sync()
    [root] = service.memory_overview(10).roots
    assert (root.text, root.sources, root.reason) == (
        "Staging is kestrel-db-2.",
        (("memory/2026-01-05.md", 2, 3),),
        "stated",
    )
