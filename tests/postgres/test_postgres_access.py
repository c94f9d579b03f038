"""Access control by the database: row-level security per namespace, checked with raw SQL and through botbin
as non-superuser roles; schema-version refusal; an unreachable database named without its password."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from botbin.errors import BotbinError
from botbin.index.postgres.connect import ConnectOptions, RemoteIndexError, clean_reason, redact
from botbin.index.postgres.index import PostgresIndex
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

from .conftest import with_user
from .writer import synthetic_doc

REPO = Path(__file__).resolve().parents[2]


def _service(root: Path, url: str, embedder: Any, **settings: object) -> MemoryService:
    root.mkdir(parents=True, exist_ok=True)
    return MemoryService(root, {"backend": "postgres", "postgres_url": url, **settings}, embedder=embedder, env={})


def _roles(admin_url: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for role in ("alice", "bob"):
            conn.execute(f"DROP ROLE IF EXISTS {role}_t")  # roles are per server: one per test session run
            conn.execute(f"CREATE ROLE {role}_t LOGIN PASSWORD 'pw-{role}'")


def test_a_role_without_a_grant_reads_nothing_of_another_namespace(
    fresh_db: str, tmp_path: Path, fake_embedder: Any
) -> None:
    admin = _service(tmp_path / "admin", fresh_db, fake_embedder)
    admin.team.init()
    _roles(fresh_db)
    admin.team.grant("alice_t", "team-a", write=True)
    admin.team.grant("bob_t", "team-b", write=True)
    alice_url, bob_url = with_user(fresh_db, "alice_t", "pw-alice"), with_user(fresh_db, "bob_t", "pw-bob")
    root_a = tmp_path / "team-a"
    shutil.copytree(REPO / "examples" / "workspace", root_a)
    alice = _service(root_a, alice_url, fake_embedder)
    alice_synced = alice.sync()
    assert alice_synced.publish_error is None and alice_synced.published and len(alice_synced.published.published) == 16
    (tmp_path / "team-b").mkdir()
    (tmp_path / "team-b" / "MEMORY.md").write_text("# Pool\n\nThe connection pool of team b holds 8 sessions.\n")
    bob = _service(tmp_path / "team-b", bob_url, fake_embedder)
    bob_synced = bob.sync()
    assert bob_synced.publish_error is None

    with psycopg.connect(bob_url, autocommit=True) as conn:  # hand-written SQL, as bob
        assert conn.execute("SELECT count(*) FROM botbin_chunks WHERE namespace = 'team-a'").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM botbin_notes WHERE namespace = 'team-a'").fetchone() == (0,)
        assert conn.execute("SELECT count(DISTINCT namespace) FROM botbin_chunks").fetchone() == (1,)
        gone = conn.execute("DELETE FROM botbin_notes WHERE namespace = 'team-a'")
        assert gone.rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO botbin_notes (namespace, path, title, fingerprint, chunk_count, term_total) "
                "VALUES ('team-a', 'x.md', 'x', '0:0', 0, 0)"
            )
    with psycopg.connect(alice_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM botbin_notes WHERE namespace = 'team-a'").fetchone() == (16,)
        assert conn.execute("SELECT count(*) FROM botbin_chunks WHERE namespace = 'team-b'").fetchone() == (0,)

    spanning = _service(tmp_path / "team-b", bob_url, fake_embedder, search_namespaces="team-a,team-b")
    hits = spanning.search(SearchRequest(query="connection pool sessions", k=10, show_all=True)).hits
    assert hits and {h.namespace for h in hits} == {"team-b"}  # asking for team-a does not open it
    admin.team.grant("bob_t", "team-a", write=False)  # now bob may read team-a too
    hits = spanning.search(SearchRequest(query="database connection pool", k=10, show_all=True)).hits
    assert "team-a" in {h.namespace for h in hits}
    intruder = _service(tmp_path / "team-a2", bob_url, fake_embedder, namespace="team-a").ws.remote
    assert intruder is not None
    intruder.remove(["MEMORY.md"])  # but not write it: the policy hides the row from a delete...
    doc = synthetic_doc("MEMORY.md", 0, 0, np.random.default_rng(0))
    with pytest.raises(RemoteIndexError, match="row-level security"):  # ...and refuses an insert
        intruder.publish(doc, "0:0")
    with psycopg.connect(alice_url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM botbin_chunks WHERE path = 'MEMORY.md'").fetchone()
        assert row is not None and row[0] > 1


def test_a_newer_schema_is_refused(fresh_db: str, tmp_path: Path, fake_embedder: Any) -> None:
    svc = _service(tmp_path / "ws", fresh_db, fake_embedder)
    assert svc.team.init()[1] == [1, 2]
    assert svc.team.init()[1] == []  # up to date: nothing applied
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        conn.execute("INSERT INTO botbin_migrations (version) VALUES (3)")
    with pytest.raises(RemoteIndexError, match="schema version 3, newer than this botbin understands"):
        PostgresIndex(ConnectOptions(fresh_db), "ws")
    with pytest.raises(RemoteIndexError, match="newer"):
        svc.team.init()
    with pytest.raises(RemoteIndexError, match="newer"):  # nor does a grant write into it
        svc.team.grant("postgres", "ws", write=False)


def test_no_schema_says_run_db_init(fresh_db: str, tmp_path: Path, fake_embedder: Any) -> None:
    with pytest.raises(RemoteIndexError, match="botbin db init"):
        PostgresIndex(ConnectOptions(fresh_db), "ws")


def test_an_unreachable_database_is_named_without_its_password(tmp_path: Path, fake_embedder: Any) -> None:
    url = "postgresql://carol:s3cr3t-pw@127.0.0.1:9/team?connect_timeout=2"
    assert redact(url) == "postgresql://carol:***@127.0.0.1:9/team?connect_timeout=2"
    assert "s3cr3t" not in redact("host=127.0.0.1 port=9 password=s3cr3t-pw user=carol")
    assert redact("postgresql://carol:s3cr3t@[::1/team") == "postgresql://carol:***@[::1/team"  # unparseable
    at_sign = "postgresql://carol:s3c@r3t@127.0.0.1:9/team"  # an unencoded '@': libpq shows 'r3t@127.0.0.1'
    assert redact(at_sign) == "postgresql://carol:***@127.0.0.1:9/team"
    assert clean_reason(Exception("failed to resolve host 'r3t@127.0.0.1'"), at_sign) == (
        "failed to resolve host '***@127.0.0.1'"
    )
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Memory\n\nWe deploy on Fridays only after the freeze.\n")
    svc = _service(tmp_path / "ws", url, fake_embedder, postgres_timeout_s=2)
    report = svc.sync()  # the local sync stands; the publish fails with a clear message
    assert not report.failed and (tmp_path / "ws" / "memory" / "aifbin").is_dir()
    assert report.publish_error is not None
    assert "127.0.0.1" in report.publish_error and "carol:***@" in report.publish_error
    assert "s3cr3t" not in report.publish_error
    team = svc.status().team  # status reports the unreachable database instead of failing
    assert team is not None and team.error is not None and "s3cr3t" not in team.error
    with pytest.raises(BotbinError) as caught:
        svc.search(SearchRequest(query="deploy", k=3, show_all=True))
    assert "127.0.0.1" in str(caught.value) and "s3cr3t" not in str(caught.value)
    local = MemoryService(tmp_path / "ws", {}, embedder=fake_embedder, env={})  # the embedded index is intact
    assert local.search(SearchRequest(query="deploy Fridays", k=3, show_all=True)).hits[0].path == "MEMORY.md"
