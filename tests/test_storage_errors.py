"""A disk that is full, read-only or refuses permission (issue 36): sync, remember and the memo sidecar report the
file and the reason (StorageError, exit code 3, kind ``storage``), never a traceback, and lose nothing: no state
file or output half-written, no memo store moved aside as damaged, every reinforcement count kept.

Real errors where a test can make them: a tiny tmpfs (ENOSPC) and one remounted read-only (EROFS) in a user and
mount namespace (``unshare -rm``; skipped where the kernel does not allow it), the real CLI in it. Where the
condition cannot be made in a test (a full disk at one given write), an OSError(ENOSPC) is raised by ``os.fsync``
of that module only, exactly where a full disk makes a write fail.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from botbin.errors import StorageError, WorkspaceError
from botbin.memory.memos import MEMO_FILE
from botbin.service import MemoryService
from botbin.sync import atomic, state, state_log
from botbin.sync.state import JOURNAL_FILE, STATE_FILE
from botbin.wire.errors import kind_of
from botbin.wire.requests import SearchRequest, SyncRequest
from conftest import REPO, FakeEmbedder, write_notes

NOTES = {
    "memory/garden.md": "# Garden\n\nThe tomatoes need water every second day.\n",
    "memory/db.md": "# Database\n\nThe staging database lives on host kestrel-db-2.\n",
}


class FullDisk:
    """``os`` as one module sees it, whose ``fsync`` fails with ENOSPC while ``full`` (the write before it
    went to the page cache; a full disk refuses it here, as it does with delayed allocation)."""

    def __init__(self) -> None:
        self.full = False

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def fsync(self, fd: int) -> None:
        if self.full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        os.fsync(fd)


def _service(ws: Path) -> MemoryService:
    return MemoryService(ws, {}, embedder=FakeEmbedder(), env={})


def _counts(service: MemoryService) -> dict[str, int]:
    service.lifecycle.flush()
    return {m.path: m.reinforcement_count for m in service.lifecycle.store.all()}


@pytest.mark.parametrize("journal", [JOURNAL_FILE, "sync-state.log"])
def test_a_full_disk_at_a_sync_journal_is_a_clear_error_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, journal: str
) -> None:
    ws = write_notes(tmp_path / "ws", NOTES)
    service = _service(ws)
    service.sync()
    service.search(SearchRequest(query="tomatoes water", show_all=True))
    before = _counts(service)
    out = service.output_dir
    saved = (out / STATE_FILE).read_bytes()
    disk, filling = FullDisk(), [True]
    if journal == JOURNAL_FILE:  # the mark a sync leaves while it writes, made before its first output
        real = atomic.atomic_write

        def write(path: Path, data: bytes, sync_dir: bool = True) -> None:
            disk.full = filling[0] and path.name == JOURNAL_FILE
            try:
                real(path, data, sync_dir)
            finally:
                disk.full = False

        monkeypatch.setattr(atomic, "os", disk)
        monkeypatch.setattr(state, "atomic_write", write)
    else:  # the state file's journal, appended by a note-level sync (a saved note)
        monkeypatch.setattr(state_log, "os", disk)
        disk.full = True
    (ws / "memory" / "garden.md").write_text("# Garden\n\nThe tomatoes need water daily now.\n")
    with pytest.raises(StorageError) as caught:
        service.sync(SyncRequest(only=frozenset({"memory/garden.md"})))
    assert caught.value.path == str(out / journal) and "the disk is full" in str(caught.value)
    assert isinstance(caught.value, WorkspaceError) and kind_of(caught.value) == "storage"
    assert (out / STATE_FILE).read_bytes() == saved
    disk.full, filling[0] = False, False
    later = _service(ws)  # the next run, once there is space again
    assert not later.sync().failed
    hits = later.search(SearchRequest(query="tomatoes water", show_all=True)).hits
    assert "daily now" in hits[0].text
    assert not (out / (MEMO_FILE + ".damaged")).exists()
    assert _counts(later) == {p: c + sum(h.path == p for h in hits) for p, c in before.items()}  # none lost


def test_a_full_disk_at_remember_is_a_storage_error_and_the_note_is_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = write_notes(tmp_path / "ws", NOTES)
    service = _service(ws)
    service.sync()
    disk = FullDisk()
    disk.full = True
    monkeypatch.setattr(atomic, "os", disk)
    with pytest.raises(StorageError, match=r"memory/20\d\d-\d\d-\d\d\.md: cannot write \(the disk is full"):
        service.remember("The otter logo won.")
    assert sorted(p.name for p in (ws / "memory").glob("*.md")) == ["db.md", "garden.md"]


def test_a_memo_store_sqlite_cannot_open_now_is_kept_with_its_history(tmp_path: Path) -> None:
    """A transient refusal (here SQLite's "unable to open database file": its write-ahead log cannot be made, as
    on a full disk or a folder without write permission) is a StorageError, never damage: nothing is moved aside,
    a search goes on without reinforcement, and the counts are all there once the cause is gone."""
    ws = write_notes(tmp_path / "ws", NOTES)
    service = _service(ws)
    service.sync()
    service.search(SearchRequest(query="tomatoes water", show_all=True))
    before = _counts(service)
    service.lifecycle.close()
    wal = service.output_dir / (MEMO_FILE + "-wal")
    wal.unlink(missing_ok=True)
    wal.mkdir()  # SQLite cannot create its log: SQLITE_CANTOPEN
    blocked = _service(ws)
    with pytest.raises(StorageError, match=r"memos\.sqlite: cannot open the memo store \(unable to open"):
        blocked.lifecycle.store  # noqa: B018
    assert blocked.search(
        SearchRequest(query="tomatoes water", show_all=True)
    ).hits  # search goes on, without decay and reinforcement
    assert not (service.output_dir / (MEMO_FILE + ".damaged")).exists()
    wal.rmdir()
    assert _counts(_service(ws)) == before


def _skip_without_namespace_mounts(tmp_path: Path) -> None:
    """Skip unless this kernel lets an unprivileged process mount a tmpfs in its own namespaces."""
    point = tmp_path / "probe"
    point.mkdir()
    unshare = shutil.which("unshare")
    if unshare is None or sys.platform != "linux":
        pytest.skip("unshare is not available")
    probe = subprocess.run(
        [unshare, "-rm", "mount", "-t", "tmpfs", "-o", "size=64k", "none", os.fspath(point)],
        capture_output=True,
        timeout=30,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"no user and mount namespaces here: {probe.stderr.decode(errors='replace').strip()}")


#: Run in a user and mount namespace: the output folder is a 400 KiB tmpfs, synced, searched (the memo store
#: is made), filled up, then a note changes and ``botbin sync`` (the real CLI, real model) and a search run on
#: the full disk; the space is freed and the same commands run again. Prints the exit codes and stderr.
_FULL_DISK = textwrap.dedent(
    """\
    set -u
    out="$WS/memory/aifbin"
    mkdir -p "$out"
    mount -t tmpfs -o size=400k none "$out"
    $BOTBIN sync -w "$WS" >/dev/null; echo "first sync: $?"
    $BOTBIN search -w "$WS" "tomatoes water" >/dev/null; echo "first search: $?"
    cp "$out/memos.sqlite" "$WS/memos-first.sqlite"
    cat /dev/zero > "$out/filler" 2>/dev/null
    printf '# Garden\\n\\nThe tomatoes need water daily now.\\n' > "$WS/memory/garden.md"
    $BOTBIN sync -w "$WS" 2>"$WS/sync.err"; echo "full sync: $?"
    $BOTBIN search -w "$WS" "tomatoes water" >/dev/null 2>"$WS/search.err"; echo "full search: $?"
    mount -o remount,ro "$out"
    $BOTBIN sync -w "$WS" 2>"$WS/ro.err"; echo "read-only sync: $?"
    mount -o remount,rw "$out"
    rm "$out/filler"
    $BOTBIN sync -w "$WS" >/dev/null; echo "later sync: $?"
    $BOTBIN search -w "$WS" "tomatoes water" >/dev/null; echo "later search: $?"
    ls -a "$out"
    cp "$out/memos.sqlite" "$WS/memos-copy.sqlite"  # no process holds it: its log is folded in
    """
)


@pytest.mark.model
def test_the_cli_on_a_real_full_then_read_only_disk(tmp_path: Path) -> None:
    import sqlite3

    _skip_without_namespace_mounts(tmp_path)
    ws = write_notes(tmp_path / "ws", NOTES)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}
    env.update(WS=os.fspath(ws), BOTBIN=f"{sys.executable} -m botbin", PYTHONPATH=os.fspath(REPO / "server"))
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", _FULL_DISK], capture_output=True, text=True, env=env, timeout=600, check=False
    )
    lines = done.stdout.splitlines()
    assert lines[:7] == [
        "first sync: 0",
        "first search: 0",
        "full sync: 3",
        "full search: 0",
        "read-only sync: 3",
        "later sync: 0",
        "later search: 0",
    ], done.stdout + done.stderr
    full, ro, search = ((ws / name).read_text() for name in ("sync.err", "ro.err", "search.err"))
    assert "Traceback" not in full + ro + search
    assert "botbin: error: " in full and "the disk is full" in full
    assert "botbin: error: " in ro and "Read-only file system" in ro
    assert "memos.sqlite: cannot open the memo store" in search  # a warning; the search answered
    assert MEMO_FILE + ".damaged" not in lines  # never taken for damage
    first, after = (
        dict(sqlite3.connect(ws / name).execute("SELECT path, reinforcement_count FROM memos").fetchall())
        for name in ("memos-first.sqlite", "memos-copy.sqlite")
    )
    assert first and all(after[p] >= count for p, count in first.items())  # the counts from before the full disk
    assert after["memory/garden.md"] == first["memory/garden.md"] + 1  # and the search after it
