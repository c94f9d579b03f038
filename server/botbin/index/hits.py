"""What a search of the index takes and gives: filters, hits, and the chunk references the memo lifecycle reads."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from botbin.config import path_glob


@dataclass(frozen=True)
class SearchFilters:
    """Restrict a search; every set field must match."""

    path_glob: str | None = None
    """Glob on the note's relative path (``**`` spans folders), e.g. ``memory/2026-11-*``."""
    tag: str | None = None
    """A note tag (case-insensitive; ``project`` also matches ``project/sub``)."""
    kind: str | None = None
    """Chunk kind: 'hard', 'soft' or 'lore'."""
    date_from: str | None = None
    """Earliest note date, ISO 8601 (inclusive)."""
    date_to: str | None = None
    """Latest note date, ISO 8601 (inclusive)."""
    skip_paths: frozenset[str] = frozenset()
    """Notes left out by path (the search pipeline's: notes deleted or no longer tracked since the last sync)."""

    @cached_property
    def _glob(self) -> Callable[[str], bool] | None:
        return path_glob(self.path_glob) if self.path_glob else None

    def admits_note(self, path: str, tags: Iterable[str], date: str | None) -> bool:
        """Whether a note passes the note-level filters (tag, dates, path glob); ``kind`` is a chunk's, see
        ``admits``. Pure: the embedded index (store.py ``_mask``) and the team database (postgres/query.py)
        both ask this. A tag matches itself and its sub-tags, case-insensitively (``#project`` admits
        ``Project/sub``); dates compare by day whatever time part either side carries, and a shorter
        ``date_to`` such as ``2026-11`` means the whole month; a note without a date fails a date filter."""
        if path in self.skip_paths:
            return False
        if self.tag:
            want = self.tag.casefold().lstrip("#")
            if not any(t.casefold() == want or t.casefold().startswith(want + "/") for t in tags):
                return False
        if self.date_from and (date is None or date[:10] < self.date_from[:10]):
            return False
        until = self.date_to[:10] if self.date_to else None
        if until and (date is None or date[: len(until)] > until):
            return False
        return self._glob is None or self._glob(path)

    def admits(self, path: str, tags: Iterable[str], date: str | None, kind: str) -> bool:
        """Whether a chunk of kind ``kind`` in the note (``path``, ``tags``, ``date``) passes every filter."""
        return (not self.kind or kind == self.kind) and self.admits_note(path, tags, date)


@dataclass(frozen=True)
class Hit:
    """One search result."""

    path: str
    """Relative POSIX path of the note."""
    start_line: int
    """0-based first line of the chunk."""
    end_line: int
    """0-based line after the chunk (exclusive)."""
    heading_path: tuple[str, ...]
    kind: str
    title: str
    snippet: str
    """The chunk's sentence that best matches the query, as plain one-line text (index/snippet.py)."""
    text: str
    """The chunk's full text."""
    score: float
    """Hybrid score, alpha * cosine + (1 - alpha) * bm25, averaged with the note's and the neighbours' cosine
    (ranking.add_context)."""
    cosine: float
    """Cosine similarity of query and chunk embeddings, in [-1, 1]."""
    bm25: float
    """The keyword weight in the score, in [0, 1] (ranking.keyword_weight): the raw BM25 score over that of a full
    keyword match, the query's best chunk's but at least a share of the query's matchable IDF mass, so the best
    of weak matches stays under 1."""
    date: str | None = None
    """The note's date (frontmatter or file name), ISO 8601, if it has one."""
    instruction: bool = False
    """True when the note is an instruction note (MEMORY.md, AGENTS.md, ...)."""
    text_md5: str = ""
    """MD5 hex of the chunk's embedded text: with ``path``, the chunk's memo key (memory/)."""
    snippet_start_line: int = 0
    """0-based note line where the snippet's sentence starts (within the chunk's lines)."""
    snippet_end_line: int = 0
    """0-based note line after the snippet's sentence (exclusive)."""
    components: tuple[tuple[str, float], ...] = ()
    """How later ranking stages made ``score`` (search/pipeline.py): ``hybrid`` (the index's score), ``decay``
    (the memo's retention factor), ``recency`` and ``scope`` (agent recall), in the order applied."""
    namespace: str | None = None
    """The team-database namespace the hit comes from (backend postgres); None for the embedded index."""
    bm25_share: float = 0.0
    """The chunk's raw BM25 score as a share of the most the query could score (the sum of its terms' IDF,
    LexicalIndex.idf_mass, unknown terms included), in [0, 1]: an absolute keyword match, unlike ``bm25``, which is
    1 for a query's best chunk that holds enough of its known terms (the relevance floor, search/pipeline.py,
    reads this one)."""
    note_cosine: float = 0.0
    """Cosine of the query and the chunk's note (its normalized mean chunk vector); 0 without a query vector."""
    neighbour_cosine: float = 0.0
    """Mean cosine of the query and the chunks before and after it in its note (its own cosine when it has
    none); 0 without a query vector. With ``note_cosine``, the terms ranking.add_context averaged into ``score``."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "headingPath": list(self.heading_path),
            "kind": self.kind,
            "title": self.title,
            "snippet": self.snippet,
            "snippetStartLine": self.snippet_start_line,
            "snippetEndLine": self.snippet_end_line,
            "score": round(self.score, 6),
            "cosine": round(self.cosine, 6),
            "bm25": round(self.bm25, 6),
            "bm25Share": round(self.bm25_share, 6),
        }
        if self.namespace is not None:
            out["namespace"] = self.namespace
        if self.components:
            out["components"] = {name: round(value, 6) for name, value in self.components}
        return out


@dataclass(frozen=True)
class ChunkRef:
    """One indexed chunk as the memo lifecycle sees it (memory/): its key, place and note facts."""

    path: str
    text_md5: str
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after the chunk (exclusive)."""
    kind: str
    text: str
    tags: tuple[str, ...]
    date: str | None
    """The note's date (frontmatter or file name), ISO 8601."""
    created_at: str | None
    """When the note was first synced, ISO 8601."""
    instruction: bool
    row: int
    """Row of the chunk's embedding in ``MemoryIndex.matrix()``."""
