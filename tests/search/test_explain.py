"""A hit's score taken apart (search/explain.py, Recall Studio's score bar): the parts add up to the score, and the
note and neighbour cosines a hit now carries (index/store.py) are those ranking.add_context averaged in."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from botbin.index.hits import Hit
from botbin.search.explain import Weights, score_parts
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

NOTES = {
    "memory/garden.md": (
        "# Garden\n\n## Tomatoes\n\nThe tomatoes need water every morning in July.\n\n"
        "## Beans\n\nBeans climb the fence by the shed and want a stake.\n\n"
        "## Compost\n\nThe compost heap is turned on Sundays with the fork.\n"
    ),
    "memory/kitchen.md": "# Kitchen\n\nTomatoes from the garden go into the sauce on Fridays.\n",
    "MEMORY.md": "# Memory\n\nThe shed key hangs by the back door.\n",
}


def hit(**fields: object) -> Hit:
    base: dict[str, object] = dict(
        path="a.md", start_line=0, end_line=1, heading_path=(), kind="lore", title="a", snippet="", text="",
        score=0.0, cosine=0.5, bm25=0.8, note_cosine=0.4, neighbour_cosine=0.3,
    )  # fmt: skip
    base.update(fields)
    return Hit(**base)  # type: ignore[arg-type]


def test_the_parts_are_each_weighted_term_over_the_context_scale_then_decay() -> None:
    weights = Weights(alpha=0.7, note_weight=0.7, neighbour_weight=0.4, decay_weight=0.1)
    scale = 1 + 0.7 + 0.4
    own = {"cosine": 0.7 * 0.5 / scale, "keywords": 0.3 * 0.8 / scale, "note": 0.7 * 0.4 / scale}
    own["neighbours"] = 0.4 * 0.3 / scale
    index_score = sum(own.values()) + 0.05  # the bound gave 0.05 back
    final = index_score * (1 - 0.1 + 0.1 * 0.5)
    parts = score_parts(hit(score=final, components=(("hybrid", index_score), ("decay", 0.5))), weights)
    assert [p.name for p in parts] == ["cosine", "keywords", "note", "neighbours", "bound", "decay"]
    assert {p.name: p.points for p in parts[:4]} == pytest.approx(own)
    assert parts[4].points == pytest.approx(0.05)
    assert parts[5].value == 0.5 and parts[5].points == pytest.approx(final - index_score)
    assert sum(p.points for p in parts) == pytest.approx(final)


def test_a_keyword_only_search_has_keywords_alone() -> None:
    weights = Weights(alpha=0.7, note_weight=0.7, neighbour_weight=0.4, decay_weight=0.0)
    parts = score_parts(hit(score=0.8, cosine=0.0), weights, degraded=True)
    assert [(p.name, p.points) for p in parts] == [("keywords", pytest.approx(0.8))]


def test_real_hits_carry_their_note_and_neighbour_cosines_and_parts_that_add_up(
    make_service: Callable[..., MemoryService],
) -> None:
    service = make_service(NOTES)
    service.sync()
    query = "water the tomatoes in the garden"
    result = service.search(SearchRequest(query=query, k=5, show_all=True), reinforce=False)
    assert result.hits
    q = service.ws.models.embed_query(query)
    index, _ = service.index()
    entries = {e.path: e for e in index.entries()}
    for h in result.hits:
        entry = entries[h.path]
        mean = entry.matrix.mean(axis=0)
        assert h.note_cosine == pytest.approx(float(mean / np.linalg.norm(mean) @ q), abs=1e-5)
        rows = [i for i, c in enumerate(entry.chunks) if c.start_line == h.start_line]
        row = rows[0]
        around = [r for r in (row - 1, row + 1) if 0 <= r < len(entry.chunks)] or [row]
        expect = float(np.mean([entry.matrix[r] @ q for r in around]))
        assert h.neighbour_cosine == pytest.approx(expect, abs=1e-5)
        parts = service.explain(h, result.degraded)
        assert sum(p.points for p in parts) == pytest.approx(h.score, abs=1e-5)
