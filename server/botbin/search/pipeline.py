"""The one ranking pipeline: every search of the CLI, the language server and the MCP server runs it.

Stages, in order:

1. **candidates**: the index (the in-memory one, or the team database for backend "postgres": the same
   formula, index/postgres/) scores every chunk by ``alpha * cosine + (1 - alpha) * bm25_norm`` (the keyword
   weight: raw BM25 over that of a full match, ranking.keyword_full) averaged with the query's cosine to the
   chunk's note and neighbours (index/store.py, index/ranking.py), filtered (path, tag, kind, dates), without
   archived memos, at most ``max_hits_per_note`` per note (daily notes exempt: each entry is its own memory,
   index/daily.py); it fetches more than asked so that later stages can re-order.
2. **memo decay**: ``score * (1 - w + w * decay)`` for memos that have faded (memory/lifecycle.py).
2b. **re-ranking** (off unless ``rerank_model`` names a cross-encoder, search/rerank.py): the best
   ``rerank_top_n`` are re-ordered by the cross-encoder's score of the query with each, within
   ``rerank_budget_ms`` (past it, the fused order stands and a warning says so).
3. **agent recency and scope** (agent recall only, ``Searcher.recall``), relevance first: hits under a
   relevance floor are dropped; a convex mix of the score with the note's recency and scope (search/recency.py)
   orders the rest, but never lifts a hit above one that is more than a margin more relevant (a tie-break,
   or TIME_MARGIN when the request speaks of time: "latest", "yesterday", "this week").
4. **per-note cap and self-exclusion**: ``best_per_note`` keeps a note's best chunk; ``related`` drops the
   paragraph itself and keeps one hit per note.
5. **freshness**: hits of notes deleted from disk or excluded by the settings since the last sync are left
   out (a stat per hit, sync/freshness.py); the result says so (``stale``, a warning).
6. **cut** to k, then the **relevance floor** for what a person reads (``relevant``: every surface, unless the
   request says ``show_all``; the result counts the hits left out in ``hidden``), and **reinforcement** of the hits
   returned (memory/lifecycle.py).

Several folders (the language server's) are merged by score with ``merge``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import astuple, dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from botbin.errors import ModelError
from botbin.index.hits import IndexQuery
from botbin.search.explain import ScorePart, Weights, score_parts
from botbin.search.recency import SCOPE_PREFERENCE, RecencyPolicy, age_hours, final_score, recency, scope_of
from botbin.search.rerank import Reranker
from botbin.sync.freshness import Freshness, freshness
from botbin.sync.scan import check_root
from botbin.sync.state import state_stamp
from botbin.wire.requests import RelatedRequest, SearchRequest

if TYPE_CHECKING:
    from botbin.index.backend import IndexBackend
    from botbin.index.hits import Hit
    from botbin.memory.lifecycle import Lifecycle
    from botbin.workspace import Workspace

log = logging.getLogger(__name__)
T = TypeVar("T")
#: Agent recall drops hits with a cosine under RELEVANCE_MIN_COSINE (all-MiniLM-L6-v2 gives unrelated texts
#: about -0.1 to 0.15) unless their raw BM25 score reaches RELEVANCE_MIN_BM25_SHARE of the most the query could
#: score (``Hit.bm25_share``: a shared "the" or "notes" is not a match, and the best of weak matches is still
#: weak). Chosen by bench/experiments/bench_relevance_floor.py (its README.md).
RELEVANCE_MIN_COSINE = 0.2
RELEVANCE_MIN_BM25_SHARE = 0.2
#: Recency and scope may place a hit above another only when their relevance differs by at most this much: a
#: tie-break for a request about a topic, a real preference for one about time ("what did we decide lately").
RELEVANCE_MARGIN = 0.01
TIME_MARGIN = 0.15
_TIME_WORDS = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|recent(?:ly)?|latest|newest|lately|currently|current|now|ago|"
    r"this (?:morning|afternoon|evening|week|month|quarter|year)|last (?:night|week|month|time|quarter|year)|"
    r"(?:past|previous|next) (?:day|week|month|few)|so far|still)\b",
    re.IGNORECASE,
)


def relevant(hit: Hit, degraded: bool = False) -> bool:
    """False for a hit under the relevance floor: hardly any similarity and no real keyword match. Agent recall
    drops such hits, and every surface a person reads hides them (``botbin search --all`` shows them); a
    keyword-only result (``degraded``) has no cosine to judge by, so all its hits stay."""
    return degraded or hit.cosine >= RELEVANCE_MIN_COSINE or hit.bm25_share >= RELEVANCE_MIN_BM25_SHARE


def recency_margin(query: str) -> float:
    """How far recency and scope may reorder agent recall for ``query``: TIME_MARGIN when it speaks of time."""
    return TIME_MARGIN if _TIME_WORDS.search(query) else RELEVANCE_MARGIN


@dataclass(frozen=True)
class SearchResult:
    """Hits for one query, and how they were obtained."""

    hits: list[Hit]
    degraded: bool = False
    """True when the model was unavailable and ranking fell back to BM25 alone."""
    warnings: tuple[str, ...] = ()
    indexed_at: str | None = None
    """``last_sync`` of the index searched (ISO 8601 UTC)."""
    stale: bool = False
    """True when hits of notes deleted or excluded since the last sync were left out (a warning names them)."""
    hidden: int = 0
    """Hits under the relevance floor left out (``relevant``; none when the request said ``show_all``)."""
    indexing: bool = False
    """True when a sync of this process ran as the search began (or none ever did): the hits cover what is indexed
    so far."""
    parts: tuple[tuple[ScorePart, ...], ...] = ()
    """When the request asked ``explain``: each hit's score parts, in the order of ``hits`` (search/explain.py)."""


def agent_policy(ws: Workspace) -> RecencyPolicy:
    """The agent-recall weights of ``ws``'s settings."""
    s = ws.settings
    return RecencyPolicy(s.recency_weight, s.scope_weight, s.daily_half_life_h, s.durable_half_life_h)


def _union(a: Freshness, b: Freshness) -> Freshness:
    """Both checks' findings, each path once, ``a``'s first."""
    return Freshness(
        *(tuple(dict.fromkeys((*x, *y))) for x, y in zip(astuple(a), astuple(b), strict=True))  # every field
    )


class Searcher:
    """The pipeline over one workspace and its memos."""

    def __init__(self, ws: Workspace, lifecycle: Lifecycle) -> None:
        self.ws, self.lifecycle = ws, lifecycle
        self._namespace: str | None = None
        """The team-database namespace of ``ws`` (its hits are on this disk); None for the embedded index."""
        self._synced: tuple[object, frozenset[str]] | None = None
        """(state file stamp, the notes it lists): read again only when the state file changed."""
        self.reranker = Reranker(ws)
        """Stage 2b, off unless ``rerank_model`` is set."""

    def search(
        self,
        request: SearchRequest,
        query_vector: npt.NDArray[np.float32] | None = None,
        reinforce: bool = True,
        rerank: bool = True,
    ) -> SearchResult:
        """Stages 1, 2, 2b and 4 to 6 for ``request``. Falls back to BM25 alone if the model cannot load.

        ``query_vector``: float32 (dim,) normalized, to use instead of embedding the query. ``reinforce``: count a
        retrieval for each hit returned (False for callers that show only some of them). ``rerank``: run the
        re-ranking stage when it is configured (``related`` does not: its query is a whole paragraph, asked on every
        hover).
        Raises WorkspaceError if the workspace folder is missing or unreadable.
        """
        check_root(self.ws.root)
        busy = self.ws.indexing
        index, warnings, remote = self._backend()
        degraded = False
        vector = query_vector
        if vector is None and request.query.strip() and len(index):
            try:
                vector = self.ws.models.embed_query(request.query)
            except ModelError as exc:
                degraded = True
                warnings = [w for w in warnings if w != str(exc)]  # one cause, one warning
                warnings.append(f"model unavailable, keyword search only: {exc}")
        k = request.k or self.ws.settings.top_k
        if not remote and len(index):
            self.lifecycle.hide_archived(self.ws.index.get()[0])
        s = self.ws.settings
        rerank = rerank and self.reranker.enabled
        fetch = k + min(k, 10)  # room for decay to lift a hit from just below the cut
        ask = self._candidates(request, vector, max(fetch, self.reranker.top_n) if rerank else fetch)
        seen = None
        # notes on this disk: the team database's namespace also holds other workspaces' notes
        mine = self._synced_paths() if remote else None

        def on_disk(h: Hit) -> bool:
            return h.namespace in (None, self._namespace) and (mine is None or h.path in mine)

        while True:
            with self.ws.index.lock:
                hits = index.search(ask)
            fresh = freshness(self.ws.root, s, [h.path for h in hits if on_disk(h)])
            if seen is not None:  # the notes found stale before, and any the second pass still met
                fresh = _union(seen, fresh)
            dropped = fresh.dropped
            kept = [h for h in hits if not on_disk(h) or h.path not in dropped]
            if len(kept) >= k or len(hits) < ask.k or seen is not None:
                break
            # notes deleted or excluded since the last sync took places: leave out every such note, then once more
            seen = fresh if remote else self._stale_notes(fresh)
            ask = replace(ask, skip_paths=seen.dropped)
        ranked = kept if remote else self.lifecycle.rank(kept)
        if rerank:
            ranked, problem = self.reranker.rerank(request.query, ranked)
            warnings.extend([problem] if problem else [])
        hits = ranked[:k]
        shown = hits if request.show_all else [h for h in hits if relevant(h, degraded)]
        note = fresh.warning()
        if note is not None:
            warnings.append(note)
        if reinforce and not remote:
            self.lifecycle.reinforce(shown)
        indexed_at = self.ws.index.indexed_at
        weights = self._weights(request) if request.explain else None
        parts = tuple(score_parts(h, weights, degraded) for h in shown) if weights is not None else ()
        hidden = len(hits) - len(shown)
        return SearchResult(shown, degraded, tuple(warnings), indexed_at, fresh.stale, hidden, busy, parts)

    def _weights(self, request: SearchRequest) -> Weights:
        """The ranking weights ``request`` runs with: the settings', its own ``alpha`` if it has one."""
        s = self.ws.settings
        alpha = s.alpha if request.alpha is None else request.alpha
        return Weights(alpha, s.note_weight, s.neighbour_weight, s.decay_weight)

    def warm(self) -> None:
        """Load the index and run one search on it that needs no model (a unit query vector, nothing counted as
        retrieved): what the first search of a process builds (the assembled matrix, the lexical index, the
        lifecycle's view) is built now instead of in the first request; the re-ranking stage's cross-encoder loads
        meanwhile on its own thread. Raises BotbinError."""
        self.reranker.warm_in_background()
        index, _ = self.ws.index.get()
        if len(index) and index.dim and self.ws.settings.backend != "postgres":  # the team database: not ours
            unit = np.zeros(index.dim, dtype=np.float32)
            unit[0] = 1.0
            self.search(SearchRequest(query="warm up", k=1, show_all=True), unit, reinforce=False, rerank=False)
            log.info("%s: index warmed (the first search's one-time builds done)", self.ws.root)

    def _candidates(self, request: SearchRequest, vector: npt.NDArray[np.float32] | None, fetch: int) -> IndexQuery:
        """Stage 1's query: the index's best ``fetch`` chunks, at most ``per_note`` of one note; when the request
        leaves ``per_note`` to the ``max_hits_per_note`` setting, daily notes are exempt (index/daily.py): a cap
        the caller asks for holds for every note."""
        s, r = self.ws.settings, request
        cap = s.max_hits_per_note if r.per_note is None else r.per_note
        alpha = s.alpha if r.alpha is None else r.alpha
        return IndexQuery(r.query, vector, fetch, alpha, r.filters, r.best_per_note, cap, s.note_weight,
                          s.neighbour_weight, exempt_daily=r.per_note is None)  # fmt: skip

    def _synced_paths(self) -> frozenset[str]:
        """The notes this workspace synced (its state file), parsed again only after the file changed."""
        stamp = state_stamp(self.ws.state_path)  # before the read: a later write is still noticed
        if self._synced is None or self._synced[0] != stamp:
            self._synced = (stamp, frozenset(self.ws.state()[0].files))
        return self._synced[1]

    def _stale_notes(self, found: Freshness) -> Freshness:
        """``found`` and every other indexed note that is deleted or no longer tracked (a stat per note)."""
        index, _ = self.ws.index.get()
        return _union(found, freshness(self.ws.root, self.ws.settings, index.note_paths()))

    def _backend(self) -> tuple[IndexBackend, list[str], bool]:
        """The index searched, its load warnings, and whether it is the team database (then memo decay and
        reinforcement, which live beside the local files, are left out)."""
        remote = self.ws.remote
        if remote is not None:
            self._namespace = remote.namespace
            return remote, [], True
        index, warnings = self.ws.index.get()
        return index, warnings, False

    def related(self, request: RelatedRequest) -> SearchResult:
        """Memories most related to ``request.text`` (a paragraph), best first, at most one per note, never the
        paragraph itself: hits of note ``path`` overlapping ``lines`` (0-based, end exclusive) are dropped; the
        relevance floor as in ``search``.

        ``source_md5``: MD5 of the note's current text; when the index holds that very version, the stored
        embedding of the chunk covering ``lines`` stands in for the paragraph's and the model is not run (a
        hover then costs a search, a few ms, instead of a ~30-50 ms embedding on 2 CPU cores).
        """
        r = request
        if not r.text.strip():
            return SearchResult([])
        vector = None
        if r.path is not None and r.lines is not None and r.source_md5 is not None:
            index = self._backend()[0]
            with self.ws.index.lock:
                vector = index.chunk_vector(r.path, r.lines, r.source_md5)
        paragraph = SearchRequest(query=" ".join(r.text.split()[:200]), show_all=True)
        query = paragraph.model_copy(update={"k": r.k * 4})  # room for the paragraph itself and its note
        result = self.search(query, query_vector=vector, reinforce=False, rerank=False)

        def is_self(hit: Hit) -> bool:
            lines = r.lines
            return hit.path == r.path and lines is not None and hit.start_line < lines[1] and lines[0] < hit.end_line

        near = _one_per_note(h for h in result.hits if not is_self(h))[: r.k]
        kept = near if r.show_all else [h for h in near if relevant(h, result.degraded)]
        self.lifecycle.reinforce(kept)  # a hover shows these
        return replace(result, hits=kept, hidden=len(near) - len(kept))

    def recall(self, request: SearchRequest, now: datetime | None = None, reinforce: bool = True) -> SearchResult:
        """Stage 3 on top of ``search``, relevance first: hits under the relevance floor are dropped (counted in
        ``hidden``), and recency and scope re-order only hits of nearly the same relevance (``relevance_first``);
        ``hit.score`` becomes the agent score, in [0, 1], its parts in ``hit.components``. ``request.k``: default
        the ``top_k`` setting."""
        now = now or datetime.now().astimezone()
        k = request.k or self.ws.settings.top_k
        wider = request.model_copy(update={"k": max(k * 3, k + 10), "show_all": True})  # past MAX_K is fine here
        result = self.search(wider, reinforce=False)
        policy = agent_policy(self.ws)
        scored = []
        for h in result.hits:
            if not relevant(h, result.degraded):
                continue
            scope, age = scope_of(h.path, h.instruction), age_hours(h.date, now)
            parts = (
                *h.components,
                ("similarity", h.score),
                ("recency", recency(scope, age, policy)),
                ("scope", SCOPE_PREFERENCE[scope]),
            )
            scored.append((h.score, replace(h, score=final_score(h.score, scope, age, policy), components=parts)))
        ranked = relevance_first(scored, recency_margin(request.query))[:k]
        if reinforce:
            self.lifecycle.reinforce(ranked)
        return replace(result, hits=ranked, hidden=len(result.hits) - len(scored))


def relevance_first(scored: list[tuple[float, Hit]], margin: float) -> list[Hit]:
    """Hits ordered by their agent score, except that none is placed above a hit whose relevance (the first of
    each pair) is more than ``margin`` higher: recency and scope decide among equals, never over meaning."""
    left = sorted(scored, key=lambda pair: pair[0], reverse=True)
    out: list[Hit] = []
    while left:
        floor = left[0][0] - margin
        best = max((i for i, (relevance, _) in enumerate(left) if relevance >= floor), key=lambda i: left[i][1].score)
        out.append(left.pop(best)[1])
    return out


def _one_per_note(hits: Iterable[Hit]) -> list[Hit]:
    seen: set[str] = set()
    kept: list[Hit] = []
    for hit in hits:
        if hit.path not in seen:
            seen.add(hit.path)
            kept.append(hit)
    return kept


@dataclass(frozen=True)
class Merged(Generic[T]):
    """Several folders' results as one: the best hits by score, each with its folder's tag ``T``."""

    hits: list[tuple[Hit, T]]
    """Best first."""
    degraded: bool
    """Any folder's ranking fell back to keywords alone."""
    indexed_at: str | None
    """The newest ``indexed_at``."""
    stale: bool
    """Any folder left out hits of notes deleted or excluded since its last sync."""
    hidden: int
    """Hits under the relevance floor the folders left out."""


def merge(results: Iterable[tuple[SearchResult, T]], k: int) -> Merged[T]:
    """The hits of several folders' results, each with its folder's tag ``T``, best ``k`` by score."""
    merged: list[tuple[Hit, T]] = []
    degraded = stale = False
    indexed_at: str | None = None
    hidden = 0
    for result, tag in results:
        degraded, stale, hidden = degraded or result.degraded, stale or result.stale, hidden + result.hidden
        indexed_at = max(filter(None, [indexed_at, result.indexed_at]), default=None)
        merged.extend((hit, tag) for hit in result.hits)
    merged.sort(key=lambda pair: pair[0].score, reverse=True)
    return Merged(merged[:k], degraded, indexed_at, stale, hidden)
