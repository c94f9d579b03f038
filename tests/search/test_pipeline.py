"""The ranking pipeline (search/pipeline.py): its stages in order, relevance first in agent recall, merging."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from botbin.index.hits import Hit
from botbin.search.pipeline import SearchResult, merge, relevance_first
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest


def _hit(path: str, score: float, cosine: float = 0.5, bm25: float = 0.0) -> Hit:
    return Hit(path, 0, 1, (), "lore", path, "", "", score, cosine, bm25)


def test_relevance_first_lets_agent_weights_decide_only_among_near_equals() -> None:
    # relevance (first) and agent score (hit.score): c is recent and durable, but much less relevant than a
    scored = [(0.80, _hit("a", 0.60)), (0.78, _hit("b", 0.70)), (0.40, _hit("c", 0.95))]
    assert [h.path for h in relevance_first(scored, 0.05)] == ["b", "a", "c"]


def test_relevance_first_with_no_margin_is_plain_relevance_order() -> None:
    scored = [(0.5, _hit("x", 0.9)), (0.9, _hit("y", 0.1)), (0.7, _hit("z", 0.5))]
    assert [h.path for h in relevance_first(scored, 0.0)] == ["y", "z", "x"]


def test_merge_keeps_the_best_k_across_folders_with_their_tags() -> None:
    one = SearchResult([_hit("a.md", 0.9), _hit("b.md", 0.2)], indexed_at="2026-11-01T00:00:00Z")
    two = SearchResult([_hit("c.md", 0.5)], degraded=True, indexed_at="2026-11-02T00:00:00Z")
    merged = merge([(one, "first"), (two, "second")], 2)
    assert [(h.path, tag) for h, tag in merged.hits] == [("a.md", "first"), ("c.md", "second")]
    assert merged.degraded and merged.indexed_at == "2026-11-02T00:00:00Z"


def test_recall_drops_unrelated_hits_and_explains_each_score(make_service: Callable[..., MemoryService]) -> None:
    today = datetime.now().astimezone().strftime("%Y-%m-%d")
    service = make_service(
        {
            "memory/notes.md": "# Cats\n\nMy cat is called Miso and she likes the window seat.\n",
            f"memory/{today}.md": f"# {today}\n\n- 09:00 Bought new tyres for the bicycle.\n",
        }
    )
    service.sync()
    hits = service.recall(SearchRequest(query="what is the name of my cat", k=5)).hits
    assert [h.path for h in hits] == ["memory/notes.md"]  # the bicycle note shares no word and no meaning
    parts = dict(hits[0].components)
    assert {"similarity", "recency", "scope"} <= set(parts) and 0 <= hits[0].score <= 1
    assert hits[0].to_dict()["components"]["scope"] == 0.6


def test_recall_keeps_search_order_unless_relevance_is_nearly_equal(make_service: Callable[..., MemoryService]) -> None:
    old = (datetime.now().astimezone() - timedelta(days=60)).strftime("%Y-%m-%d")
    today = datetime.now().astimezone().strftime("%Y-%m-%d")
    service = make_service(
        {
            f"memory/{old}.md": f"# {old}\n\nThe database ran out of connections: the pool size was 5 per instance.\n",
            f"memory/{today}.md": f"# {today}\n\n- 10:00 Lunch with the database team.\n",
        },
        decay_weight=0.0,
    )
    service.sync()
    query = "why did the database run out of connections pool"
    searched = [h.path for h in service.search(SearchRequest(query=query, k=2, show_all=True)).hits]
    recalled = [h.path for h in service.recall(SearchRequest(query=query, k=2)).hits]
    assert recalled[0] == searched[0] == f"memory/{old}.md"  # the answer, though older, stays first


def test_a_deleted_or_excluded_note_is_never_returned(make_service: Callable[..., MemoryService]) -> None:
    notes = {
        "memory/a.md": "# A\n\nThe zebrafish tank needs a new heater.\n",
        "memory/Archive/b.md": "# B\n\nAn old zebrafish plan from last year.\n",
        "memory/c.md": "# C\n\nZebrafish are small freshwater fish.\n",
    }
    service = make_service(notes)
    service.sync()
    (service.root / "memory" / "a.md").unlink()  # deleted, not synced since
    result = service.search(SearchRequest(query="zebrafish", k=3, show_all=True))
    assert "memory/a.md" not in [h.path for h in result.hits] and result.stale
    assert any("1 deleted (memory/a.md)" in w for w in result.warnings)
    excluded = make_service(notes={}, root=service.root, exclude=["Archive"])  # a new setting, no sync yet
    paths = [h.path for h in excluded.search(SearchRequest(query="zebrafish", k=3, show_all=True)).hits]
    assert paths == ["memory/c.md"]


def test_recency_reorders_more_when_the_request_speaks_of_time() -> None:
    from botbin.search.pipeline import RELEVANCE_MARGIN, TIME_MARGIN, recency_margin

    assert recency_margin("which charting library did we choose") == RELEVANCE_MARGIN
    for query in (
        "what did we decide lately",
        "the latest deploy notes",
        "what happened yesterday",
        "anything new this week",
        "what is the current on-call rotation",
    ):
        assert recency_margin(query) == TIME_MARGIN, query
    scored = [(0.80, _hit("old", 0.40)), (0.72, _hit("new", 0.90))]
    assert [h.path for h in relevance_first(scored, recency_margin("which library"))] == ["old", "new"]
    assert [h.path for h in relevance_first(scored, recency_margin("the latest library"))] == ["new", "old"]
