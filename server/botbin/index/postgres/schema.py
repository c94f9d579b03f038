"""The team database's schema: tables, indexes, row-level security per namespace, and the migrations table
that lets an older botbin refuse a newer schema."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from botbin.index.postgres.connect import RemoteIndexError

SCHEMA_VERSION = 2
"""The schema this botbin reads and writes."""
DIM = 384
"""Embedding size of the ``vector`` columns (all-MiniLM-L6-v2)."""
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 400
"""HNSW graph degree and build-time candidate list: pgvector's defaults (16, 64) gave recall@10 0.80 at
ef_search 100 on 20,000 clustered synthetic chunks, (32, 200) 1.00; at 100,000 chunks (32, 200) reached 0.9895 at
pgvector's largest ef_search (1000), (32, 400) 0.991 at ef_search 800 (bench/bench_postgres.py). A database made
by an older botbin keeps the graph it was built with."""

_V1 = f"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE botbin_notes (
    namespace text NOT NULL,
    path text NOT NULL,
    title text NOT NULL,
    tags text[] NOT NULL DEFAULT '{{}}',
    date text,
    created_at text,
    instruction boolean NOT NULL DEFAULT false,
    source_md5 text,
    fingerprint text NOT NULL,
    centroid vector({DIM}),
    chunk_count integer NOT NULL,
    term_total bigint NOT NULL,
    published_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, path)
);
CREATE TABLE botbin_chunks (
    namespace text NOT NULL,
    path text NOT NULL,
    ord integer NOT NULL,
    text text NOT NULL,
    text_md5 text NOT NULL,
    kind text NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    heading_path text[] NOT NULL,
    embedding vector({DIM}) NOT NULL,
    terms text[] NOT NULL,
    term_count integer NOT NULL,
    PRIMARY KEY (namespace, path, ord),
    FOREIGN KEY (namespace, path) REFERENCES botbin_notes ON DELETE CASCADE
);
CREATE INDEX botbin_chunks_embedding ON botbin_chunks USING hnsw (embedding vector_cosine_ops)
    WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION});
CREATE INDEX botbin_chunks_terms ON botbin_chunks USING gin (terms);
CREATE TABLE botbin_grants (
    namespace text NOT NULL,
    role name NOT NULL,
    can_write boolean NOT NULL DEFAULT false,
    PRIMARY KEY (namespace, role)
);
REVOKE ALL ON botbin_grants FROM PUBLIC;
GRANT SELECT ON botbin_grants TO PUBLIC;
CREATE FUNCTION botbin_allowed(ns text, write boolean) RETURNS boolean
    LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM public.botbin_grants g
        WHERE g.namespace = ns AND (g.can_write OR NOT write)
          AND pg_has_role(current_user, g.role, 'MEMBER'))
$$;
ALTER TABLE botbin_notes ENABLE ROW LEVEL SECURITY;
ALTER TABLE botbin_chunks ENABLE ROW LEVEL SECURITY;
CREATE POLICY botbin_notes_read ON botbin_notes FOR SELECT USING (botbin_allowed(namespace, false));
CREATE POLICY botbin_notes_write ON botbin_notes FOR ALL
    USING (botbin_allowed(namespace, true)) WITH CHECK (botbin_allowed(namespace, true));
CREATE POLICY botbin_chunks_read ON botbin_chunks FOR SELECT USING (botbin_allowed(namespace, false));
CREATE POLICY botbin_chunks_write ON botbin_chunks FOR ALL
    USING (botbin_allowed(namespace, true)) WITH CHECK (botbin_allowed(namespace, true));
"""
_V2 = """
ALTER TABLE botbin_notes ADD COLUMN publisher text;
CREATE OR REPLACE FUNCTION botbin_allowed(ns text, write boolean) RETURNS boolean
    LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM public.botbin_grants g
        WHERE g.namespace = ns AND (g.can_write OR NOT write)
          AND (g.role = 'public' OR EXISTS (
              SELECT 1 FROM pg_catalog.pg_roles r
              WHERE r.rolname = g.role AND pg_has_role(current_user, r.oid, 'MEMBER'))))
$$;
"""
"""Version 2: each note names the workspace that published it (``publisher``: a sync drops only its own
notes gone from its workspace, never another workspace's notes in a shared namespace); a grant to a role
that no longer exists is skipped instead of failing every other role's reads, and ``public`` means every role."""
MIGRATIONS: tuple[tuple[int, str], ...] = ((1, _V1), (2, _V2))
"""(version, SQL) in order; ``botbin db init`` applies those above the database's version."""
_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS botbin_migrations (
    version integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""


def database_version(conn: psycopg.Connection[Any]) -> int | None:
    """The highest applied migration, None when the database has no botbin schema."""
    if conn.execute("SELECT to_regclass('botbin_migrations')").fetchone() in (None, (None,)):
        return None
    row = conn.execute("SELECT max(version) FROM botbin_migrations").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def check_version(conn: psycopg.Connection[Any], shown_url: str) -> None:
    """Raise RemoteIndexError unless the database holds exactly the schema this botbin knows."""
    version = database_version(conn)
    if version is None or version == 0:
        raise RemoteIndexError(f"the team database {shown_url} has no botbin schema: run `botbin db init`")
    if version > SCHEMA_VERSION:
        raise RemoteIndexError(
            f"the team database {shown_url} has botbin schema version {version}, newer than this botbin "
            f"understands ({SCHEMA_VERSION}): upgrade botbin; nothing was written"
        )
    if version < SCHEMA_VERSION:
        raise RemoteIndexError(
            f"the team database {shown_url} has botbin schema version {version}: run `botbin db init` to migrate"
        )


def migrate(conn: psycopg.Connection[Any], shown_url: str) -> list[int]:
    """Create or upgrade the schema in one transaction (a lock keeps two ``db init`` apart). Returns the
    versions applied. Raises RemoteIndexError for a newer schema."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('botbin_migrations'))")
        conn.execute(_MIGRATIONS_TABLE)
        current = database_version(conn) or 0
        if current > SCHEMA_VERSION:
            raise RemoteIndexError(
                f"the team database {shown_url} has botbin schema version {current}, newer than this botbin "
                f"understands ({SCHEMA_VERSION}): upgrade botbin"
            )
        applied = []
        for version, script in MIGRATIONS:
            if version > current:
                conn.execute(script.encode())
                conn.execute("INSERT INTO botbin_migrations (version) VALUES (%s)", (version,))
                applied.append(version)
        return applied


def grant_role_name(role: str) -> str:
    """``role`` as botbin_grants holds it: PostgreSQL's PUBLIC (``public`` / ``PUBLIC``: every role) as
    ``public``; any other name as given (a role really named "Public" is that role)."""
    return "public" if role in ("public", "PUBLIC") else role


def grant(conn: psycopg.Connection[Any], role: str, namespace: str, write: bool) -> None:
    """Let ``role`` (and its members; ``public``: every role) read ``namespace``, and write it when ``write``;
    the table privileges it needs are granted too. Row-level security keeps every other namespace out of its
    reach."""
    role = grant_role_name(role)
    grantee = sql.SQL("PUBLIC") if role == "public" else sql.Identifier(role)
    with conn.transaction():
        conn.execute(
            "INSERT INTO botbin_grants (namespace, role, can_write) VALUES (%s, %s, %s) "
            "ON CONFLICT (namespace, role) DO UPDATE SET can_write = EXCLUDED.can_write",
            (namespace, role, write),
        )
        privileges = "SELECT, INSERT, UPDATE, DELETE" if write else "SELECT"
        for table in ("botbin_notes", "botbin_chunks"):
            conn.execute(sql.SQL("GRANT {} ON {} TO {}").format(sql.SQL(privileges), sql.Identifier(table), grantee))
        conn.execute(sql.SQL("GRANT SELECT ON botbin_migrations TO {}").format(grantee))


def revoke(conn: psycopg.Connection[Any], role: str, namespace: str) -> bool:
    """Take ``namespace`` away from ``role`` (its grant row; its table privileges stay for its other
    namespaces, and row-level security hides this one). True when it had a grant."""
    role = grant_role_name(role)
    row = conn.execute(
        "DELETE FROM botbin_grants WHERE namespace = %s AND role = %s RETURNING 1", (namespace, role)
    ).fetchone()
    return row is not None
