"""Publishing notes into a namespace (each chunk with its embedding and its BM25 terms, tokenized as the
embedded index tokenizes them): one transaction per note, its chunks replaced atomically (a reader sees
the old note or the new one, never half of either; a writer killed mid-note leaves the old one)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from botbin.aifbin import AifBinDocument
from botbin.index.postgres.schema import DIM
from botbin.index.ranking import note_centroids
from botbin.index.tokenize import bm25_terms


@dataclass(frozen=True)
class NoteFacts:
    """What the notes table holds about one note besides its chunks."""

    title: str
    tags: tuple[str, ...]
    date: str | None
    """The note's date, ISO 8601."""
    created_at: str | None
    """When the note was first synced, ISO 8601."""
    instruction: bool
    source_md5: str | None
    """MD5 hex of the note bytes the chunks were built from."""


def note_facts(doc: AifBinDocument) -> NoteFacts:
    """The facts the embedded index reads from ``doc``'s metadata (index/store.py), the same way."""
    raw = doc.metadata.get("note")
    info: dict[str, Any] = raw if isinstance(raw, dict) else {}
    date, created, md5 = info.get("date"), doc.metadata.get("created_at"), doc.metadata.get("source_md5")
    return NoteFacts(
        str(info.get("title") or Path(doc.source).stem),
        tuple(str(t) for t in info.get("tags", []) if isinstance(t, str)),
        date if isinstance(date, str) else None,
        created if isinstance(created, str) else None,
        doc.metadata.get("instruction") is True,
        md5 if isinstance(md5, str) else None,
    )


def _lock(conn: psycopg.Connection[Any], namespace: str, path: str) -> None:
    """Serialize writers of one note (any machine) until the transaction ends."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (namespace, path))


def publish_note(
    conn: psycopg.Connection[Any], namespace: str, doc: AifBinDocument, fingerprint: str, publisher: str = ""
) -> None:
    """Replace note ``doc.source`` of ``namespace`` by ``doc`` in one transaction, as written by ``publisher``
    (the workspace's id; "" for none). Raises ValueError for an embedding size other than DIM, psycopg.Error
    when the database refuses (the note is then unchanged)."""
    if doc.chunks and doc.dim != DIM:
        raise ValueError(f"{doc.source}: embedding dim {doc.dim}, the team database holds {DIM}")
    facts = note_facts(doc)
    matrix = doc.embeddings()
    centroid = note_centroids(matrix, [len(doc.chunks)])[0] if doc.chunks else None
    rows = [
        (
            namespace,
            doc.source,
            i,
            c.text,
            c.text_md5,
            c.kind,
            c.start_line,
            c.end_line,
            list(c.heading_path),
            np.ascontiguousarray(matrix[i], dtype=np.float32),
            terms,
            len(terms),
        )
        for i, c in enumerate(doc.chunks)
        for terms in [bm25_terms(" ".join([facts.title, *c.heading_path, c.text]))]
    ]
    with conn.transaction():
        _lock(conn, namespace, doc.source)
        conn.execute("DELETE FROM botbin_notes WHERE namespace = %s AND path = %s", (namespace, doc.source))
        conn.execute(
            "INSERT INTO botbin_notes (namespace, path, title, tags, date, created_at, instruction, source_md5, "
            "fingerprint, centroid, chunk_count, term_total, publisher) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                namespace,
                doc.source,
                facts.title,
                list(facts.tags),
                facts.date,
                facts.created_at,
                facts.instruction,
                facts.source_md5,
                fingerprint,
                centroid,
                len(rows),
                sum(row[-1] for row in rows),
                publisher or None,
            ),
        )
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO botbin_chunks (namespace, path, ord, text, text_md5, kind, start_line, end_line, "
                "heading_path, embedding, terms, term_count) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )


def remove_notes(conn: psycopg.Connection[Any], namespace: str, paths: list[str]) -> None:
    """Drop ``paths`` (and their chunks) from ``namespace``, each note in its own transaction."""
    for path in paths:
        with conn.transaction():
            _lock(conn, namespace, path)
            conn.execute("DELETE FROM botbin_notes WHERE namespace = %s AND path = %s", (namespace, path))


def published(conn: psycopg.Connection[Any], namespace: str) -> dict[str, tuple[str, str | None]]:
    """{path: (fingerprint, publisher)} of every note of ``namespace`` the connection's role can read (publisher
    None: published by a botbin older than schema version 2)."""
    cur = conn.execute("SELECT path, fingerprint, publisher FROM botbin_notes WHERE namespace = %s", (namespace,))
    return {str(path): (str(fp), None if who is None else str(who)) for path, fp, who in cur.fetchall()}


def claim(conn: psycopg.Connection[Any], namespace: str, publisher: str, stamps: dict[str, str]) -> set[str]:
    """Make ``publisher`` the publisher of the notes of ``namespace`` whose fingerprint is the one in ``stamps``
    ({path: fingerprint}: exactly that workspace's output); returns the paths it took."""
    if not stamps:
        return set()
    cur = conn.execute(
        "UPDATE botbin_notes n SET publisher = %s FROM unnest(%s::text[], %s::text[]) AS u(path, fingerprint) "
        "WHERE n.namespace = %s AND n.path = u.path AND n.fingerprint = u.fingerprint "
        "AND n.publisher IS DISTINCT FROM %s RETURNING n.path",
        (publisher, list(stamps), list(stamps.values()), namespace, publisher),
    )
    return {str(path) for (path,) in cur.fetchall()}
