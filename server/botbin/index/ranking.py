"""Pure ranking math: hybrid score, the note-level term, filters as masks, top-k selection (capped per note)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from botbin.config import DEFAULTS

#: Weights of the note-level cosine and of the neighbours' cosine in a chunk's score, and the per-note cap of a
#: result list (0 lifts it; the default cap exempts daily notes, index/daily.py): the settings' defaults, where
#: their docstrings say what chose them (config_experimental.py, config_model.py).
NOTE_WEIGHT = DEFAULTS.note_weight
NEIGHBOUR_WEIGHT = DEFAULTS.neighbour_weight
MAX_HITS_PER_NOTE = DEFAULTS.max_hits_per_note
CONTEXT_MAX_LOSS = 0.12
"""The most the note and neighbour terms may lower a chunk's score below its own hybrid score. They lift a
chunk of a note that is about the query freely, but a fact written in a note about something else (a planted
fact, a stray line in a daily note) keeps its own match: on the help vault with 24 planted facts, hit@1 0.71 with
no bound, 0.96 with 0.12, while the two question sets lose at most 0.03 (bench/README.md)."""
KEYWORD_KEEP_SHARE = 0.5
"""A chunk whose raw BM25 score reaches this share of the most the query could score (``bm25_share``: it holds at
least half of the query's keyword weight, as a chunk that names a rare name, an error code or a planted fact's
words does) keeps at least its own hybrid score: its note and neighbours may lift it, never lower it. A fact
written in a note about something else is found by its words even when the note says nothing like the query.
Neutral on both Obsidian question sets (bench/README.md)."""
KEYWORD_FULL_SHARE = 0.3
"""A chunk counts as a full keyword match (keyword weight 1) only when its raw BM25 score reaches the query's best
chunk's and this share of the query's matchable IDF mass (keyword_full); BM25 used to be scaled to the best chunk
of each query alone, so a chunk sharing one common word with a question ("use", "sensor", "note") got the whole
keyword weight whenever no chunk shared more. 0.3 (about 0.57 of what a chunk holding every matchable query term
once scores, 1 / (1 + K1) of the mass at tf 1) was chosen on every set at once, bench/README.md: small agent
memories and the Obsidian help questions gain first places, SciFact and LoCoMo's best layout keep theirs."""


def bm25_share(raw: float, idf_mass: float) -> float:
    """A chunk's raw BM25 score as a share of the most the query could score (``idf_mass``), clipped to [0, 1]
    (float32 rounding may pass 1 by a hair); 0 when the query has no terms."""
    return min(max(raw / idf_mass, 0.0), 1.0) if idf_mass > 0 else 0.0


def keyword_floor(idf_mass: float) -> float:
    """The raw BM25 score from which a chunk keeps its own hybrid score (KEYWORD_KEEP_SHARE of ``idf_mass``, the
    query's summed IDF); infinite when the query has no terms."""
    return KEYWORD_KEEP_SHARE * idf_mass if idf_mass > 0 else float("inf")


def keyword_full(best: float, matchable_mass: float) -> float:
    """The raw BM25 score that counts as a full keyword match for a query: its best chunk's (``best``), but never
    less than KEYWORD_FULL_SHARE of ``matchable_mass`` (the summed IDF of the query's term occurrences that some
    chunk holds, LexicalIndex.matchable_mass); 0 when no chunk matches."""
    return max(best, KEYWORD_FULL_SHARE * matchable_mass) if best > 0 else 0.0


def keyword_weight(raw: npt.NDArray[np.float32], full: float) -> npt.NDArray[np.float32]:
    """The keyword part of the hybrid, in [0, 1]: raw BM25 scores over ``full`` (keyword_full; all zeros when
    it is 0). The query's best chunk gets 1 only when it holds a real part of the query; one common word of a
    longer query is a fraction of a match."""
    return raw / np.float32(full) if full > 0 else np.zeros_like(raw)


def hybrid(
    cosine: npt.NDArray[np.float32], bm25_norm: npt.NDArray[np.float32], alpha: float
) -> npt.NDArray[np.float32]:
    """``alpha * cosine + (1 - alpha) * bm25_norm`` (Bot-BIN paper §6.3), float32 of the same shape; ``bm25_norm``
    is keyword_weight's.

    The reference form of the formula; searches use the equivalent in-place add_bm25.
    """
    return (alpha * cosine + (1.0 - alpha) * bm25_norm).astype(np.float32, copy=False)


def add_bm25(
    alpha_cosine: npt.NDArray[np.float32], bm25_raw: npt.NDArray[np.float32], alpha: float, full: float
) -> npt.NDArray[np.float32]:
    """Turn ``alpha * cosine`` into the hybrid score in place by adding ``(1 - alpha) * bm25_raw / full``.

    The same result as ``hybrid(cosine, keyword_weight(bm25_raw, full), alpha)`` with fewer passes over the
    arrays (the caller gets ``alpha * cosine`` from ``matrix @ (alpha * query)``). ``full``: keyword_full of
    the query (0: no chunk matches, the cosine alone). Returns the array.
    """
    if full > 0 and alpha < 1.0:
        alpha_cosine += bm25_raw * np.float32((1.0 - alpha) / full)
    return alpha_cosine


def note_centroids(matrix: npt.NDArray[np.float32], counts: list[int]) -> npt.NDArray[np.float32]:
    """float32 (len(counts), dim): the normalized mean of each note's rows of ``matrix`` (rows are grouped by
    note, ``counts[i]`` rows for note i, in order); a note without rows gets zeros."""
    out = np.zeros((len(counts), matrix.shape[1] if matrix.ndim == 2 else 0), dtype=np.float32)
    sizes = np.asarray(counts, dtype=np.int64)
    filled = np.flatnonzero(sizes > 0)
    if filled.size:
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))[filled]
        sums = np.add.reduceat(matrix, starts, axis=0, dtype=np.float32)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        out[filled] = sums / np.where(norms > 0, norms, 1.0)
    return out


@dataclass(frozen=True)
class Neighbours:
    """Where each row's neighbours in its note are, as gathers: ``w_prev * x[prev] + w_next * x[next]`` is the
    mean of a row's value over the rows before and after it in the same note (its own value when it has none)."""

    prev: npt.NDArray[np.int64]
    """Row before each row in the same note (the row itself when none)."""
    next: npt.NDArray[np.int64]
    """Row after each row in the same note (the row itself when none)."""
    w_prev: npt.NDArray[np.float32]
    """Weight of ``prev``: 1/neighbours, 1 for a row alone in its note, 0 when it has no previous row."""
    w_next: npt.NDArray[np.float32]
    """Weight of ``next``."""


def neighbours(note_of_row: npt.NDArray[np.int64]) -> Neighbours:
    """The Neighbours of rows grouped by note in order (``note_of_row`` non-decreasing)."""
    rows = np.arange(note_of_row.size, dtype=np.int64)
    has_prev = np.r_[False, note_of_row[1:] == note_of_row[:-1]] if rows.size else np.zeros(0, dtype=bool)
    has_next = np.r_[note_of_row[:-1] == note_of_row[1:], False] if rows.size else np.zeros(0, dtype=bool)
    count = has_prev.astype(np.float32) + has_next.astype(np.float32)
    alone = count == 0
    w_prev = np.where(alone, 1.0, has_prev / np.maximum(count, 1)).astype(np.float32)
    w_next = np.where(alone, 0.0, has_next / np.maximum(count, 1)).astype(np.float32)
    return Neighbours(np.where(has_prev, rows - 1, rows), np.where(has_next, rows + 1, rows), w_prev, w_next)


def add_context(
    scores: npt.NDArray[np.float32],
    cosine: npt.NDArray[np.float32],
    note_vectors: npt.NDArray[np.float32],
    note_of_row: npt.NDArray[np.int64],
    near: Neighbours,
    query: npt.NDArray[np.float32],
    note_weight: float,
    neighbour_weight: float,
    max_loss: float = CONTEXT_MAX_LOSS,
    keeps: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.float32]:
    """In place: ``(score + note_weight * cos(query, note) + neighbour_weight * neighbours' mean cosine) /
    (1 + note_weight + neighbour_weight)``, never below ``score - max_loss``, nor below ``score`` where ``keeps``
    (rows at or above the keyword_floor). ``cosine``: each row's cosine to the query. The division keeps the
    hybrid's scale (a chunk, its note and its neighbours that all match fully still score 1). No-op for 0, 0."""
    if not scores.size or (not note_weight and not neighbour_weight):
        return scores
    note_cos = (note_vectors @ query)[note_of_row] if note_weight and note_vectors.size else np.zeros_like(scores)
    near_cos = near.w_prev * cosine[near.prev] + near.w_next * cosine[near.next]
    return blend_context(scores, note_cos, near_cos, note_weight, neighbour_weight, max_loss, keeps)


def blend_context(
    scores: npt.NDArray[np.float32],
    note_cos: npt.NDArray[np.float32],
    near_cos: npt.NDArray[np.float32],
    note_weight: float,
    neighbour_weight: float,
    max_loss: float = CONTEXT_MAX_LOSS,
    keeps: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.float32]:
    """In place: ``(score + note_weight * note_cos + neighbour_weight * near_cos) / (1 + note_weight +
    neighbour_weight)``, never below ``score - max_loss``, nor below ``score`` where ``keeps`` (add_context's
    law, for callers that have each row's note and neighbour cosines already, e.g. the Postgres backend)."""
    floor = scores - np.float32(max_loss)
    if keeps is not None:
        np.copyto(floor, scores, where=keeps)
    scores += note_cos.astype(np.float32, copy=False) * np.float32(note_weight)
    scores += near_cos.astype(np.float32, copy=False) * np.float32(neighbour_weight)
    scores *= np.float32(1.0 / (1.0 + note_weight + neighbour_weight))
    np.maximum(scores, floor, out=scores)
    return scores


def capped_top_k(
    scores: npt.NDArray[np.float32],
    k: int,
    mask: npt.NDArray[np.bool_] | None,
    note_of_row: npt.NDArray[np.int64],
    cap: int,
    uncapped: npt.NDArray[np.bool_] | None = None,
) -> list[int]:
    """Like top_k, with at most ``cap`` rows of one note (``note_of_row``), except notes whose ``uncapped``
    (indexed by note) is True; best first."""
    out: list[int] = []
    if k <= 0:
        return out
    for width in (k * 4 * max(1, 3 - cap), scores.size):
        taken: dict[int, int] = {}
        out = []
        for i in top_k(scores, width, mask):
            note = int(note_of_row[i])
            free = uncapped is not None and bool(uncapped[note])
            if free or taken.get(note, 0) < cap:
                taken[note] = taken.get(note, 0) + (not free)
                out.append(i)
                if len(out) == k:
                    return out
        if width >= scores.size:
            break
    return out


def top_k(scores: npt.NDArray[np.float32], k: int, mask: npt.NDArray[np.bool_] | None = None) -> list[int]:
    """Indices of the ``k`` best scores (best first), among rows where ``mask`` is True."""
    if mask is not None:
        candidates = np.flatnonzero(mask)
        if candidates.size == 0:
            return []
        sub = scores[candidates]
    else:
        candidates, sub = np.arange(scores.size), scores
    if sub.size == 0 or k <= 0:
        return []
    part = np.argpartition(-sub, k - 1)[:k] if k < sub.size else np.arange(sub.size)
    order = part[np.lexsort((candidates[part], -sub[part]))]
    return [int(candidates[i]) for i in order]


def snippet(text: str, query_tokens: list[str], width: int = 240) -> str:
    """One line of ``text`` (whitespace collapsed) around the first query word found.

    At most ``width`` characters, the '…' marks for cut ends included. Short ASCII tokens ("to", "a")
    are not used to place the window; CJK bigrams are.
    """
    flat = re.sub(r"\s+", " ", text).strip()
    if len(flat) <= width:
        return flat
    hits = []
    for token in query_tokens:
        if len(token) > 2 or not token.isascii():
            # Searched in the original text so that positions stay valid (casefold can change lengths).
            found = re.search(re.escape(token), flat, re.IGNORECASE)
            if found:
                hits.append(found.start())
    room = width - 2
    start = max(0, min(hits) - room // 3) if hits else 0
    end = min(len(flat), start + room)
    start = max(0, end - room)
    return ("…" if start else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")
