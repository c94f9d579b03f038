"""PostgresIndex: the index backend over the team database (search, related, a note's chunks), for one or
more namespaces; what it answers has the embedded index's shape (index/hits.py)."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql

from botbin.aifbin import AifBinDocument
from botbin.index.hits import Hit, IndexQuery
from botbin.index.postgres import publish, query
from botbin.index.postgres.connect import ConnectOptions, RemoteIndexError, clean_reason, open_pool, redact
from botbin.index.postgres.schema import check_version
from botbin.index.ranking import bm25_share
from botbin.index.snippet import note_snippet
from botbin.index.tokenize import bm25_terms

log = logging.getLogger(__name__)
_COUNT_TTL_S = 5.0
EF_SEARCH_MAX = 1000
"""pgvector's largest ``hnsw.ef_search``; an HNSW scan returns at most ef_search rows, so the cosine pool is capped
at it too."""


class PostgresIndex:
    """Notes of ``namespace`` (written) and ``read_namespaces`` (searched) in the team database."""

    def __init__(
        self, options: ConnectOptions, namespace: str, read_namespaces: tuple[str, ...] = (), ef_search: int = 100
    ) -> None:
        """Connects at once. Raises RemoteIndexError (URL shown without its password) when the database is
        unreachable, has no botbin schema, or a schema newer than this botbin."""
        self.url = redact(options.url)
        self._raw_url = options.url
        self.namespace = namespace
        self.read_namespaces = read_namespaces or (namespace,)
        self.ef_search = ef_search
        """HNSW ``ef_search``: candidates the graph search keeps (bench/bench_postgres.py picks it)."""
        self._pool = open_pool(options)
        self._count: tuple[float, int] | None = None
        try:
            with self._pool.connection() as conn:
                check_version(conn, self.url)
        except BaseException:
            self._pool.close()
            raise

    def close(self) -> None:
        self._pool.close()

    def _failed(self, exc: psycopg.Error) -> RemoteIndexError:
        hint = ""
        if isinstance(exc, psycopg.errors.InsufficientPrivilege):
            hint = (
                f" (a role granted only reading of namespace {self.namespace} cannot publish: set postgres_publish"
                f" = false in botbin.toml, or have it granted `botbin db grant ROLE {self.namespace} --write`)"
            )
        return RemoteIndexError(f"team database {self.url}: {clean_reason(exc, self._raw_url)}{hint}")

    def __len__(self) -> int:
        """Chunks readable in the searched namespaces (cached a few seconds: a search asks twice)."""
        now = time.monotonic()
        if self._count is None or now - self._count[0] > _COUNT_TTL_S:
            try:
                with self._pool.connection() as conn:
                    row = conn.execute(
                        "SELECT COALESCE(sum(chunk_count), 0) FROM botbin_notes WHERE namespace = ANY(%s)",
                        (list(self.read_namespaces),),
                    ).fetchone()
            except psycopg.Error as exc:
                raise self._failed(exc) from exc
            self._count = (now, int(row[0]) if row else 0)
        return self._count[1]

    # -- writing -------------------------------------------------------------------------------------
    def published(self) -> dict[str, tuple[str, str | None]]:
        """{path: (fingerprint, publisher)} of the notes published in ``namespace``."""
        try:
            with self._pool.connection() as conn:
                return publish.published(conn, self.namespace)
        except psycopg.Error as exc:
            raise self._failed(exc) from exc

    def unreadable(self) -> list[str]:
        """The searched namespaces this role reads no note of (no such namespace, or no grant on it)."""
        try:
            with self._pool.connection() as conn:
                rows = conn.execute(
                    "SELECT ns FROM unnest(%s::text[]) AS ns "
                    "WHERE NOT EXISTS (SELECT 1 FROM botbin_notes n WHERE n.namespace = ns)",
                    (list(self.read_namespaces),),
                ).fetchall()
        except psycopg.Error as exc:
            raise self._failed(exc) from exc
        return [str(ns) for (ns,) in rows]

    def claim(self, publisher: str, stamps: dict[str, str]) -> set[str]:
        """Make ``publisher`` own the notes whose fingerprint is its own ({path: fingerprint}); the paths taken."""
        try:
            with self._pool.connection() as conn:
                return publish.claim(conn, self.namespace, publisher, stamps)
        except psycopg.Error as exc:
            raise self._failed(exc) from exc

    def publish(self, doc: AifBinDocument, fingerprint: str, publisher: str = "") -> None:
        """Replace note ``doc.source`` in ``namespace``, atomically, as written by ``publisher`` (a workspace
        id). Raises RemoteIndexError."""
        try:
            with self._pool.connection() as conn:
                publish.publish_note(conn, self.namespace, doc, fingerprint, publisher)
        except psycopg.Error as exc:
            raise self._failed(exc) from exc
        self._count = None

    def remove(self, paths: list[str]) -> None:
        """Drop ``paths`` from ``namespace``. Raises RemoteIndexError."""
        try:
            with self._pool.connection() as conn:
                publish.remove_notes(conn, self.namespace, paths)
        except psycopg.Error as exc:
            raise self._failed(exc) from exc
        self._count = None

    # -- reading -------------------------------------------------------------------------------------
    def chunk_vector(self, path: str, lines: tuple[int, int], source_md5: str) -> npt.NDArray[np.float32] | None:
        """As MemoryIndex.chunk_vector, for a note of ``namespace``."""
        try:
            with self._pool.connection() as conn:
                rows = conn.execute(
                    "SELECT c.start_line, c.end_line, c.embedding FROM botbin_chunks c JOIN botbin_notes n "
                    "USING (namespace, path) WHERE c.namespace = %s AND c.path = %s AND n.source_md5 = %s "
                    "ORDER BY c.ord",
                    (self.namespace, path, source_md5),
                ).fetchall()
        except psycopg.Error as exc:
            raise self._failed(exc) from exc
        if not rows:
            return None
        overlaps = [min(int(end), lines[1]) - max(int(start), lines[0]) for start, end, _ in rows]
        best = int(np.argmax(overlaps))
        return np.asarray(rows[best][2], dtype=np.float32) if overlaps[best] > 0 else None

    def search(self, request: IndexQuery) -> list[Hit]:
        """As MemoryIndex.search, over the searched namespaces (hits carry their namespace). The database
        proposes the best chunks by cosine (HNSW) and by full-text rank; they are scored as the embedded
        index scores. Raises RemoteIndexError."""
        r = request
        has_vector = r.query_vector is not None
        params = self._params(r.query, r.query_vector, r.filters.kind, min(max(r.k * 10, 100), EF_SEARCH_MAX))
        try:
            with self._pool.connection() as conn, conn.transaction():
                if r.note_filtered:  # note-level filters: exact among the admitted notes' chunks
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # the notes and chunks at once
                    conn.execute("SET LOCAL enable_indexscan = off")
                    rows = conn.execute(query.NOTES_SQL, (params["ns"],)).fetchall()
                    params["fns"], params["fpaths"] = query.admitted_notes(rows, r)
                ef = min(max(self.ef_search, params["nvec"]), EF_SEARCH_MAX)
                conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef)))
                rows = conn.execute(query.SEARCH_SQL, params).fetchall()
        except psycopg.Error as exc:
            raise self._failed(exc) from exc
        cands = [query.candidate(r, has_vector) for r in rows]
        score, full = query.scores(cands, r.alpha, r.note_weight, r.neighbour_weight, has_vector)
        exempt = r.exempt_daily and not r.best_per_note
        order = query.pick(cands, score, r.k, 1 if r.best_per_note else r.max_hits_per_note, r, exempt)
        weights = dict.fromkeys(bm25_terms(r.query), 1.0)
        return [self._hit(cands[i], float(score[i]), full, weights) for i in order]

    def _params(self, text: str, vector: npt.NDArray[np.float32] | None, kind: str | None, size: int) -> dict[str, Any]:
        vec = np.zeros(384, dtype=np.float32) if vector is None else vector.astype(np.float32, copy=False)
        terms, weights = query.query_terms(text)
        return {
            "ns": list(self.read_namespaces),
            "kind": kind,
            "vec": vec,
            "nvec": 0 if vector is None else size,
            "terms": terms,
            "weights": weights,
            "nlex": size,
            "fns": None,
            "fpaths": None,
        }

    def _hit(self, c: query.Candidate, score: float, full: float, weights: dict[str, float]) -> Hit:
        shown = note_snippet(c.text, c.start_line, c.end_line, weights)
        return Hit(
            path=c.path,
            start_line=c.start_line,
            end_line=c.end_line,
            heading_path=c.heading_path,
            kind=c.kind,
            title=c.title,
            snippet=shown.text,
            text=c.text,
            score=score,
            cosine=c.cosine,
            bm25=c.lexical / full if full > 0 else 0.0,
            date=c.date,
            instruction=c.instruction,
            text_md5=c.text_md5,
            snippet_start_line=shown.start_line,
            snippet_end_line=shown.end_line,
            namespace=c.namespace,
            bm25_share=bm25_share(c.lexical, c.idf_mass),
            note_cosine=c.note_cosine,
            neighbour_cosine=c.neighbours,
        )
