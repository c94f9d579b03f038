"""Issue 20, item 3: an edit that keeps the size and puts the mtime back (cp -p, rsync -a, tar x, a backup
restore) is still seen; a state file written before inode and ctime were recorded costs one hash pass."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from conftest import FakeEmbedder, write_notes

OLD = "# Plan\n\nWe deploy on Tuesday with the blue pipeline.\n"
NEW = "# Plan\n\nWe deploy on Fridays with the teal pipeline.\n"


def _service(tmp_path: Path, fake_embedder: FakeEmbedder) -> MemoryService:
    assert len(OLD) == len(NEW)
    root = write_notes(tmp_path / "ws", {"memory/plan.md": OLD, "MEMORY.md": "# Memory\n\nBe kind.\n"})
    service = MemoryService(root, embedder=fake_embedder, env={})
    service.sync()
    return service


def test_in_place_edit_with_restored_mtime_is_seen(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    service = _service(tmp_path, fake_embedder)
    note = service.root / "memory/plan.md"
    st = note.stat()
    note.write_text(NEW, encoding="utf-8")
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))  # what a restore does
    assert note.stat().st_size == st.st_size and note.stat().st_mtime_ns == st.st_mtime_ns
    assert [s.path for s in service.status().stale] == ["memory/plan.md"]
    report = service.sync()
    assert report.modified == ("memory/plan.md",)
    assert [h.path for h in service.search(SearchRequest(query="teal pipeline Fridays", k=1, show_all=True)).hits] == [
        "memory/plan.md"
    ]


def test_copy_preserving_times_over_the_note_is_seen(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    service = _service(tmp_path, fake_embedder)
    note = service.root / "memory/plan.md"
    backup = tmp_path / "backup.md"
    backup.write_text(NEW, encoding="utf-8")
    st = note.stat()
    os.utime(backup, ns=(st.st_atime_ns, st.st_mtime_ns))
    tmp = note.with_name(".plan.md.tmp")
    shutil.copy2(backup, tmp)  # rsync -a: a temp file with the old times, renamed over the note
    os.replace(tmp, note)
    assert service.sync().modified == ("memory/plan.md",)


def test_touch_and_chmod_hash_once_and_reembed_nothing(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    service = _service(tmp_path, fake_embedder)
    note = service.root / "memory/plan.md"
    note.chmod(0o600)  # moves ctime only
    before = fake_embedder.embedded
    report = service.sync()
    assert report.modified == () and report.unchanged == 2 and fake_embedder.embedded == before
    assert service.status().stale == ()


def test_a_state_file_without_inode_and_ctime_is_upgraded_without_reembedding(
    tmp_path: Path, fake_embedder: FakeEmbedder
) -> None:
    service = _service(tmp_path, fake_embedder)
    raw = json.loads(service.ws.state_path.read_text())
    for entry in raw["files"].values():
        del entry["ino"]
        entry.pop("ctime_ns", None)  # stored only when it differs from mtime_ns
    service.ws.state_path.write_text(json.dumps(raw), encoding="utf-8")
    before = fake_embedder.embedded
    report = service.sync()
    assert report.unchanged == 2 and report.modified == () and fake_embedder.embedded == before
    files = json.loads(service.ws.state_path.read_text())["files"]
    assert all(e["ino"] > 0 and e.get("ctime_ns", e["mtime_ns"]) > 0 for e in files.values())
