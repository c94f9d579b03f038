"""Hybrid search in the team database: HNSW cosine candidates and BM25 candidates (GIN over each chunk's terms)
in one statement (one snapshot), scored in Python with the embedded index's formula (index/ranking.py): alpha * cosine +
(1 - alpha) * lexical (ranking.keyword_weight: over the best chunk's, at least a share of the query's matchable IDF
mass), averaged with the note's and the neighbours' cosine."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.index.bm25 import K1, B
from botbin.index.daily import daily_date
from botbin.index.hits import IndexQuery
from botbin.index.ranking import add_bm25, blend_context, keyword_floor, keyword_full
from botbin.index.tokenize import bm25_terms

#: One statement, so the candidates and their notes come from one snapshot (no half-published note). The lexical
#: side is BM25 as index/lexical.py scores it (Lucene idf, k1, b; N and the mean length over the namespaces
#: searched; a repeated query term counts again), over the chunks' stored terms with a GIN index. With note-level
#: filters, ``fns``/``fpaths`` list the notes IndexQuery.admits_note lets through (else both NULL).
SEARCH_SQL = f"""
WITH qt AS (SELECT t, w FROM unnest(%(terms)s::text[], %(weights)s::int[]) AS q(t, w)),
admitted AS (SELECT * FROM unnest(%(fns)s::text[], %(fpaths)s::text[]) AS a(namespace, path)),
stats AS (
    SELECT COALESCE(sum(chunk_count), 0)::float8 AS n,
           COALESCE(sum(term_total), 0)::float8 / GREATEST(sum(chunk_count), 1) AS avg_len
    FROM botbin_notes WHERE namespace = ANY(%(ns)s)
), idf AS (
    SELECT qt.t, qt.w, d.df, ln(1 + (stats.n - d.df + 0.5) / (d.df + 0.5)) AS idf
    FROM qt CROSS JOIN stats CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM botbin_chunks c WHERE c.namespace = ANY(%(ns)s) AND c.terms @> ARRAY[qt.t]
    ) d
), lexall AS MATERIALIZED (
    SELECT c.namespace, c.path, c.ord,
           sum(i.w * i.idf * tf.n / (tf.n + {K1} * (1 - {B} + {B} * c.term_count / GREATEST(stats.avg_len, 1e-9))))
               AS bm25
    FROM botbin_chunks c CROSS JOIN stats CROSS JOIN idf i
    CROSS JOIN LATERAL (SELECT cardinality(array_positions(c.terms, i.t))::float8 AS n) tf
    WHERE c.namespace = ANY(%(ns)s) AND c.terms && %(terms)s::text[] AND tf.n > 0
      AND (%(kind)s::text IS NULL OR c.kind = %(kind)s)
      AND (%(fpaths)s::text[] IS NULL OR (c.namespace, c.path) IN (TABLE admitted))
    GROUP BY c.namespace, c.path, c.ord
), ranked AS (
    SELECT namespace, path, ord, bm25, row_number() OVER (ORDER BY bm25 DESC) <= %(nlex)s AS pooled FROM lexall
), vec AS (
    SELECT namespace, path, ord FROM botbin_chunks
    WHERE namespace = ANY(%(ns)s) AND (%(kind)s::text IS NULL OR kind = %(kind)s)
      AND (%(fpaths)s::text[] IS NULL OR (namespace, path) IN (TABLE admitted))
    ORDER BY embedding <=> %(vec)s::vector LIMIT %(nvec)s
), cand AS (  -- the cosine pool and the BM25 pool, each chunk once with its BM25 score (a hash aggregate)
    SELECT namespace, path, ord, max(bm25) AS bm25 FROM (
        SELECT namespace, path, ord, NULL::float8 AS bm25, true AS pooled FROM vec
        UNION ALL SELECT namespace, path, ord, bm25, pooled FROM ranked
    ) u GROUP BY namespace, path, ord HAVING bool_or(pooled)
)
SELECT c.namespace, c.path, c.ord, c.text, c.text_md5, c.kind, c.start_line, c.end_line, c.heading_path,
       1 - (c.embedding <=> %(vec)s::vector), COALESCE(cand.bm25, 0),
       1 - (p.embedding <=> %(vec)s::vector), 1 - (x.embedding <=> %(vec)s::vector),
       COALESCE(1 - (n.centroid <=> %(vec)s::vector), 0),
       n.title, n.tags, n.date, n.instruction, (SELECT COALESCE(sum(w * idf), 0) FROM idf),
       (SELECT COALESCE(sum(w * idf) FILTER (WHERE df > 0), 0) FROM idf)
FROM cand
JOIN botbin_chunks c USING (namespace, path, ord)
JOIN botbin_notes n ON n.namespace = c.namespace AND n.path = c.path
LEFT JOIN botbin_chunks p ON p.namespace = c.namespace AND p.path = c.path AND p.ord = c.ord - 1
LEFT JOIN botbin_chunks x ON x.namespace = c.namespace AND x.path = c.path AND x.ord = c.ord + 1
"""


NOTES_SQL = "SELECT namespace, path, tags, date FROM botbin_notes WHERE namespace = ANY(%s)"
"""The note-level facts IndexQuery.admits_note reads, for every note of the namespaces searched."""


def admitted_notes(rows: list[tuple[Any, ...]], f: IndexQuery) -> tuple[list[str], list[str]]:
    """(namespaces, paths) of the rows of NOTES_SQL that pass ``f``'s note-level filters (and are not left out)."""
    kept = [(str(ns), str(path)) for ns, path, tags, date in rows if f.admits_note(path, tags or (), date)]
    return [ns for ns, _ in kept], [path for _, path in kept]


def query_terms(query: str) -> tuple[list[str], list[int]]:
    """The query's BM25 terms (index/tokenize.py) and how often each occurs (a repeat counts again)."""
    counts = Counter(bm25_terms(query))
    return list(counts), list(counts.values())


@dataclass(frozen=True)
class Candidate:
    """One chunk the database proposed, with what scoring needs."""

    namespace: str
    path: str
    ord: int
    """Position of the chunk in its note."""
    text: str
    text_md5: str
    kind: str
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after the chunk (exclusive)."""
    heading_path: tuple[str, ...]
    cosine: float
    """Cosine of query and chunk (0 without a query vector)."""
    lexical: float
    """Raw BM25 score (0 without a shared term)."""
    neighbours: float
    """Mean cosine of the chunks before and after it in its note (its own cosine when it has none)."""
    note_cosine: float
    """Cosine of the query and the note's normalized mean chunk vector."""
    title: str
    tags: tuple[str, ...]
    date: str | None
    instruction: bool
    idf_mass: float = 0.0
    """The most BM25 score a chunk could reach for the query (the sum of its term occurrences' IDF, a term
    in no chunk counting with the largest; LexicalIndex.idf_mass)."""
    matchable_mass: float = 0.0
    """The same sum over the term occurrences some chunk holds (LexicalIndex.matchable_mass; ranking.keyword_full)."""


def candidate(row: tuple[Any, ...], has_vector: bool) -> Candidate:
    """A Candidate from one row of SEARCH_SQL."""
    (
        ns,
        path,
        ord_,
        text,
        md5,
        kind,
        start,
        end,
        heads,
        cos,
        lex,
        prev,
        nxt,
        note_cos,
        title,
        tags,
        date,
        instr,
        mass,
        matchable,
    ) = row
    cosine = float(cos) if has_vector and cos is not None else 0.0
    around = [float(v) for v in (prev, nxt) if v is not None] if has_vector else []
    return Candidate(
        ns,
        path,
        int(ord_),
        text,
        md5,
        kind,
        int(start),
        int(end),
        tuple(heads or ()),
        cosine,
        float(lex or 0.0),
        sum(around) / len(around) if around else cosine,
        float(note_cos) if has_vector else 0.0,
        title,
        tuple(tags or ()),
        date,
        bool(instr),
        float(mass or 0.0),
        float(matchable or 0.0),
    )


def scores(
    cands: list[Candidate], alpha: float, note_weight: float, neighbour_weight: float, has_vector: bool
) -> tuple[npt.NDArray[np.float32], float]:
    """float32 (len(cands),) hybrid scores, as MemoryIndex.search makes them, and the raw lexical score of a full
    keyword match (ranking.keyword_full)."""
    cos = np.array([c.cosine for c in cands], dtype=np.float32)
    lex = np.array([c.lexical for c in cands], dtype=np.float32)
    full = keyword_full(float(lex.max()) if lex.size else 0.0, cands[0].matchable_mass if cands else 0.0)
    if not has_vector:
        alpha = 0.0
    out = add_bm25(cos * np.float32(alpha), lex, alpha, full)
    if has_vector and 0.0 < alpha < 1.0 and (note_weight > 0 or neighbour_weight > 0):
        note_cos = np.array([c.note_cosine for c in cands], dtype=np.float32)
        near_cos = np.array([c.neighbours for c in cands], dtype=np.float32)
        floor = keyword_floor(cands[0].idf_mass) if cands else float("inf")
        blend_context(out, note_cos, near_cos, note_weight, neighbour_weight, keeps=lex >= floor)
    return out, full


def pick(
    cands: list[Candidate], score: npt.NDArray[np.float32], k: int, cap: int, f: IndexQuery, exempt_daily: bool
) -> list[int]:
    """Positions of the ``k`` best candidates that pass ``f``, at most ``cap`` per note (0: no cap; daily notes
    are exempt when ``exempt_daily``: index/daily.py)."""
    taken: dict[tuple[str, str], int] = {}
    out: list[int] = []
    for i in sorted(range(len(cands)), key=lambda i: (-float(score[i]), cands[i].path, cands[i].ord)):
        c = cands[i]
        note = (c.namespace, c.path)
        capped = cap > 0 and not (exempt_daily and daily_date(c.path) is not None)
        if not f.admits(c.path, c.tags, c.date, c.kind) or (capped and taken.get(note, 0) >= cap):
            continue
        taken[note] = taken.get(note, 0) + 1
        out.append(i)
        if len(out) == k:
            break
    return out
