"""Hybrid scores of a candidate set of rows instead of every row (the ANN path of MemoryIndex.search): the rows
HNSW finds nearest to the query, plus the best BM25 rows, scored exactly as a full scan scores them (the same
add_bm25 / add_context), in arrays the size of the candidate set (index/search_rows.py ranks them)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from botbin.index.ranking import Neighbours, add_bm25, add_context

Context = tuple[npt.NDArray[np.float32], npt.NDArray[np.int64], Neighbours, float, float, float]
"""(note_vectors, note_of_row, neighbours, note_weight, neighbour_weight, keyword floor): add_context's arguments,
the last the raw BM25 score from which a row keeps its own hybrid score (ranking.keyword_floor)."""

LEXICAL_CANDIDATES = 200
"""Best BM25 rows added to the vector candidates (a row's keyword weight needs the best raw score of all rows, as
in a full scan: ranking.keyword_full)."""


def rows_of_keys(
    sorted_keys: npt.NDArray[np.int64], order: npt.NDArray[np.int64], wanted: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Rows whose key is in ``wanted`` (unknown keys are skipped): ``order`` sorts the rows' keys and
    ``sorted_keys`` is them in that order. O(len(wanted) log rows)."""
    if not wanted.size or not sorted_keys.size:
        return np.zeros(0, dtype=np.int64)
    pos = np.minimum(np.searchsorted(sorted_keys, wanted), sorted_keys.size - 1)
    found = sorted_keys[pos] == wanted
    out: npt.NDArray[np.int64] = order[pos[found]].astype(np.int64)
    return out


def top_rows(
    rows: npt.NDArray[np.int64], values: npt.NDArray[np.float32], n: int = LEXICAL_CANDIDATES
) -> npt.NDArray[np.int64]:
    """The ``n`` of ``rows`` with the highest ``values`` (all of them when fewer), in no particular order."""
    if rows.size <= n:
        return rows
    out: npt.NDArray[np.int64] = rows[np.argpartition(-values, n - 1)[:n]]
    return out


def gather(
    rows: npt.NDArray[np.int64], values: npt.NDArray[np.float32], wanted: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """float32 (len(wanted),): the value of each of ``wanted`` in (``rows`` sorted, ``values``), 0 where absent."""
    out = np.zeros(len(wanted), dtype=np.float32)
    if rows.size and wanted.size:
        at = np.minimum(np.searchsorted(rows, wanted), rows.size - 1)
        held = rows[at] == wanted
        out[held] = values[at[held]]
    return out


def candidate_scores(
    rows: npt.NDArray[np.int64],
    matrix: npt.NDArray[np.float32],
    query: npt.NDArray[np.float32],
    alpha: float,
    bm25_raw: npt.NDArray[np.float32],
    context: Context | None,
    full: float,
) -> npt.NDArray[np.float32]:
    """float32 (len(rows),): the hybrid score of each of ``rows`` (sorted, holding the best BM25 row), as
    ``exact_scores`` gives it; ``bm25_raw``: their raw BM25 scores; ``full``: the raw score of a full keyword match
    (ranking.keyword_full). ``context``: None when the score has no context part. Costs O(len(rows) x dim),
    whatever the size of ``matrix``."""
    near_rows = rows
    if context is not None:
        near = context[2]
        near_rows = np.union1d(rows, np.concatenate((near.prev[rows], near.next[rows])))
    cos_near = matrix[near_rows] @ query
    at = np.searchsorted(near_rows, rows)
    scores = cos_near[at] * np.float32(alpha)
    add_bm25(scores, bm25_raw, alpha, full)
    if context is not None:
        note_vectors, note_of_row, near, note_weight, neighbour_weight, floor = context
        notes, local_note = np.unique(note_of_row[rows], return_inverse=True)
        local = Neighbours(
            np.searchsorted(near_rows, near.prev[rows]),
            np.searchsorted(near_rows, near.next[rows]),
            near.w_prev[rows],
            near.w_next[rows],
        )
        add_context(
            scores,
            cos_near,
            note_vectors[notes],
            local_note.astype(np.int64),
            local,
            query,
            note_weight,
            neighbour_weight,
            keeps=bm25_raw >= floor,
        )
    return scores


def exact_scores(
    matrix: npt.NDArray[np.float32],
    query: npt.NDArray[np.float32] | None,
    alpha: float,
    bm25_raw: npt.NDArray[np.float32],
    context: Context | None,
    full: float,
) -> npt.NDArray[np.float32]:
    """float32 (len(matrix),): the hybrid score of every row, by a full scan (``query`` None: BM25 alone); ``full``:
    the raw BM25 score of a full keyword match (ranking.keyword_full)."""
    # alpha * cosine in one pass over the matrix
    scores = np.zeros(len(matrix), dtype=np.float32) if query is None else matrix @ (query * np.float32(alpha))
    cosine = scores * np.float32(1.0 / alpha) if context is not None else scores
    add_bm25(scores, bm25_raw, alpha, full)
    if context is not None and query is not None:
        note_vectors, note_of_row, near, note_weight, neighbour_weight, floor = context
        keeps = bm25_raw >= floor
        add_context(scores, cosine, note_vectors, note_of_row, near, query, note_weight, neighbour_weight, keeps=keeps)
    return scores
