"""Pure ranking math: hybrid score, the note-level term, filters as masks, top-k selection (capped per note)."""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

NOTE_WEIGHT = 0.7
"""Weight of the note-level cosine (query against the note's mean chunk vector) added to each chunk's hybrid
score. A chunk is judged with its note: a short section that happens to share words with the query no longer
beats the note that is about it. Chosen on two Obsidian help question sets at once (bench/README.md: the 60
queries' hit@1 0.650 -> 0.717, a second set of 38 new-user questions 0.447 -> 0.553, hit@5 0.850 -> 0.950 and
0.789 -> 0.842); 0.3 to 1.0 all gained on both."""
MAX_HITS_PER_NOTE = 2
"""At most this many hits of one note in a result list (0 lifts the cap): one long note must not fill the
top k."""


def normalize_bm25(raw: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Scale BM25 scores to [0, 1] by the query's best score (all zeros stay zeros)."""
    top = float(raw.max()) if raw.size else 0.0
    return raw / top if top > 0 else np.zeros_like(raw)


def hybrid(
    cosine: npt.NDArray[np.float32], bm25_norm: npt.NDArray[np.float32], alpha: float
) -> npt.NDArray[np.float32]:
    """``alpha * cosine + (1 - alpha) * bm25_norm`` (Bot-BIN paper §6.3), float32 of the same shape.

    The reference form of the formula; searches use the equivalent in-place add_bm25.
    """
    return (alpha * cosine + (1.0 - alpha) * bm25_norm).astype(np.float32, copy=False)


def add_bm25(
    alpha_cosine: npt.NDArray[np.float32], bm25_raw: npt.NDArray[np.float32], alpha: float
) -> npt.NDArray[np.float32]:
    """Turn ``alpha * cosine`` into the hybrid score in place by adding ``(1 - alpha) * bm25_norm``.

    The same result as ``hybrid(cosine, normalize_bm25(bm25_raw), alpha)`` with fewer passes over the
    arrays (the caller gets ``alpha * cosine`` from ``matrix @ (alpha * query)``). Returns the array.
    """
    top = float(bm25_raw.max()) if bm25_raw.size else 0.0
    if top > 0 and alpha < 1.0:
        alpha_cosine += bm25_raw * np.float32((1.0 - alpha) / top)
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


def add_note_term(scores: npt.NDArray[np.float32], note_vectors: npt.NDArray[np.float32],
                  note_of_row: npt.NDArray[np.int64], query: npt.NDArray[np.float32],
                  weight: float) -> npt.NDArray[np.float32]:
    """``(score + weight * cos(query, note vector)) / (1 + weight)`` for each row, in place (no-op for weight 0):
    the division keeps scores on the hybrid's scale (a chunk and note that both match fully still score 1)."""
    if weight and note_vectors.size and scores.size:
        scores += (note_vectors @ (query * np.float32(weight)))[note_of_row]
        scores *= np.float32(1.0 / (1.0 + weight))
    return scores


def capped_top_k(scores: npt.NDArray[np.float32], k: int, mask: npt.NDArray[np.bool_] | None,
                 note_of_row: npt.NDArray[np.int64], cap: int) -> list[int]:
    """Like top_k, with at most ``cap`` rows of one note (``note_of_row``); best first."""
    out: list[int] = []
    if k <= 0:
        return out
    for width in (k * 4 * max(1, 3 - cap), scores.size):
        taken: dict[int, int] = {}
        out = []
        for i in top_k(scores, width, mask):
            note = int(note_of_row[i])
            if taken.get(note, 0) < cap:
                taken[note] = taken.get(note, 0) + 1
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
