"""Tests for botbin.index.ranking: the keyword weight, the hybrid score, top-k selection and snippets."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from botbin.index.ranking import KEYWORD_FULL_SHARE, add_bm25, hybrid, keyword_full, keyword_weight, snippet, top_k


def f32(*values: float) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def test_a_strong_best_chunk_is_the_full_keyword_match() -> None:
    # holding more than KEYWORD_FULL_SHARE of the matchable mass, the best chunk sets the scale as before
    full = keyword_full(4.0, 10.0)
    assert full == 4.0
    np.testing.assert_allclose(keyword_weight(f32(0.0, 2.0, 4.0, 1.0), full), [0.0, 0.5, 1.0, 0.25])


def test_the_best_of_weak_matches_is_not_a_full_keyword_match() -> None:
    # issue 33: scaled to the best chunk alone, a chunk sharing one common word of ten got the whole keyword weight
    full = keyword_full(1.0, 10.0)
    assert full == pytest.approx(KEYWORD_FULL_SHARE * 10.0)
    np.testing.assert_allclose(keyword_weight(f32(0.0, 1.0, 0.5), full), [0.0, 1 / 3, 1 / 6], rtol=1e-6)


def test_keyword_weight_of_no_match_is_zero() -> None:
    assert keyword_full(0.0, 10.0) == 0.0 and keyword_full(0.0, 0.0) == 0.0
    out = keyword_weight(f32(0.0, 0.0), 0.0)
    np.testing.assert_array_equal(out, [0.0, 0.0])
    assert not np.isnan(out).any()
    assert keyword_weight(f32(), 0.0).shape == (0,)


def test_hybrid_formula() -> None:
    cos, bm = f32(0.9, 0.1, -0.2), f32(0.0, 1.0, 0.5)
    out = hybrid(cos, bm, 0.7)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [0.63, 0.37, 0.01], atol=1e-6)
    np.testing.assert_allclose(hybrid(cos, bm, 1.0), cos)
    np.testing.assert_allclose(hybrid(cos, bm, 0.0), bm)


@settings(max_examples=100, deadline=None, database=None)
@given(
    raw=hnp.arrays(np.float32, st.integers(1, 30), elements=st.floats(0, 50, width=32)),
    alpha=st.floats(0, 1),
)
def test_hybrid_of_the_keyword_weight_stays_in_range(raw: np.ndarray, alpha: float) -> None:
    for mass in (0.0, float(raw.max()), 10.0 * float(raw.max()), 1000.0):
        bm = keyword_weight(raw, keyword_full(float(raw.max()), mass))
        assert bm.min() >= 0.0 and bm.max() <= 1.0
    cos = np.clip(raw / 50.0, -1, 1).astype(np.float32)
    bm = keyword_weight(raw, keyword_full(float(raw.max()), float(raw.sum())))
    score = hybrid(cos, bm, alpha)
    np.testing.assert_allclose(score, alpha * cos + (1 - alpha) * bm, rtol=1e-5, atol=1e-6)


def test_top_k_best_first() -> None:
    assert top_k(f32(0.1, 0.9, 0.5, 0.7), 2) == [1, 3]
    assert top_k(f32(0.1, 0.9, 0.5, 0.7), 4) == [1, 3, 2, 0]


def test_top_k_larger_than_size() -> None:
    assert top_k(f32(0.3, 0.1, 0.2), 10) == [0, 2, 1]


def test_top_k_ties_in_the_result_are_ordered_by_index() -> None:
    assert top_k(f32(0.5, 0.9, 0.9, 0.5, 0.9), 3) == [1, 2, 4]
    assert top_k(f32(0.5, 0.9, 0.9, 0.5, 0.9), 5) == [1, 2, 4, 0, 3]


def test_top_k_with_mask() -> None:
    scores = f32(0.5, 0.9, 0.8, 0.1)
    assert top_k(scores, 2, np.array([True, False, True, True])) == [2, 0]
    assert top_k(scores, 5, np.array([False, False, False, True])) == [3]
    assert top_k(scores, 3, np.zeros(4, dtype=bool)) == []


def test_top_k_empty_and_non_positive_k() -> None:
    assert top_k(f32(), 3) == []
    assert top_k(f32(1.0, 2.0), 0) == []
    assert top_k(f32(1.0, 2.0), -1) == []


@settings(max_examples=200, deadline=None, database=None)
@given(
    scores=hnp.arrays(np.float32, st.integers(0, 40), elements=st.floats(-1, 1, width=32)),
    k=st.integers(0, 50),
    data=st.data(),
)
def test_top_k_matches_a_full_sort(scores: np.ndarray, k: int, data: st.DataObject) -> None:
    mask = data.draw(hnp.arrays(np.bool_, scores.shape))
    expected = sorted((i for i in range(scores.size) if mask[i]), key=lambda i: (-scores[i], i))[:k]
    got = top_k(scores, k, mask)
    # Which of several chunks tied at the k-th place is kept is unspecified; the scores must match a full sort.
    assert [scores[i] for i in got] == [scores[i] for i in expected]
    assert len(set(got)) == len(got)
    assert all(mask[i] for i in got)
    for a, b in itertools.pairwise(got):
        assert scores[a] > scores[b] or (scores[a] == scores[b] and a < b)


def test_snippet_short_text_is_whole_and_flattened() -> None:
    assert snippet("  one\n\ntwo\tthree  ", ["two"]) == "one two three"


def test_snippet_centres_on_the_first_query_word() -> None:
    text = "x" * 300 + " needle " + "y" * 300
    out = snippet(text, ["needle"], width=100)
    assert "needle" in out
    assert out.startswith("…") and out.endswith("…")


def test_snippet_without_match_starts_at_the_beginning() -> None:
    out = snippet("word " * 100, ["absent"], width=50)
    assert out.startswith("word word")
    assert out.endswith("…")


def test_snippet_ignores_short_query_tokens() -> None:
    text = "ab " * 10 + "z" * 300
    assert snippet(text, ["ab"], width=40).startswith("ab ab")


def test_snippet_match_is_case_insensitive() -> None:
    out = snippet("a" * 300 + " NeedLe " + "b" * 300, ["needle"], width=60)
    assert "NeedLe" in out


def test_snippet_with_length_changing_casefold() -> None:
    text = "ß" * 200 + " needle " + "y" * 400
    assert "needle" in snippet(text, ["needle"], width=100)


def test_snippet_centres_on_cjk_match() -> None:
    text = "中文" * 200 + "语言模型" + "中文" * 200
    assert "语言模型" in snippet(text, ["语言", "言模", "模型"], width=100)


def test_snippet_is_at_most_width() -> None:
    out = snippet("x" * 300 + " needle " + "y" * 300, ["needle"], width=100)
    assert len(out) <= 100


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.7, 1.0])
def test_add_bm25_in_place_equals_the_dense_formula(alpha: float) -> None:
    rng = np.random.default_rng(7)
    cosine = rng.uniform(-1, 1, 500).astype(np.float32)
    raw = np.where(rng.random(500) < 0.1, rng.uniform(0, 9, 500), 0).astype(np.float32)
    for full in (float(raw.max()), 3.0 * float(raw.max())):
        dense = hybrid(cosine, keyword_weight(raw, full), alpha)
        assert np.allclose(add_bm25(alpha * cosine, raw, alpha, full), dense, atol=1e-6)
    assert np.allclose(add_bm25(alpha * cosine, np.zeros(500, np.float32), alpha, 0.0), alpha * cosine, atol=1e-7)


def _context(scores: list[float], cosine: list[float], note_cos: list[float], max_loss: float) -> list[float]:
    """add_context over one-chunk notes (no neighbours), note vectors chosen so that cos(query, note) = note_cos."""
    from botbin.index.ranking import add_context, neighbours

    q = np.array([1.0, 0.0], dtype=np.float32)
    notes = np.array([[c, np.sqrt(1 - c * c)] for c in note_cos], dtype=np.float32)
    of_row = np.arange(len(scores), dtype=np.int64)
    out = add_context(
        np.array(scores, dtype=np.float32),
        np.array(cosine, dtype=np.float32),
        notes,
        of_row,
        neighbours(of_row),
        q,
        0.7,
        0.4,
        max_loss,
    )
    return [float(x) for x in out]


def test_context_lifts_a_chunk_of_a_note_about_the_query_freely() -> None:
    lifted = _context([0.3], [0.3], [0.9], max_loss=0.12)[0]
    assert lifted == pytest.approx((0.3 + 0.7 * 0.9 + 0.4 * 0.3) / 2.1, abs=1e-6) and lifted > 0.3


def test_context_lowers_a_strong_chunk_of_an_unrelated_note_by_at_most_max_loss() -> None:
    # a fact planted in a note about something else: its own match 0.6, its note 0.0
    bounded = _context([0.6], [0.6], [0.0], max_loss=0.12)[0]
    assert bounded == pytest.approx(0.6 - 0.12, abs=1e-6)
    free = _context([0.6], [0.6], [0.0], max_loss=1.0)[0]
    assert free == pytest.approx((0.6 + 0.4 * 0.6) / 2.1, abs=1e-6) and free < bounded


def test_context_never_lowers_a_chunk_that_holds_the_query_keywords() -> None:
    from botbin.index.ranking import KEYWORD_KEEP_SHARE, blend_context, keyword_floor

    # two chunks with the same hybrid score in notes about something else; the first holds the query's rare words
    scores = np.array([0.3, 0.3], dtype=np.float32)
    zero = np.zeros(2, dtype=np.float32)
    keeps = np.array([5.0, 0.5], dtype=np.float32) >= keyword_floor(idf_mass=6.0)
    assert keeps.tolist() == [True, False] and keyword_floor(6.0) == pytest.approx(KEYWORD_KEEP_SHARE * 6.0)
    out = blend_context(scores, zero, zero, 0.7, 0.4, 0.12, keeps)
    assert out.tolist() == pytest.approx([0.3, 0.3 - 0.12], abs=1e-6)
    assert keyword_floor(0.0) == float("inf")  # a query without terms: no row keeps
    lifted = blend_context(np.array([0.3], np.float32), np.ones(1, np.float32), np.ones(1, np.float32), 0.7, 0.4)
    assert float(lifted[0]) > 0.3  # keeping is a floor: its note may still lift it
