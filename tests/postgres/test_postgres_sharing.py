"""Sharing one team database the way teams do: two workspaces publishing into one namespace, grants that
outlive their role, ``public``, ``db revoke``, a reader that does not publish, an encrypted store, and the
migration of a version-1 database."""

from __future__ import annotations

import itertools
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import psycopg
import pytest

from botbin.errors import RemoteIndexError
from botbin.index.postgres import schema
from botbin.index.postgres.connect import ConnectOptions
from botbin.index.postgres.index import PostgresIndex
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

from .conftest import with_user

_ROLES = itertools.count()


def _service(root: Path, url: str, embedder: Any, notes: dict[str, str] | None = None, **settings: object) -> Any:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in (notes or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return MemoryService(root, {"backend": "postgres", "postgres_url": url, **settings}, embedder=embedder, env={})


def _role(url: str, base: str) -> str:
    """A new login role (password ``pw``) named after ``base``, unique on the server (roles outlive databases)."""
    name = f"{base}_{os.getpid()}_{next(_ROLES)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD 'pw'")
    return name


def _handbook(tmp_path: Path, url: str, embedder: Any) -> Any:
    """The database's owner, with the schema made and namespace ``handbook`` (one note) published."""
    admin = _service(tmp_path / "handbook", url, embedder, {"MEMORY.md": "# Home\n\nThe handbook.\n"})
    admin.team.init()
    admin.sync()
    return admin


def _paths(url: str, namespace: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT path FROM botbin_notes WHERE namespace = %s", (namespace,)).fetchall()
    return {str(p) for (p,) in rows}


def test_two_workspaces_in_one_namespace_keep_each_others_notes(
    fresh_db: str, tmp_path: Path, fake_embedder: Any
) -> None:
    alice_notes = {f"memory/a{i}.md": f"# A{i}\n\nAlice's note {i} about the deploy freeze.\n" for i in range(3)}
    alice = _service(tmp_path / "notes", fresh_db, fake_embedder, alice_notes, namespace="platform-team")
    alice.team.init()
    alice_synced = alice.sync()
    assert alice_synced.publish_error is None and len(alice_synced.published.published) == 3
    bob_notes = {"memory/oncall.md": "# On call\n\nBob is on call.\n"}
    bob = _service(tmp_path / "bob" / "notes", fresh_db, fake_embedder, bob_notes, namespace="platform-team")
    bob_synced = bob.sync()
    assert bob_synced.publish_error is None
    assert (
        bob_synced.published.removed == () and bob_synced.published.others == 3
    )  # alice's notes are not bob's to drop
    assert _paths(fresh_db, "platform-team") == {*alice_notes, "memory/oncall.md"}
    alice_synced = alice.sync()
    assert alice_synced.published.removed == () and alice_synced.published.others == 1
    team = alice.status().team
    assert team is not None and (team.namespace, team.unpublished, team.error) == ("platform-team", 0, None)
    spanning = PostgresIndex(ConnectOptions(fresh_db), "platform-team", ("platform-team", "platfrom-team"))
    assert spanning.unreadable() == ["platfrom-team"]  # a typo in --namespace is named (cli/answers.py)
    spanning.close()
    (tmp_path / "notes" / "memory" / "a0.md").unlink()  # alice deletes one of hers: only that one goes
    alice_synced = alice.sync()
    assert alice_synced.published.removed == ("memory/a0.md",)
    assert _paths(fresh_db, "platform-team") == {"memory/a1.md", "memory/a2.md", "memory/oncall.md"}
    ids = {(tmp_path / p / "memory" / "aifbin" / "publisher-id").read_text() for p in ("notes", "bob/notes")}
    assert len(ids) == 2


def test_a_dropped_role_or_public_grant_does_not_break_reads_and_revoke_takes_access_back(
    fresh_db: str, tmp_path: Path, fake_embedder: Any
) -> None:
    admin = _handbook(tmp_path, fresh_db, fake_embedder)
    temp, carol_role = _role(fresh_db, "temp"), _role(fresh_db, "carol")
    admin.team.grant(temp, "handbook", write=False)
    admin.team.grant(carol_role, "team-c", write=True)
    with psycopg.connect(fresh_db, autocommit=True) as conn:  # off-boarding: the grant row stays behind
        conn.execute(f"DROP OWNED BY {temp}")
        conn.execute(f"DROP ROLE {temp}")
    carol = with_user(fresh_db, carol_role, "pw")
    with psycopg.connect(carol, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM botbin_notes").fetchone() == (0,)  # no error, nothing of others'
    admin.team.grant("PUBLIC", "handbook", write=False)  # every role may read the handbook
    with psycopg.connect(carol, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM botbin_notes WHERE namespace = 'handbook'").fetchone() == (1,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM botbin_grants")
    assert admin.team.revoke("public", "handbook") is True
    assert admin.team.revoke(temp, "handbook") is True  # the stale row can be cleaned up
    assert admin.team.revoke(carol_role, "handbook") is False
    with psycopg.connect(carol, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM botbin_notes WHERE namespace = 'handbook'").fetchone() == (0,)


def test_a_reader_does_not_publish_and_a_writer_without_a_grant_is_told_why(
    fresh_db: str, tmp_path: Path, fake_embedder: Any
) -> None:
    admin = _handbook(tmp_path, fresh_db, fake_embedder)
    role = _role(fresh_db, "reader")
    admin.team.grant(role, "handbook", write=False)
    reader_url = with_user(fresh_db, role, "pw")
    notes = {"memory/mine.md": "# Mine\n\nA reader's own note.\n"}
    writer = _service(tmp_path / "r1", reader_url, fake_embedder, notes, namespace="handbook")
    writer_synced = writer.sync()
    assert writer_synced.publish_error is not None and "postgres_publish = false" in writer_synced.publish_error
    reader = _service(tmp_path / "r2", reader_url, fake_embedder, notes, namespace="handbook", postgres_publish=False)
    reader_synced = reader.sync()
    assert reader_synced.publish_error is None and reader_synced.published is None
    assert [h.path for h in reader.search(SearchRequest(query="handbook", k=3, show_all=True)).hits] == ["MEMORY.md"]


def test_an_encrypted_store_is_not_published_in_the_clear(fresh_db: str, tmp_path: Path, fake_embedder: Any) -> None:
    root = tmp_path / "secret"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n\nThe launch code is heron-9931.\n")
    (root / "botbin.toml").write_text(
        'encryption = true\nbackend = "postgres"\nkdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n'
        f'postgres_url = "{fresh_db}"\n'
    )
    svc = MemoryService(root, {}, embedder=fake_embedder, env={}, passphrase=lambda: "hunter2 horse")
    svc.team.init()
    report = svc.sync()
    assert not report.failed and report.publish_error is not None and "encrypted" in report.publish_error
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM botbin_chunks").fetchone() == (0,)


def test_a_version_1_database_is_migrated_and_each_workspace_claims_its_own_notes(
    fresh_db: str, tmp_path: Path, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 1)
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        schema.migrate(conn, "db")
    monkeypatch.undo()
    with pytest.raises(RemoteIndexError, match="version 1: run `botbin db init` to migrate"):
        PostgresIndex(ConnectOptions(fresh_db), "team")
    alice_notes = {"memory/a1.md": "# A1\n\nOne.\n", "memory/a2.md": "# A2\n\nTwo.\n"}
    alice = _service(tmp_path / "alice", fresh_db, fake_embedder, alice_notes, namespace="team")
    assert alice.team.init()[1] == [2]
    alice.sync()
    bob = _service(tmp_path / "bob", fresh_db, fake_embedder, {"memory/b1.md": "# B1\n\nBob.\n"}, namespace="team")
    with psycopg.connect(fresh_db, autocommit=True) as conn:  # as a version-1 botbin published them: no publisher
        conn.execute("UPDATE botbin_notes SET publisher = NULL")
    bob_synced = bob.sync()  # another workspace never takes them for its own deleted notes
    assert bob_synced.published.removed == () and _paths(fresh_db, "team") == {*alice_notes, "memory/b1.md"}
    alice_synced = alice.sync()  # alice's notes hold exactly her output: hers again
    assert alice_synced.published.published == () and alice_synced.published.unchanged == 2
    (tmp_path / "alice" / "memory" / "a2.md").unlink()
    alice_synced = alice.sync()  # so the one she deletes goes
    assert alice_synced.published.removed == ("memory/a2.md",)
    assert _paths(fresh_db, "team") == {"memory/a1.md", "memory/b1.md"}


def test_a_copied_folder_or_a_lost_publisher_id_deletes_nothing_it_should_not(
    fresh_db: str, tmp_path: Path, fake_embedder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    notes = {"memory/a1.md": "# A1\n\nOne.\n", "memory/a2.md": "# A2\n\nTwo.\n"}
    alice = _service(tmp_path / "alice", fresh_db, fake_embedder, notes, namespace="team")
    alice.team.init()
    alice.sync()
    shutil.copytree(tmp_path / "alice", tmp_path / "alice2")  # a template handed on, memory/aifbin included
    (tmp_path / "alice2" / "memory" / "laptop.md").write_text("# Laptop\n\nOnly on the copy.\n")
    copy = _service(tmp_path / "alice2", fresh_db, fake_embedder, namespace="team")
    copy_synced = copy.sync()
    assert copy_synced.published.published == ("memory/laptop.md",)
    alice_synced = alice.sync()  # the copy has an id of its own: its note is not alice's to remove
    assert alice_synced.published.removed == () and "memory/laptop.md" in _paths(fresh_db, "team")
    (tmp_path / "alice" / "memory" / "aifbin" / "publisher-id").unlink()
    alice_synced = alice.sync()  # a new id claims the notes holding exactly alice's output
    assert alice_synced.published.published == () and alice_synced.published.others == 1  # the copy's laptop.md
    (tmp_path / "alice" / "memory" / "a1.md").unlink()
    alice_synced = alice.sync()
    assert alice_synced.published.removed == ("memory/a1.md",)
    with caplog.at_level(logging.WARNING):  # the same path from another workspace replaces it, and says so
        (tmp_path / "alice2" / "memory" / "a2.md").write_text("# A2\n\nThe copy's version.\n")
        copy_synced = copy.sync()
    assert (
        copy_synced.published.replaced == ("memory/a2.md",) and "replaced the version another workspace" in caplog.text
    )
