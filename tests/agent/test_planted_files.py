"""What someone can put where botbin writes its own notes and locks (issue 36, "0 files touched outside the
workspace"): a symbolic link as the lock folder ``.locks``, as a note's lock file or as the workspace lock
``.botbin.lock`` is removed, never locked through (before, the locks were files outside the workspace, or every
remember failed with ELOOP); a FIFO as today's daily note or a soul file is refused at once with a message naming
it (before, remember and capture waited forever, holding the note's lock), and so is a note swapped for a FIFO
after a scan."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import datetime
from pathlib import Path

import pytest

from botbin.agent.remember import remember
from botbin.errors import BotbinError
from botbin.memory.conversation.soul import append_blocks
from botbin.service import MemoryService
from botbin.sync.lock import LOCK_FILE
from botbin.sync.note_lock import LOCK_DIR, lock_path
from conftest import FakeEmbedder, write_notes

NOW = datetime(2026, 12, 1, 10, 5).astimezone()
NOTE = "memory/2026-12-01.md"


def in_time(call: object, timeout_s: float = 30.0) -> list[BaseException]:
    """Run ``call`` on a thread; the exceptions it raised. Fails the test when it hangs."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()  # type: ignore[operator]
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout_s)
    assert not worker.is_alive(), "the call hangs"
    return raised


def test_a_link_as_the_lock_folder_is_removed_and_no_lock_is_made_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    (root / "memory" / "aifbin").mkdir(parents=True)
    (root / "memory" / "aifbin" / LOCK_DIR).symlink_to(outside)
    remember(root, "The walrus sleeps at noon.", [], NOW)
    assert list(outside.iterdir()) == []
    locks = root / "memory" / "aifbin" / LOCK_DIR
    assert locks.is_dir() and not locks.is_symlink() and lock_path(locks, NOTE).is_file()


def test_a_link_as_a_lock_file_is_removed_and_its_target_left_alone(tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("botbin must never touch this\n")
    locks = tmp_path / "ws" / "memory" / "aifbin" / LOCK_DIR
    locks.mkdir(parents=True)
    lock_path(locks, NOTE).symlink_to(canary)
    remember(tmp_path / "ws", "The walrus sleeps at noon.", [], NOW)  # failed: "Too many levels of symbolic links"
    assert canary.read_text() == "botbin must never touch this\n" and not lock_path(locks, NOTE).is_symlink()


def test_a_link_as_the_workspace_lock_is_removed_and_the_sync_goes_on(tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("botbin must never touch this\n")
    root = write_notes(tmp_path / "ws", {"MEMORY.md": "# Memory\n\nThe walrus sleeps at noon.\n"})
    (root / "memory" / "aifbin").mkdir(parents=True)
    (root / "memory" / "aifbin" / LOCK_FILE).symlink_to(canary)
    assert MemoryService(root, {}, embedder=FakeEmbedder(), env={}).sync().added == ("MEMORY.md",)
    assert canary.read_text() == "botbin must never touch this\n"


def test_a_fifo_as_todays_note_is_refused_at_once_by_the_cli(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    today = datetime.now().astimezone().strftime("%Y-%m-%d")
    os.mkfifo(root / "memory" / f"{today}.md")
    done = subprocess.run(
        [sys.executable, "-m", "botbin", "remember", "-w", str(root), "The heron fishes at dawn."],
        capture_output=True, text=True, timeout=60, env={**os.environ, "BOTBIN_NO_SERVER": "1"},
    )  # fmt: skip
    assert done.returncode != 0 and f"memory/{today}.md: cannot read (not a regular file" in done.stderr
    assert "nothing was written" in done.stderr


def test_a_fifo_as_a_soul_file_is_refused_at_once(tmp_path: Path) -> None:
    (tmp_path / "memory" / "soul").mkdir(parents=True)
    os.mkfifo(tmp_path / "memory" / "soul" / "ana.md")
    (raised,) = in_time(lambda: append_blocks(tmp_path, "memory/soul/ana.md", "Ana", "## [Turns 1-1]\n\n- Ana: hi\n"))
    assert isinstance(raised, BotbinError) and "not a regular file" in str(raised)


@pytest.mark.parametrize("follow_symlinks", [False, True])
def test_a_note_swapped_for_a_fifo_after_the_scan_is_not_read(tmp_path: Path, follow_symlinks: bool) -> None:
    from botbin.sync.scan import read_note

    os.mkfifo(tmp_path / "note.md")
    (raised,) = in_time(lambda: read_note(tmp_path, "note.md", follow_symlinks))
    assert isinstance(raised, OSError) and "not a regular file" in str(raised)
