"""The memo sidecar store: one SQLite file (``memos.sqlite``, mode 0600) beside the AIF-BIN files.

Each memo is one chunk of a note that is not an instruction note, keyed by ``memo_id(path, text_md5)``. The
store holds what the notes must not: ``created``, ``last_retrieved``, ``tags``, ``reinforcement_count``,
``decay_score`` (as of the last lifecycle run; search computes it afresh) and, for archived memos, when they
were archived and their text. The user's markdown is never touched. SQLite (stdlib) gives atomic
transactions and safe sharing between an editor's server and a CLI run on the same workspace.

In an encrypted store, memo ids are HMAC-SHA256 of the key with a key derived from the passphrase, so they
do not reveal chunk MD5s; tags (sealed in the AIF-BIN files) are not kept and archived text is sealed
(memory/sealing.py: the sidecar follows the store when it is encrypted or decrypted; the archive note lists
places only). Paths and line numbers are kept: they are public in the AIF-BIN metadata too. Deleted content
is overwritten (``secure_delete``), so no earlier text lingers in the file's free pages.

Only a file SQLite finds corrupt is moved aside as damaged; a disk that is full, read-only or refuses
permission is a StorageError naming the file, and the store is left as it is (its history is kept).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from botbin.errors import storage_error
from botbin.memory.memo_rows import PLACE_OK, checked
from botbin.sync.atomic import FILE_MODE, make_private_dirs

log = logging.getLogger(__name__)

MEMO_FILE = "memos.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memos (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    created TEXT NOT NULL,
    last_retrieved TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    reinforcement_count INTEGER NOT NULL DEFAULT 0,
    decay_score REAL NOT NULL DEFAULT 1.0,
    archived_at TEXT,
    archived_text TEXT
);
CREATE INDEX IF NOT EXISTS memos_path ON memos(path);
CREATE TABLE IF NOT EXISTS sidecar (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
#: SQLite's word for a file that is not a sound database: only these make a store "damaged".
_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_COLUMNS = (
    "id, path, start_line, end_line, created, last_retrieved, tags, reinforcement_count, decay_score, "
    "archived_at, archived_text"
)


def memo_id(path: str, text_md5: str, key: bytes | None = None) -> str:
    """The memo key of a chunk: SHA-256 (HMAC-SHA256 with ``key`` in an encrypted store) of path and the
    chunk's text MD5, 32 hex digits."""
    data = f"{path}\0{text_md5}".encode()
    digest = hmac.new(key, data, hashlib.sha256) if key is not None else hashlib.sha256(data)
    return digest.hexdigest()[:32]


@dataclass(frozen=True)
class Memo:
    """One episodic memo (a chunk outside instruction notes) and its lifecycle state."""

    id: str
    path: str
    start_line: int
    """0-based first line (as of the last sync that saw the chunk)."""
    end_line: int
    """0-based line after the chunk (exclusive)."""
    created: datetime
    last_retrieved: datetime | None
    tags: tuple[str, ...]
    reinforcement_count: int
    """Times the memo was retrieved: returned by a search, shown in a hover, included in a context."""
    decay_score: float
    """In (0, 1], as of the last lifecycle run (memory/retention.py)."""
    archived_at: datetime | None = None
    archived_text: str | None = None
    """The chunk's text when it was archived (sealed in an encrypted store, memory/sealing.py)."""


@dataclass(frozen=True)
class MemoPlace:
    """Where a memo sits and whether it is archived: what reconciling memos with the index reads."""

    id: str
    path: str
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after the chunk (exclusive)."""
    archived: bool
    """True once archived (``Memo.archived_at`` set)."""


@dataclass(frozen=True)
class MemoSeed:
    """A chunk's place and note facts, to create its memo or move it (counts are left alone)."""

    id: str
    path: str
    start_line: int
    end_line: int
    created: datetime
    tags: tuple[str, ...]


def _row(r: tuple[object, ...]) -> Memo:
    """The memo of one row; raises ValueError for a value of the wrong type or range (memo_rows.checked)."""
    return Memo(*checked(r))


def damaged(exc: sqlite3.Error) -> bool:
    """True when ``exc`` says the file is corrupt or not a database; False for a full or read-only disk, a
    refused permission, a busy lock or an I/O error, which pass."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.DatabaseError) and code is not None and code & 0xFF in _DAMAGE_CODES


class MemoStore:
    """The sidecar store of one workspace; thread-safe (one connection behind a lock).

    Raises StorageError (naming the file) when it cannot be opened or written for a reason of the disk (full,
    read-only, permission): the file is left as it is. A damaged file is moved aside (``.damaged``) with a
    warning and a fresh store is started, since every memo can be rebuilt from the index but its counts.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warnings: list[str] = []
        self._lock = threading.Lock()
        self._set_links_aside()
        self._db = self._open()

    def _set_links_aside(self) -> None:
        """Rename aside (``.link``) a memo file that is a symbolic link, never open it: the output folder is
        shared, and SQLite would write through a link planted there, outside the folder. Its target is left
        as it is; a fresh store starts."""
        for name in (self.path.name, *(self.path.name + tail for tail in ("-wal", "-shm", "-journal"))):
            link = self.path.with_name(name)
            if link.is_symlink():
                try:
                    os.replace(link, link.with_name(name + ".link"))
                except OSError as exc:  # an unwritable folder: the store is left as it is
                    raise storage_error(exc, link, "set aside a memo file that is a symbolic link") from exc
                self.warnings.append(f"{link}: a symbolic link; renamed to {name}.link and not followed")
                log.warning("%s", self.warnings[-1])

    def _open(self) -> sqlite3.Connection:
        try:
            make_private_dirs(self.path.parent)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
            try:
                return self._connect()
            except sqlite3.DatabaseError as exc:
                if not damaged(exc):  # a full or read-only disk is no damage: the store is kept as it is
                    raise storage_error(exc, self.path, "open the memo store") from exc
                self._set_aside(exc)
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
                return self._connect()
        except (OSError, sqlite3.OperationalError) as exc:
            raise storage_error(exc, self.path, "open the memo store") from exc

    def _set_aside(self, exc: sqlite3.Error) -> None:
        """Move a corrupt store to ``.damaged`` (a warning says so): every memo but its counts is rebuilt."""
        aside = self.path.with_name(self.path.name + ".damaged")
        os.replace(self.path, aside)
        self.warnings.append(
            f"{self.path}: damaged memo store ({exc}); moved to {aside.name}, starting afresh "
            "(reinforcement counts are lost, notes and index are not)"
        )
        log.warning("%s", self.warnings[-1])

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA secure_delete=ON")  # a removed text leaves no copy in a free page
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            db.execute("SELECT count(*) FROM memos").fetchone()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a full or read-only disk rolls it back whole and raises StorageError."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                    self._db.execute("COMMIT")  # inside: a failed COMMIT (disk full) must not leave it open
                except BaseException:
                    if self._db.in_transaction:
                        with suppress(sqlite3.Error):
                            self._db.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                raise storage_error(exc, self.path) from exc

    # -- reads --------------------------------------------------------------------------------
    def get(self, ids: Iterable[str]) -> dict[str, Memo]:
        """The memos of ``ids`` that exist."""
        wanted = list(dict.fromkeys(ids))
        out: dict[str, Memo] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(f"SELECT {_COLUMNS} FROM memos WHERE id IN ({marks})", part)
                out.update((m.id, m) for m in self._memos(rows))
        return out

    def all(self) -> list[Memo]:
        """Every memo, archived ones included, by path then line."""
        with self._lock:
            return self._memos(self._db.execute(f"SELECT {_COLUMNS} FROM memos ORDER BY path, start_line"))

    def places(self, paths: Iterable[str] | None = None) -> list[MemoPlace]:
        """Where every memo (or those of notes ``paths``) sits, archived ones included, in no order: five columns,
        no parsing, so a full reconcile at start reads 27k memos in a fraction of ``all``'s time."""
        columns = f"SELECT id, path, start_line, end_line, archived_at IS NOT NULL FROM memos WHERE {PLACE_OK}"
        with self._lock:  # unordered (sorting 27k rows tripled the read): callers order what they need
            if paths is None:
                return [MemoPlace(i, p, s, e, bool(a)) for i, p, s, e, a in self._db.execute(columns)]
            wanted = sorted(set(paths))
            out: list[MemoPlace] = []
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(f"{columns} AND path IN ({marks})", part)
                out.extend(MemoPlace(i, p, s, e, bool(a)) for i, p, s, e, a in rows)
            return out

    def place_map(self) -> dict[str, tuple[str, int, int, bool]]:
        """Every memo's place, archived ones included: id -> (path, start_line, end_line, archived); plain
        tuples, what a whole-workspace check at start compares with the index (``places`` builds objects)."""
        columns = f"SELECT id, path, start_line, end_line, archived_at IS NOT NULL FROM memos WHERE {PLACE_OK}"
        with self._lock:
            return {i: (p, s, e, bool(a)) for i, p, s, e, a in self._db.execute(columns)}

    def of_paths(self, paths: Iterable[str]) -> list[Memo]:
        """The memos of notes ``paths``, archived ones included, by path then line (the path index: O(them))."""
        wanted = sorted(set(paths))
        out: list[Memo] = []
        with self._lock:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                query = f"SELECT {_COLUMNS} FROM memos WHERE path IN ({marks}) ORDER BY path, start_line"
                out.extend(self._memos(self._db.execute(query, part)))
        return out

    def _memos(self, rows: Iterable[tuple[object, ...]]) -> list[Memo]:
        """The memos of ``rows`` (the lock held); a row of the wrong types (the file is read back, so untrusted)
        is removed with a warning naming the file: the next reconcile makes its memo again from the index."""
        out: list[Memo] = []
        bad: list[object] = []
        for r in rows:
            try:
                out.append(_row(r))
            except (ValueError, TypeError, OverflowError):
                bad.append(r[0])
        if bad:
            self._db.executemany("DELETE FROM memos WHERE id IS ?", [(i,) for i in bad])
            log.warning(
                "%s: %d memo rows held values of the wrong type (the first: %r); removed, they are made again "
                "from the index (their reinforcement counts are lost)",
                self.path,
                len(bad),
                str(bad[0])[:80],
            )
        return out

    def archived_ids(self) -> set[str]:
        with self._lock:
            return {str(r[0]) for r in self._db.execute("SELECT id FROM memos WHERE archived_at IS NOT NULL")}

    # -- writes -------------------------------------------------------------------------------
    def seed(self, seeds: Iterable[MemoSeed]) -> int:
        """Create the memos of new chunks and move known ones to their current lines; returns how many
        were created."""
        before = self._count()
        with self._tx() as db:
            db.executemany(
                "INSERT INTO memos (id, path, start_line, end_line, created, tags) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET path=excluded.path, start_line=excluded.start_line, "
                "end_line=excluded.end_line, tags=excluded.tags",
                [
                    (s.id, s.path, s.start_line, s.end_line, s.created.isoformat(), json.dumps(list(s.tags)))
                    for s in seeds
                ],
            )
        return self._count() - before

    def _count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM memos").fetchone()[0])

    def inherit(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Carry count, creation and last retrieval from old to new memo id (an edited chunk)."""
        with self._tx() as db:
            for old, new in pairs:
                db.execute(
                    "UPDATE memos SET (created, last_retrieved, reinforcement_count) = (SELECT created, "
                    "last_retrieved, reinforcement_count FROM memos WHERE id = ?) WHERE id = ?",
                    (old, new),
                )

    def reinforce(self, ids: Iterable[str], now: datetime) -> None:
        """One retrieval of each memo: count + 1, last retrieval ``now``, decay score 1."""
        with self._tx() as db:
            db.executemany(
                "UPDATE memos SET reinforcement_count = reinforcement_count + 1, last_retrieved = ?, "
                "decay_score = 1.0 WHERE id = ?",
                [(now.isoformat(), i) for i in dict.fromkeys(ids)],
            )

    def set_decay(self, scores: dict[str, float]) -> None:
        with self._tx() as db:
            db.executemany("UPDATE memos SET decay_score = ? WHERE id = ?", [(v, k) for k, v in scores.items()])

    def archive(self, texts: dict[str, str | None], now: datetime) -> None:
        """Archive the memos of ``texts`` (id -> text to keep, None to keep none)."""
        with self._tx() as db:
            db.executemany(
                "UPDATE memos SET archived_at = ?, archived_text = ? WHERE id = ?",
                [(now.isoformat(), t, i) for i, t in texts.items()],
            )

    def restore(self, ids: Iterable[str], now: datetime) -> None:
        """Bring archived memos back; a restore counts as a retrieval, so they do not fade again at once."""
        with self._tx() as db:
            db.executemany(
                "UPDATE memos SET archived_at = NULL, archived_text = NULL, last_retrieved = ?, "
                "decay_score = 1.0 WHERE id = ?",
                [(now.isoformat(), i) for i in ids],
            )

    def keyed_for(self) -> str | None:
        """The tag of the keys the memo ids were made with (memory/sealing.py), None in a store from before tags."""
        with self._lock:
            row = self._db.execute("SELECT value FROM sidecar WHERE name = 'keys'").fetchone()
        return None if row is None else str(row[0])

    def rekey(self, changes: Iterable[tuple[str, str, str, str | None]], tag: str) -> None:
        """In one transaction: each (old id, new id, tags JSON, archived text) applied to its memo, and the
        store marked as keyed by ``tag``. A memo already under a new id (made meanwhile, without history)
        gives way to the one that carries the history."""
        with self._tx() as db:
            for old, new, tags, text in changes:
                if new != old:
                    db.execute("DELETE FROM memos WHERE id = ?", (new,))
                db.execute("UPDATE memos SET id = ?, tags = ?, archived_text = ? WHERE id = ?", (new, tags, text, old))
            db.execute(
                "INSERT INTO sidecar (name, value) VALUES ('keys', ?) ON CONFLICT(name) DO UPDATE SET value = ?",
                (tag, tag),
            )

    def compact(self) -> bool:
        """Rewrite the file whole and empty its write-ahead log, so no page keeps a text replaced or removed
        before ``secure_delete`` (or under other keys). False (logged) when another process's open read keeps
        it from finishing. Raises StorageError."""
        with self._lock:
            try:
                self._db.execute("VACUUM")
                busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    raise storage_error(exc, self.path) from exc
                busy = 1
        if busy:
            log.warning(
                "%s: another botbin process is reading it, so older pages may keep text until it is rewritten: "
                "run `botbin encrypt` again once no editor or server has this workspace open",
                self.path,
            )
        return not busy

    def remove(self, ids: Iterable[str]) -> None:
        with self._tx() as db:
            db.executemany("DELETE FROM memos WHERE id = ?", [(i,) for i in ids])
