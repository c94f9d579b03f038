"""Payloads of ``botbin/search`` and ``botbin/related`` (LSP), of ``botbin search --json`` and of the MCP tool
``search_memory``; the search's params are the SearchRequest of wire/requests.py."""

from __future__ import annotations

from pydantic import Field

from botbin.wire.model import ChunkKind, WireModel


class Position(WireModel):
    """An LSP position."""

    line: int
    """0-based line."""
    character: int
    """0-based character, in UTF-16 code units unless the client negotiated another position encoding."""


class Range(WireModel):
    """An LSP range; ``end`` is exclusive."""

    start: Position
    """Where the range starts."""
    end: Position
    """Where the range ends (exclusive)."""


class RelatedAtParams(WireModel):
    """``botbin/related`` for the paragraph at ``position`` of an open or saved note."""

    uri: str
    """The note's URI."""
    position: Position
    """A position inside the paragraph."""
    k: int | None = None
    """Hits wanted, 1-1000 (default 5)."""


class RelatedTextParams(WireModel):
    """``botbin/related`` for any text."""

    text: str
    """The text to find related memories of."""
    uri: str | None = None
    """The note the text comes from, left out of the hits."""
    k: int | None = None
    """Hits wanted, 1-1000 (default 5)."""


class HitFields(WireModel):
    """What every surface says of a hit."""

    path: str
    """The note's path relative to its workspace folder, with ``/``."""
    start_line: int
    """First line of the chunk, 0-based."""
    end_line: int
    """Line after the chunk, 0-based (exclusive)."""
    heading_path: list[str]
    """Headings above the chunk, outermost first (may be empty)."""
    kind: ChunkKind
    """How the chunk binds an agent."""
    title: str
    """The note's title (frontmatter ``title``, else the file name without ``.md``)."""
    snippet: str
    """The sentence of the chunk that answers best."""
    snippet_start_line: int
    """0-based line where the snippet starts."""
    snippet_end_line: int
    """0-based line after the snippet (exclusive)."""
    score: float
    """The final score, higher is better (hybrid ``alpha·cosine + (1−alpha)·bm25``, then later stages)."""
    cosine: float
    """Cosine similarity of query and chunk, in [-1, 1]."""
    bm25: float
    """The keyword weight in the score, in [0, 1]: the raw BM25 score over that of a full keyword match (the
    query's best chunk's, but at least 0.3 of the IDF of the query's terms that some chunk holds)."""
    bm25_share: float
    """The chunk's raw BM25 score as a share of the most the query could score (the sum of its terms' IDF), in
    [0, 1]: an absolute keyword match (the relevance floor reads it; ``bm25`` is 1 for a best chunk that holds
    enough of the query)."""
    components: dict[str, float] = Field(default_factory=dict)
    """How the ranking stages made ``score``, by stage (``hybrid``, ``decay``, ``recency``, ``scope``); may be
    empty."""
    namespace: str | None = None
    """The team-database namespace the hit comes from (backend ``postgres``); null for the embedded index."""


class Hit(HitFields):
    """One chunk that matched, as ``botbin/search`` and ``botbin/related`` send it."""

    uri: str
    """The note's ``file:`` URI."""
    range: Range
    """The chunk's whole lines as an LSP range."""


class SearchResult(WireModel):
    """``botbin/search`` result."""

    hits: list[Hit]
    """Best first."""
    indexed_at: str | None
    """When the searched index was last written (ISO 8601 UTC), null before the first sync."""
    indexing: bool
    """True while a sync runs: the hits cover what is indexed so far."""
    degraded: bool
    """True when the model is unavailable and hits are ranked by keywords (BM25) alone."""
    stale: bool
    """True when hits of notes deleted or excluded since the last sync were left out."""
    hidden: int = 0
    """Hits under the relevance floor left out (hardly any similarity, no real keyword match; ``showAll`` keeps
    them): the server decides what a person sees."""


class RelatedResult(WireModel):
    """``botbin/related`` result."""

    hits: list[Hit]
    """Best first; the paragraph itself and hits under the relevance floor are left out."""
    indexing: bool
    """True while a sync runs."""
    degraded: bool
    """True when the model is unavailable and hits are ranked by keywords alone."""
    hidden: int = 0
    """Hits under the relevance floor left out."""


class SearchHits(WireModel):
    """``botbin search --json`` result."""

    hits: list[HitFields]
    """Best first, those over the relevance floor (all with ``--all``)."""
    hidden: int
    """Hits under the relevance floor left out."""
    degraded: bool
    """True when the model is unavailable and hits are ranked by keywords alone."""
    stale: bool
    """True when hits of notes deleted or excluded since the last sync were left out."""
    indexed_at: str | None
    """When the searched index was last written (ISO 8601 UTC), null before the first sync."""


class MemoryHit(HitFields):
    """A hit of the MCP tool ``search_memory``: its full text instead of a URI."""

    text: str
    """The chunk's full text."""


class SearchMemoryResult(WireModel):
    """MCP ``search_memory`` result."""

    hits: list[MemoryHit]
    """Best first (recent and durable notes first among relevant ones)."""
    degraded: bool
    """True when the model is unavailable and hits are ranked by keywords alone."""
    stale: bool
    """True when hits of notes deleted or excluded since the last sync were left out."""
    warnings: list[str]
    """Problems met (a note that could not be read, ...)."""
    indexed_at: str | None
    """When the index was last written (ISO 8601 UTC), null before the first sync."""
    indexing: bool
    """True while a sync of the server runs (at start-up, the first sync of a new workspace): hits cover what
    is indexed so far, and a warning says so."""
