"""Which rows a search of the assembled index returns, with the figures a hit shows: by a scan of every row, or
(past the HNSW threshold) from HNSW's nearest rows and the best BM25 rows, scored exactly as the scan scores
them. The HNSW path costs in proportion to its candidates, not to the index: BM25 from the query terms' postings,
filters and hidden memos tested on the candidates only, scores and ranking over the candidates alone."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from botbin.index.ann import CANDIDATES, AnnIndex
from botbin.index.assembled import Assembled, filter_mask, filter_rows
from botbin.index.candidates import LEXICAL_CANDIDATES, Context, candidate_scores, exact_scores, gather, rank, top_rows
from botbin.index.hits import IndexQuery
from botbin.index.ranking import keyword_full

MAX_CANDIDATES = 12_800
"""The most HNSW neighbours asked for when filters, hidden memos or the per-note cap leave too few of the first
ones; past it the scan serves (a filter that admits under ~1 % of the rows)."""


@dataclass(frozen=True)
class Ranked:
    """A search's best rows, best first."""

    rows: list[int]
    """Rows of the assembled index."""
    scores: list[float]
    """Each row's hybrid score (context included)."""
    bm25_raw: list[float]
    """Each row's raw BM25 score."""
    bm25_full: float
    """The raw BM25 score of a full keyword match for the query (ranking.keyword_full: the best live row's, at
    least a share of the query's matchable IDF mass; 0: no row matches)."""


@dataclass(frozen=True)
class Query:
    """What both rankings take."""

    terms: list[str]
    """BM25 terms of the query text."""
    vector: npt.NDArray[np.float32] | None
    """float32 (dim,), normalized; None: BM25 alone."""
    alpha: float
    """Weight of the cosine in the hybrid (0: BM25 alone)."""
    k: int
    """Rows wanted."""
    cap: int
    """At most this many rows of one note (0: no cap)."""
    filters: IndexQuery
    """The index query whose filters (and notes left out) a row must pass."""
    context: Context | None
    """The note and neighbour terms (candidates.Context), or None when the score has none."""
    uncapped: npt.NDArray[np.bool_] | None = None
    """Notes (by position) the cap leaves alone: the daily notes when the default cap applies (index/daily.py)."""
    matchable_mass: float = 0.0
    """The IDF mass of ``terms`` that some row holds (LexicalIndex.matchable_mass; ranking.keyword_full)."""


def exact_ranked(asm: Assembled, query: Query) -> Ranked:
    """The ``k`` best rows by a full scan of the index."""
    bm25_raw = asm.bm25_scores(query.terms)
    mask = filter_mask(asm, query.filters)
    visible = asm.visible()
    if visible is not None:
        mask = visible if mask is None else mask & visible
    full = keyword_full(float(bm25_raw.max()) if bm25_raw.size else 0.0, query.matchable_mass)
    scores = exact_scores(asm.matrix, query.vector, query.alpha, bm25_raw, query.context, full)
    order = rank(scores, query.k, mask, asm.note_of_row, query.cap, query.uncapped)
    return Ranked(order, [float(scores[i]) for i in order], [float(bm25_raw[i]) for i in order], full)


def ann_ranked(asm: Assembled, index: AnnIndex, query: Query) -> Ranked | None:
    """The ``k`` best rows among HNSW's nearest to the query vector (and their neighbours) and the best BM25
    rows, scored exactly. When filters or hidden memos admit only a share of the candidates, HNSW is asked again
    for enough neighbours that about CANDIDATES of them pass (and twice as many when the per-note cap leaves
    fewer than ``k``), up to MAX_CANDIDATES; None past that (the caller scans every row)."""
    q = query.vector
    if q is None:
        return None
    lex_rows, lex_raw = asm.bm25_rows(query.terms)
    full = keyword_full(float(lex_raw.max()) if lex_raw.size else 0.0, query.matchable_mass)
    lexical = top_rows(lex_rows, lex_raw, LEXICAL_CANDIDATES)
    want = count = max(CANDIDATES, 10 * query.k)
    while True:
        near = asm.rows_of(index.candidates(q, count))
        if query.context is not None:  # a row's neighbours lift it: those of a near row are candidates too
            around = query.context[2]
            near = np.concatenate((near, around.prev[near], around.next[near]))
        rows = np.union1d(near, lexical).astype(np.int64)
        raw = gather(lex_rows, lex_raw, rows)
        scores = candidate_scores(rows, asm.matrix, q, query.alpha, raw, query.context, full)
        mask = filter_rows(asm, rows, query.filters)
        order = rank(scores, query.k, mask, asm.note_of_row[rows], query.cap, query.uncapped)
        share = 1.0 if mask is None else np.count_nonzero(mask) / max(len(rows), 1)
        if len(order) >= query.k and share * count >= want:
            picked = [int(rows[i]) for i in order]
            return Ranked(picked, [float(scores[i]) for i in order], [float(raw[i]) for i in order], full)
        if count >= min(len(index), MAX_CANDIDATES):
            return None
        count = min(MAX_CANDIDATES, max(2 * count, int(np.ceil(want / max(share, 1e-6)))))
