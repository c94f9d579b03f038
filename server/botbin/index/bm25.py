"""BM25 parameters (K1, B) and the bm25s reference index (Lucene variant, rebuilt whole per corpus version): the
store scores with index/lexical.py, patched per note; tests and bench/experiments/bench_lexical.py hold it equal to
this one."""

from __future__ import annotations

import logging

import numpy as np
import numpy.typing as npt

K1 = 0.9
"""Term-frequency saturation (Robertson and Zaragoza, 2009). 0.9 and B 0.4 are Anserini's BM25 defaults, its
BEIR and MS MARCO baselines (Lin et al., 2021, "Pyserini", SIGIR); chosen over bm25s's defaults 1.5 / 0.75
(Lucene's are 1.2 / 0.75) on the SciFact train split (hybrid nDCG@10 0.738 -> 0.742) and LoCoMo (raw turns
recall@10 0.497 -> 0.532), with the Obsidian help queries' hybrid MRR@10 unchanged (0.756; hit@5 0.883 ->
0.867; bench/README.md). Chunks are capped at the model's 256 tokens, so strong length normalization has little
to correct."""
B = 0.4
"""Length normalization, 0 (none) to 1 (full); see K1."""


class Bm25Index:
    """BM25 scores of every chunk for a query; built once per corpus version (the reference of lexical.py)."""

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

    def idf(self, query: list[str]) -> dict[str, float]:
        """Lucene's IDF, ``ln(1 + (N - df + 0.5) / (df + 0.5))``, of each known term of ``query`` (the weights
        that place a snippet); terms in no chunk are left out."""
        if self._retriever is None:
            return {}
        indptr = self._retriever.scores["indptr"]
        out: dict[str, float] = {}
        for term in query:
            tid = self._vocab.get(term)
            if tid is not None and tid + 1 < len(indptr):
                df = int(indptr[tid + 1] - indptr[tid])
                if df:
                    out[term] = float(np.log1p((self.size - df + 0.5) / (df + 0.5)))
        return out
