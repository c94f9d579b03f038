"""One writer at a time per note (sync/note_lock.py): concurrent ``remember`` calls from threads and processes,
and soul-file appends, lose nothing (issue 36 failure 2: 30 concurrent remembers lost 13-20 entries)."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import datetime
from pathlib import Path

from botbin.agent.remember import remember
from botbin.memory.conversation.soul import append_blocks, parse_soul
from conftest import REPO

NOW = datetime(2026, 12, 1, 10, 5).astimezone()
NOTE = "memory/2026-12-01.md"
CHILD = """
import sys
from datetime import datetime
from pathlib import Path
from botbin.agent.remember import remember
now = datetime(2026, 12, 1, 10, 5).astimezone()
for n in range(int(sys.argv[3])):
    remember(Path(sys.argv[1]), f"process {sys.argv[2]} entry {n} about otters", [], now)
"""


def _entries(root: Path) -> list[str]:
    return [line for line in (root / NOTE).read_text(encoding="utf-8").splitlines() if line.startswith("- ")]


def test_concurrent_remembers_from_threads_and_processes_lose_nothing(tmp_path: Path) -> None:
    threads_n, procs_n, per_proc = 30, 8, 3
    start = threading.Barrier(threads_n)
    errors: list[BaseException] = []

    def call(n: int) -> None:
        start.wait()
        try:
            remember(tmp_path, f"thread entry {n} about herons", ["t"], NOW)
        except BaseException as exc:
            errors.append(exc)

    env = {"PYTHONPATH": str(REPO / "server")}
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), str(p), str(per_proc)], env=env)
        for p in range(procs_n)
    ]
    workers = [threading.Thread(target=call, args=(n,)) for n in range(threads_n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert [p.wait(timeout=120) for p in procs] == [0] * procs_n
    assert not errors
    entries = _entries(tmp_path)
    expected = {f"thread entry {n} about herons #t" for n in range(threads_n)} | {
        f"process {p} entry {n} about otters" for p in range(procs_n) for n in range(per_proc)
    }
    assert sorted(e[8:] for e in entries) == sorted(expected)  # each once, none lost


def test_concurrent_soul_file_appends_keep_every_block(tmp_path: Path) -> None:
    start = threading.Barrier(20)

    def call(n: int) -> None:
        start.wait()
        append_blocks(tmp_path, "memory/soul/ana.md", "Ana", f"## [Turns {n}-{n}]\n\n- Ana: fact number {n}\n")

    workers = [threading.Thread(target=call, args=(n,)) for n in range(1, 21)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    blocks = parse_soul((tmp_path / "memory/soul/ana.md").read_text(encoding="utf-8"))
    assert sorted(b.first_turn for b in blocks) == list(range(1, 21))
    assert (tmp_path / "memory/soul/ana.md").read_text(encoding="utf-8").count("# Soul file: Ana") == 1


def test_note_locks_are_private_under_any_umask(tmp_path: Path) -> None:
    import os
    import stat

    from botbin.sync.note_lock import LOCK_DIR, lock_path

    old = os.umask(0)
    try:
        remember(tmp_path, "a private fact", [], NOW)
    finally:
        os.umask(old)
    folder = tmp_path / "memory" / "aifbin" / LOCK_DIR
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(lock_path(folder, NOTE).stat().st_mode) == 0o600
    assert [p.name for p in folder.iterdir()] == [lock_path(folder, NOTE).name]
