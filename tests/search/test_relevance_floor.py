"""The relevance floor's keyword arm (issues 18/19): ``Hit.bm25_share``, a chunk's raw BM25 score as a share of
the most the query could score, instead of the score normalized by the query's best chunk."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from botbin.index.hits import Hit
from botbin.index.lexical import LexicalIndex
from botbin.search.pipeline import RELEVANCE_MIN_BM25_SHARE, relevant
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest


def _ids(*ids: int) -> np.ndarray:
    return np.array(ids, dtype=np.int32)


def test_idf_mass_sums_each_query_term_occurrence_and_counts_unknown_terms_at_the_most() -> None:
    vocab = {"cat": 0, "dog": 1, "the": 2}
    index = LexicalIndex(vocab)
    index.put("a.md", [_ids(0, 2), _ids(1, 2)])
    index.put("b.md", [_ids(2)])
    n = 3

    def idf(df: int) -> float:
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    assert index.idf_mass(["cat"]) == pytest.approx(idf(1))
    assert index.idf_mass(["cat", "cat", "the"]) == pytest.approx(2 * idf(1) + idf(3))
    assert index.idf_mass(["zebra"]) == pytest.approx(idf(0)) == pytest.approx(math.log(8))
    assert index.idf_mass([]) == 0.0
    for query in (["cat", "the"], ["cat", "cat", "dog"], ["the", "zebra"]):  # no chunk reaches the whole mass
        assert float(index.slot_scores(query).max()) < index.idf_mass(query)


def test_the_floor_reads_the_share_not_the_score_normalized_by_the_best_chunk() -> None:
    def hit(cosine: float, bm25: float, share: float) -> Hit:
        return Hit("a.md", 0, 1, (), "lore", "a", "", "", 0.5, cosine, bm25, bm25_share=share)

    assert not relevant(hit(0.1, 1.0, RELEVANCE_MIN_BM25_SHARE / 2))  # best of weak matches: still weak
    assert relevant(hit(0.1, 0.4, RELEVANCE_MIN_BM25_SHARE))
    assert relevant(hit(0.25, 0.0, 0.0))
    assert relevant(hit(0.1, 1.0, 0.0), degraded=True)  # keyword-only results have no cosine to judge by


def test_search_gives_each_hit_its_share_of_the_query_idf(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(
        {
            "memory/a.md": "# Pool\n\nThe database connection pool ran dry on Monday.\n",
            "memory/b.md": "# Lunch\n\nWe had lunch on Monday with the team.\n",
            "memory/c.md": "# Bikes\n\nNew tyres for the bicycle.\n",
        }
    )
    service.sync()
    strong = service.search(SearchRequest(query="database connection pool", k=3, show_all=True)).hits
    assert strong[0].path == "memory/a.md" and strong[0].bm25_share > 0.5
    weak = [
        h
        for h in service.search(SearchRequest(query="monday zebras savanna grazing", k=3, show_all=True)).hits
        if h.bm25 > 0
    ]
    assert weak and weak[0].bm25 == pytest.approx(1.0)  # the best chunk, normalized, looks like a full match
    assert all(0 < h.bm25_share < RELEVANCE_MIN_BM25_SHARE for h in weak)  # one common word of four
    assert weak[0].to_dict()["bm25Share"] == round(weak[0].bm25_share, 6)
