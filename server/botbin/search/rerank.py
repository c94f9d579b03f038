"""The re-ranking stage of the pipeline (search/pipeline.py): a cross-encoder (the ``rerank_model`` setting; off
by default, none ships with botbin) reads the query with each of the fused top ``rerank_top_n`` hits and orders
them by its score. It gives up when scoring takes longer than ``rerank_budget_ms`` and the fused order stands.

The hits re-ordered keep the fused scores, handed out again in the new order (the best gets the highest of them):
results of several folders still merge by score, and later stages (agent recency) see the same range as without
re-ranking. Each re-scored hit carries the cross-encoder's own score as its ``rerank`` component.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from botbin.embedding.cross_encoder import CrossEncoderScorer, resolve_cross_encoder, shared_cross_encoder
from botbin.errors import ModelError

if TYPE_CHECKING:
    from botbin.index.hits import Hit
    from botbin.workspace import Workspace

log = logging.getLogger(__name__)


class Reranker:
    """The stage over one workspace's settings."""

    def __init__(self, ws: Workspace) -> None:
        s = ws.settings
        self.top_n, self.budget_ms = s.rerank_top_n, s.rerank_budget_ms
        self._setting, self._root = s.rerank_model, ws.root
        self._scorer: CrossEncoderScorer | None = None

    @property
    def enabled(self) -> bool:
        """True when a ``rerank_model`` is set."""
        return self._setting is not None

    def scorer(self) -> CrossEncoderScorer:
        """The cross-encoder, loaded (on the first call: not counted in the budget). Raises ModelError."""
        if self._scorer is None:
            assert self._setting is not None
            self._scorer = shared_cross_encoder(resolve_cross_encoder(self._setting, self._root))
        self._scorer.load()
        return self._scorer

    def warm_in_background(self) -> threading.Thread | None:
        """With re-ranking on, load the cross-encoder on a daemon thread now (a server's warm-up, so that its first
        search finds it ready); None when it is off. A ModelError is logged (the search that needs it says so)."""
        if not self.enabled:
            return None
        thread = threading.Thread(target=self._warm, name="botbin-warm-cross-encoder", daemon=True)
        thread.start()
        return thread

    def _warm(self) -> None:
        try:
            self.scorer()
        except ModelError as exc:
            log.warning("could not load the cross-encoder ahead of the first request: %s", exc)

    def rerank(self, query: str, hits: list[Hit]) -> tuple[list[Hit], str | None]:
        """``hits`` (best first) with the first ``top_n`` re-ordered by the cross-encoder, and a warning when it
        could not (a model that does not load, the budget spent): the order is then the fused one."""
        top = hits[: self.top_n]
        if not self.enabled or len(top) < 2 or not query.strip():
            return hits, None
        try:
            scorer = self.scorer()
            began = time.perf_counter()
            scores = scorer.score(query, [_passage(h) for h in top], began + self.budget_ms / 1000)
        except ModelError as exc:
            return hits, f"rerank_model not used: {exc}; results are in the fused order"
        if scores is None:
            log.info("re-ranking %d hits took over %d ms; the fused order is kept", len(top), self.budget_ms)
            return hits, f"re-ranking took over rerank_budget_ms ({self.budget_ms} ms); results are in the fused order"
        order = sorted(range(len(top)), key=lambda i: -scores[i])  # stable: ties keep the fused order
        fused = sorted((h.score for h in top), reverse=True)
        ranked = [
            replace(top[i], score=fused[place], components=(*top[i].components, ("rerank", scores[i])))
            for place, i in enumerate(order)
        ]
        return ranked + hits[self.top_n :], None


def _passage(hit: Hit) -> str:
    """What the cross-encoder reads of a hit: its heading path, then the chunk's text."""
    heading = " > ".join(hit.heading_path)
    return f"{heading}\n{hit.text}" if heading else hit.text
