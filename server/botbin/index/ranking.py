"""Pure ranking math: hybrid score, filters as masks, top-k selection and snippets."""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt


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
