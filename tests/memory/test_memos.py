"""The memo sidecar store (memory/memos.py): SQLite round trips, privacy, damage and two writers."""

from __future__ import annotations

import stat
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from botbin.errors import StorageError
from botbin.memory.memos import MemoSeed, MemoStore, damaged, memo_id

NOW = datetime(2026, 11, 29, 12, 0).astimezone()


def seed(i: str, path: str = "memory/a.md", start: int = 0) -> MemoSeed:
    return MemoSeed(i, path, start, start + 2, NOW, ("tag",))


def test_round_trip_and_reinforce(tmp_path: Path) -> None:
    store = MemoStore(tmp_path / "out" / "memos.sqlite")
    assert store.seed([seed("a"), seed("b", start=5)]) == 2
    assert store.seed([seed("a", start=1)]) == 0  # known: moved, not duplicated
    store.reinforce(["a", "a", "b"], NOW + timedelta(hours=1))  # one retrieval each, however often listed
    memos = store.get(["a", "b", "missing"])
    assert set(memos) == {"a", "b"}
    assert memos["a"].start_line == 1 and memos["a"].tags == ("tag",)
    assert memos["a"].reinforcement_count == 1 and memos["a"].last_retrieved == NOW + timedelta(hours=1)
    assert memos["a"].created == NOW
    assert stat.S_IMODE((tmp_path / "out" / "memos.sqlite").stat().st_mode) == 0o600


def test_archive_restore_inherit_remove(tmp_path: Path) -> None:
    store = MemoStore(tmp_path / "memos.sqlite")
    store.seed([seed("a"), seed("b")])
    store.reinforce(["a"], NOW)
    store.archive({"b": "old text"}, NOW)
    assert store.archived_ids() == {"b"}
    assert store.get(["b"])["b"].archived_text == "old text"
    store.restore(["b"], NOW + timedelta(days=1))
    restored = store.get(["b"])["b"]
    assert restored.archived_at is None and restored.last_retrieved == NOW + timedelta(days=1)
    store.seed([seed("c")])
    store.inherit([("a", "c")])
    assert store.get(["c"])["c"].reinforcement_count == 1
    store.remove(["a"])
    assert set(store.get(["a", "b", "c"])) == {"b", "c"}


def test_a_damaged_store_is_moved_aside_not_deleted(tmp_path: Path) -> None:
    path = tmp_path / "memos.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    store = MemoStore(path)
    assert store.seed([seed("a")]) == 1
    assert (tmp_path / "memos.sqlite.damaged").read_bytes().startswith(b"this is not a database")
    assert "damaged memo store" in store.warnings[0] and str(path) in store.warnings[0]


def test_two_writers_share_one_store(tmp_path: Path) -> None:
    first, second = MemoStore(tmp_path / "memos.sqlite"), MemoStore(tmp_path / "memos.sqlite")
    first.seed([seed("a")])
    for _ in range(5):
        first.reinforce(["a"], NOW)
        second.reinforce(["a"], NOW)
    assert first.get(["a"])["a"].reinforcement_count == 10


def test_memo_ids_are_keyed_in_an_encrypted_store() -> None:
    plain = memo_id("memory/a.md", "0" * 32)
    assert plain == memo_id("memory/a.md", "0" * 32) and len(plain) == 32
    keyed = memo_id("memory/a.md", "0" * 32, b"k" * 32)
    assert keyed != plain and keyed != memo_id("memory/a.md", "0" * 32, b"j" * 32)


def test_a_full_store_is_a_storage_error_that_rolls_back_and_leaves_it_usable(tmp_path: Path) -> None:
    # Issue 36: a full disk mid-write. SQLite's own limit stands in for the disk (SQLITE_FULL, "database or disk
    # is full", as a full disk gives); the transaction is rolled back whole and the store takes the next write.
    store = MemoStore(tmp_path / "memos.sqlite")
    store.seed([seed("a"), seed("b")])
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(StorageError, match=r"memos\.sqlite: cannot write \(database or disk is full"):
        store.archive({"a": "x" * 200_000, "b": "small"}, NOW)
    assert store.archived_ids() == set()  # neither archived: one transaction
    store.reinforce(["a"], NOW)  # no transaction was left open
    assert store.get(["a"])["a"].reinforcement_count == 1
    store.close()
    assert not (tmp_path / "memos.sqlite.damaged").exists()
    assert MemoStore(tmp_path / "memos.sqlite").get(["a"])["a"].reinforcement_count == 1


def test_only_a_corrupt_file_counts_as_damage(tmp_path: Path) -> None:
    import sqlite3

    (tmp_path / "not.sqlite").write_bytes(b"garbage" * 1000)
    with pytest.raises(sqlite3.DatabaseError) as corrupt:
        sqlite3.connect(tmp_path / "not.sqlite").execute("PRAGMA journal_mode=WAL")
    (tmp_path / "wal.sqlite-wal").mkdir()  # SQLite cannot make its log: SQLITE_CANTOPEN, as on a full disk
    with pytest.raises(sqlite3.OperationalError) as blocked:
        db = sqlite3.connect(tmp_path / "wal.sqlite")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x)")
    assert damaged(corrupt.value) and not damaged(blocked.value)
