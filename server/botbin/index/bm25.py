"""BM25 over pre-tokenized chunks (bm25s, Lucene variant), safe on empty corpora."""

from __future__ import annotations

import logging

import numpy as np
import numpy.typing as npt

K1 = 1.5
"""Term-frequency saturation (bm25s and Lucene default; Robertson and Zaragoza, 2009)."""
B = 0.75
"""Length normalization, 0 (none) to 1 (full) (bm25s and Lucene default)."""


class Bm25Index:
    """BM25 scores of every chunk for a query; built once per corpus version."""

    def __init__(self, corpus: list[list[int]], vocab: dict[str, int]) -> None:
        """``corpus``: one list of token ids per chunk, in index order; ``vocab``: token -> id.

        Token ids (not strings) are passed to bm25s: the index keeps no per-chunk strings.
        """
        self.size = len(corpus)
        self._retriever = None
        self._vocab = vocab
        if any(corpus):
            import bm25s

            # bm25s sets its own logger to DEBUG on import and logs every build; keep it to warnings.
            logging.getLogger("bm25s").setLevel(logging.WARNING)
            self._retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
            self._retriever.index((corpus, dict(vocab)), show_progress=False)

    def scores(self, query: list[str]) -> npt.NDArray[np.float32]:
        """float32 (size,): BM25 score of each chunk for ``query`` tokens; zeros if no token is known."""
        if self._retriever is None:
            return np.zeros(self.size, dtype=np.float32)
        known = [t for t in query if t in self._vocab]
        if not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._retriever.get_scores(known), dtype=np.float32)
