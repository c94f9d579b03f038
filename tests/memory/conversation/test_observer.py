"""observer.py with the fast FakeEmbedder: buffering, drift, sessions, duplicates, numbering across runs."""

from __future__ import annotations

from collections.abc import Callable

from botbin.memory.conversation.observer import TurnObserver
from botbin.memory.conversation.soul import parse_soul
from botbin.memory.conversation.turns import Turn
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

SOUL = "memory/soul/ana.md"
TOPIC = [
    "the garden roses bloom red in the garden",
    "garden roses need water in the garden every day",
    "the garden roses smell sweet in the garden",
    "garden roses grow tall near the garden fence",
    "the garden roses attract bees in the garden",
    "garden roses were planted in the garden in May",
]


def _turns(texts: list[str], session: str = "1", role: str = "Ana") -> list[Turn]:
    return [Turn(role, t, "Ana", session) for t in texts]


def test_a_full_buffer_is_distilled_and_synced(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(admission_threshold=0.0)
    observer = TurnObserver(service.ws)
    results = list(observer.observe_all(_turns(TOPIC)))
    assert [r.buffered for r in results] == [1, 2, 3, 4, 0, 1]
    assert [len(r.distilled) for r in results] == [0, 0, 0, 0, 1, 0]
    assert results[4].distilled[0].block.header == "## [Turns 1-5] session 1"
    observer.flush()
    blocks = parse_soul((service.root / SOUL).read_text())
    assert [(b.first_turn, b.last_turn) for b in blocks] == [(1, 5), (6, 6)]
    service.sync()
    assert service.search(SearchRequest(query="garden roses bees", k=1, show_all=True)).hits[0].path == SOUL


def test_drift_and_a_new_session_distil_at_once(make_service: Callable[..., MemoryService]) -> None:
    observer = TurnObserver(make_service().ws)
    results = [observer.observe(t) for t in _turns(TOPIC[:2])]
    drift = observer.observe(Turn("Ana", "quantum chromodynamics lattice gauge theory", "Ana", "1"))
    assert [d.block.header for d in drift.distilled] == ["## [Turns 1-2] session 1"] and drift.buffered == 1
    other = observer.observe(Turn("Ana", "quantum chromodynamics lattice gauge theory again", "Ana", "2"))
    assert [d.block.last_turn for d in other.distilled] == [3] and results[1].buffered == 2


def test_reingesting_adds_nothing_and_numbering_continues(make_service: Callable[..., MemoryService]) -> None:
    service = make_service()
    first = TurnObserver(service.ws)
    list(first.observe_all(_turns(TOPIC[:5])))
    before = (service.root / SOUL).read_bytes()
    again = TurnObserver(service.ws)
    list(again.observe_all(_turns(TOPIC[:5])))
    again.flush()
    assert (service.root / SOUL).read_bytes() == before
    assert again.stats.blocks_written == 0 and again.stats.admitted == 0
    third = TurnObserver(service.ws)
    result = third.observe(Turn("Ana", "volcanic basalt columns on the northern coast of Iceland", "Ana", "2"))
    assert result.turn_number == 6
    third.flush()
    assert parse_soul((service.root / SOUL).read_text())[-1].first_turn == 6


def test_rules_are_kept_verbatim_even_when_the_gate_says_no(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(admission_threshold=1.0)
    observer = TurnObserver(service.ws)
    observer.observe(Turn("user", "ok", "Ana"))
    rule = observer.observe(Turn("user", "Never   push to main.\nNot even on Fridays.", "Ana"))
    assert rule.protected and not rule.admitted
    observer.flush()
    text = (service.root / SOUL).read_text()
    assert "- Never   push to main. _(Ana: rule, verbatim)_\n  Not even on Fridays.\n" in text
    assert "- Ana: ok" not in text and "- user: ok" not in text
    assert observer.stats.protected == 1


def test_dry_run_writes_nothing(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(admission_threshold=0.0)
    observer = TurnObserver(service.ws, write=False)
    list(observer.observe_all(_turns(TOPIC)))
    blocks = observer.flush()
    assert [b.status for b in blocks] == ["dry-run"] and observer.stats.blocks_written == 2
    assert not (service.root / "memory").exists()


def test_users_get_their_own_files_and_buffers(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(turn_buffer_size=2)
    observer = TurnObserver(service.ws)
    for text in TOPIC[:2]:
        observer.observe(Turn("Ana", text, "Ana"))
        observer.observe(Turn("Bob", text, "Bob"))
    assert observer.stats.soul_files == {SOUL, "memory/soul/bob.md"}
    assert (service.root / "memory/soul/bob.md").read_text().count("## [Turns 1-2]") == 1
