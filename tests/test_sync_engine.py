"""Sync engine: incremental behaviour, renames, deletions, state file, locking."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from botbin import aifbin
from botbin.errors import LockedError
from botbin.service import MemoryService
from botbin.sync.lock import workspace_lock
from botbin.sync.state import STATE_FILE
from botbin.wire.requests import SearchRequest
from conftest import FakeEmbedder, run_checker

NOTES = {
    "MEMORY.md": "# Memory\n\n## Rules\n\nAlways run the linter before pushing code.\n",
    "memory/2026-11-03.md": "# 2026-11-03\n\nThe postgres pool ran out of connections at noon.\n\n"
    "## Fix\n\nRaised max_conns to forty and added an alert on pool saturation.\n",
    "memory/2026-11-04.md": "# 2026-11-04\n\nPicked uPlot for the dashboard charts because it is fast.\n",
    "notes/outside.md": "# Not tracked by default\n\nThis note lives outside memory/.\n",
}


def test_first_sync_writes_one_valid_file_per_tracked_note(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(NOTES)
    report = service.sync()
    assert sorted(report.added) == ["MEMORY.md", "memory/2026-11-03.md", "memory/2026-11-04.md"]
    out = service.output_dir
    assert (out / "MEMORY.aif-bin").is_file()
    assert (out / "memory" / "2026-11-03.aif-bin").is_file()
    assert not (out / "notes").exists()
    checked = run_checker(service.root, out)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    state = json.loads((out / STATE_FILE).read_text())
    assert set(state["files"]) == set(report.added)
    entry = state["files"]["memory/2026-11-03.md"]
    assert entry["output"] == "memory/aifbin/memory/2026-11-03.aif-bin"
    assert {"hash", "synced_at", "chunks", "output", "size", "mtime_ns"} <= set(entry)
    assert state["last_sync"] and state["model"] == FakeEmbedder.model_id


def test_noop_sync_reads_and_embeds_nothing(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder
) -> None:
    service = make_service(NOTES)
    service.sync()
    before = fake_embedder.embedded
    report = service.sync()
    assert not report.changed and report.unchanged == 3 and fake_embedder.embedded == before


def test_touch_without_change_reembeds_nothing(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder
) -> None:
    service = make_service(NOTES)
    service.sync()
    path = service.root / "memory/2026-11-04.md"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10_000_000))
    before = fake_embedder.embedded
    report = service.sync()
    assert not report.changed and fake_embedder.embedded == before


def test_editing_one_paragraph_reembeds_only_its_chunk(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder
) -> None:
    paragraphs = "\n\n".join(f"## Topic {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(40)) for i in range(6))
    service = make_service({"memory/long.md": f"# Long\n\n{paragraphs}\n"})
    first = service.sync()
    assert first.chunks_embedded >= 6
    path = service.root / "memory/long.md"
    path.write_text(path.read_text().replace("word3x5 ", "changed "), encoding="utf-8")
    before = fake_embedder.embedded
    report = service.sync()
    assert report.modified == ("memory/long.md",)
    assert report.chunks_embedded == 1 and fake_embedder.embedded - before == 1
    assert report.chunks_reused == first.chunks_embedded - 1


def test_rename_reembeds_nothing_and_leaves_no_stale_file(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder
) -> None:
    service = make_service(NOTES)
    service.sync()
    old = service.root / "memory/2026-11-04.md"
    old.rename(service.root / "memory/charts.md")
    before = fake_embedder.embedded
    report = service.sync()
    assert report.renamed == (("memory/2026-11-04.md", "memory/charts.md"),)
    assert report.deleted == ("memory/2026-11-04.md",) and report.added == ("memory/charts.md",)
    # The title (file name) is part of the embedded prefix, so a rename that changes the title
    # re-embeds; a move between folders with the same name must not.
    moved = service.root / "memory/archive/charts.md"
    moved.parent.mkdir()
    (service.root / "memory/charts.md").rename(moved)
    before = fake_embedder.embedded
    report = service.sync()
    assert report.chunks_embedded == 0 and fake_embedder.embedded == before
    assert not (service.output_dir / "memory/2026-11-04.aif-bin").exists()
    assert not (service.output_dir / "memory/charts.aif-bin").exists()
    assert (service.output_dir / "memory/archive/charts.aif-bin").is_file()


def test_deleted_note_loses_output_and_state_and_search_hits(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(NOTES)
    service.sync()
    assert any(
        h.path == "memory/2026-11-04.md"
        for h in service.search(SearchRequest(query="uPlot dashboard charts", show_all=True)).hits
    )
    (service.root / "memory/2026-11-04.md").unlink()
    report = service.sync()
    assert report.deleted == ("memory/2026-11-04.md",)
    assert not (service.output_dir / "memory/2026-11-04.aif-bin").exists()
    assert "memory/2026-11-04.md" not in json.loads(service.ws.state_path.read_text())["files"]
    assert all(
        h.path != "memory/2026-11-04.md"
        for h in service.search(SearchRequest(query="uPlot dashboard charts", show_all=True)).hits
    )


def test_deleting_every_note_in_a_folder_removes_the_empty_output_folder(
    make_service: Callable[..., MemoryService],
) -> None:
    service = make_service({"memory/deep/a.md": "# A\n\nsome text here\n", "MEMORY.md": "# M\n\nrule text\n"})
    service.sync()
    (service.root / "memory/deep/a.md").unlink()
    service.sync()
    assert not (service.output_dir / "memory" / "deep").exists()
    assert service.output_dir.is_dir()


def test_model_change_reembeds_everything(make_service: Callable[..., MemoryService], tmp_path: Path) -> None:
    service = make_service(NOTES)
    first = service.sync()

    class Other(FakeEmbedder):
        model_id = "test/other-model"

    other = MemoryService(service.root, {}, embedder=Other(), env={})
    report = other.sync()
    assert sorted(report.modified) == sorted(first.added)
    assert report.chunks_embedded == first.chunks_embedded
    doc = aifbin.decode((other.output_dir / "MEMORY.aif-bin").read_bytes(), "MEMORY.aif-bin")
    assert doc.metadata["model"]["name"] == "test/other-model"


def test_vault_mode_and_globs(make_service: Callable[..., MemoryService]) -> None:
    notes = {
        **NOTES,
        ".obsidian/x.md": "# hidden\n\ntext\n",
        ".trash/y.md": "# t\n\ntext\n",
        "node_modules/p/readme.md": "# pkg\n\ntext\n",
        "drafts/skip.md": "# skip\n\ntext\n",
    }
    service = make_service(notes, vault=True, exclude=["drafts/**"])
    report = service.sync()
    assert sorted(report.added) == ["MEMORY.md", "memory/2026-11-03.md", "memory/2026-11-04.md", "notes/outside.md"]


def test_output_folder_is_never_tracked_even_in_vault_mode(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(NOTES, vault=True)
    service.sync()
    (service.output_dir / "stray.md").write_text("# stray\n\ntext\n")
    report = service.sync()
    assert not report.changed


def test_lock_held_by_another_process_gives_locked_error(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(NOTES, lock_timeout_s=0.2)
    with workspace_lock(service.output_dir, 1.0), pytest.raises(LockedError, match="another botbin process"):
        service.sync()


def test_corrupt_state_file_recovers_and_reuses_embeddings(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder
) -> None:
    service = make_service(NOTES)
    service.sync()
    service.ws.state_path.write_text("{not json", encoding="utf-8")
    before = fake_embedder.embedded
    report = service.sync()
    assert any("state file unreadable" in w for w in report.warnings)
    assert fake_embedder.embedded == before  # vectors came back from the existing AIF-BIN files
    assert json.loads(service.ws.state_path.read_text())["files"]


def test_stale_temp_files_of_a_killed_writer_are_removed(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(NOTES)
    service.sync()
    stale = service.output_dir / "memory" / ".botbin-tmp-abc123"
    stale.write_bytes(b"half a file")
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    dead = service.output_dir / f".botbin-tmp-index-cache.npz.{ended.pid}.1"  # its writer was killed
    dead.write_bytes(b"half a cache")
    live = service.output_dir / f".botbin-tmp-index-cache.npz.{os.getpid()}.1"  # its writer is writing it now
    live.write_bytes(b"half a cache")
    service.sync()
    assert not stale.exists() and not dead.exists() and live.exists()


def test_search_after_sync_patches_a_loaded_index(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(NOTES)
    service.sync()
    assert service.search(SearchRequest(query="uPlot charts", show_all=True)).hits
    (service.root / "memory/2026-11-05.md").write_text("# 2026-11-05\n\nWe adopted zebrafish telemetry.\n")
    service.sync()
    hits = service.search(SearchRequest(query="zebrafish telemetry", k=1, show_all=True)).hits
    assert hits and hits[0].path == "memory/2026-11-05.md"


def test_noop_sync_writes_nothing(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(NOTES)
    service.sync()
    before = {p: p.stat().st_mtime_ns for p in service.output_dir.rglob("*")}
    service.sync()
    assert {p: p.stat().st_mtime_ns for p in service.output_dir.rglob("*")} == before


def test_status_lists_changed_new_and_deleted_notes(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(NOTES)
    service.sync()
    assert service.status().stale == ()
    (service.root / "memory/2026-11-03.md").write_text("# changed\n\nnew words\n")
    (service.root / "memory/new.md").write_text("# new\n\nnot synced\n")
    (service.root / "memory/2026-11-04.md").unlink()
    reasons = {s.path: s.reason for s in service.status().stale}
    assert reasons == {
        "memory/2026-11-03.md": "changed since the last sync",
        "memory/new.md": "not synced yet",
        "memory/2026-11-04.md": "deleted, still indexed",
    }


def test_status_names_a_truncated_output_and_a_failed_scan_is_a_warning(
    make_service: Callable[..., MemoryService], tmp_path: Path
) -> None:
    from botbin.sync.staleness import find_stale

    service = make_service(NOTES)
    service.sync()
    state = json.loads(service.ws.state_path.read_text())
    output = service.root / state["files"]["memory/2026-11-03.md"]["output"]
    output.write_bytes(output.read_bytes()[:-10])
    assert {s.path: s.reason for s in service.status().stale} == {
        "memory/2026-11-03.md": f"output {state['files']['memory/2026-11-03.md']['output']} is missing or damaged"
    }
    found = find_stale(tmp_path / "gone", service.settings, service.ws.state()[0])
    assert found.tracked == 0 and found.stale == () and "gone" in found.warnings[0]


def test_checkpointed_sync_still_records_model_and_last_sync(
    make_service: Callable[..., MemoryService], monkeypatch: pytest.MonkeyPatch
) -> None:
    import botbin.sync.run as run

    monkeypatch.setattr(run, "CHECKPOINT_S", 0.0)  # save the state after every group
    monkeypatch.setattr(run, "GROUP_CHUNKS", 1)
    service = make_service(NOTES)
    service.sync()
    state = json.loads(service.ws.state_path.read_text())
    assert state["model"] == FakeEmbedder.model_id and state["chunker"] and state["last_sync"]
    assert not service.sync().changed


def test_an_index_reloads_after_another_process_synced(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder
) -> None:
    first = make_service({"memory/a.md": "# A\n\nThe heron nests by the lake.\n"})
    first.sync()
    assert first.search(SearchRequest(query="heron", show_all=True)).hits
    (first.root / "memory" / "b.md").write_text("# B\n\nThe quokka visits the garden.\n", encoding="utf-8")
    MemoryService(first.root, embedder=fake_embedder, env={}).sync()  # "another process" wrote b.md's output
    first.sync()  # a no-op for the files, but the state file moved on: the index reloads
    assert [h.path for h in first.search(SearchRequest(query="quokka garden", k=1, show_all=True)).hits] == [
        "memory/b.md"
    ]
