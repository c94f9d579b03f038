"""Many writers, one database: per-note atomic replace seen by concurrent readers, and writer processes
killed with SIGKILL mid-publish leave a consistent database (the 5-minute version: bench/bench_postgres.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psycopg

from botbin.index.postgres.connect import ConnectOptions
from botbin.index.postgres.index import PostgresIndex
from botbin.service import MemoryService

from .consistency import problems
from .writer import synthetic_doc

HERE = Path(__file__).resolve().parent
SERVER = HERE.parents[1] / "server"


def _init(url: str, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    MemoryService(tmp_path / "ws", {"backend": "postgres", "postgres_url": url}, env={}).team.init()


def test_a_reader_never_sees_half_a_note(fresh_db: str, tmp_path: Path) -> None:
    _init(fresh_db, tmp_path)
    index = PostgresIndex(ConnectOptions(fresh_db), "team")
    rng = np.random.default_rng(0)
    stop, seen, bad = threading.Event(), [0], []

    def read() -> None:
        with psycopg.connect(fresh_db, autocommit=True) as conn:
            while not stop.is_set():
                found, _ = problems(conn)
                bad.extend(found)
                seen[0] += 1

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for version in range(60):  # 1 to 4 chunks per version: a torn read would show a mixed count
            index.publish(synthetic_doc("a.md", 0, version, rng), f"0:{version}")
            index.publish(synthetic_doc("b.md", 1, version, rng), f"1:{version}")
    finally:
        stop.set()
        reader.join()
        index.close()
    assert seen[0] > 5 and bad == []


def _writer(url: str, writer: int, rounds: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{SERVER}{os.pathsep}{HERE}"}
    return subprocess.Popen(
        [sys.executable, str(HERE / "writer.py"), url, "team", str(writer), str(rounds)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_writers_killed_mid_sync_leave_a_consistent_database(fresh_db: str, tmp_path: Path) -> None:
    _init(fresh_db, tmp_path)
    writers = [_writer(fresh_db, w, 0) for w in range(3)]  # rounds 0: until killed
    kills = 0
    try:
        deadline = time.monotonic() + 60
        for proc in writers:  # each writer has published some notes, then dies at a random point
            assert proc.stdout is not None
            for _ in range(4 + kills * 3):
                assert proc.stdout.readline(), "a writer died before publishing"
            assert time.monotonic() < deadline
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
    finally:
        for proc in writers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        found, notes = problems(conn)
    assert kills == 3 and found == [] and notes >= 3 + 3
    finish = _writer(fresh_db, 9, 1)  # the killed writers' note locks went with their sessions
    assert finish.wait(timeout=60) == 0
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        assert problems(conn)[0] == []
