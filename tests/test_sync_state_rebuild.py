"""Issue 20, item 2: a damaged or lost sync-state.json is rebuilt from the AIF-BIN files with a warning,
never read as "nothing indexed"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from botbin.service import MemoryService
from botbin.sync.state import load_state
from botbin.wire.requests import SearchRequest
from conftest import FakeEmbedder, write_notes

NOTES = {
    "MEMORY.md": "# Memory\n\nAlways run the linter before pushing code.\n",
    "memory/2026-11-03.md": "# 2026-11-03\n\nThe postgres pool ran out of connections at noon.\n",
    "memory/deep/2026-11-04.md": "# 2026-11-04\n\nPicked uPlot for the dashboard charts because it is fast.\n",
}


@pytest.mark.parametrize("output_dir", ["memory/aifbin", "index/store"])
def test_truncated_state_file_still_finds_every_note(
    tmp_path: Path, fake_embedder: FakeEmbedder, output_dir: str
) -> None:
    root = write_notes(tmp_path / "ws", NOTES)
    MemoryService(root, {"output_dir": output_dir}, embedder=fake_embedder, env={}).sync()
    state_path = root / output_dir / "sync-state.json"
    before = json.loads(state_path.read_text())
    state_path.write_bytes(state_path.read_bytes()[:40])  # a truncated write
    fresh = MemoryService(root, {"output_dir": output_dir}, embedder=fake_embedder, env={})
    result = fresh.search(SearchRequest(query="postgres pool connections", k=1, show_all=True))
    assert [h.path for h in result.hits] == ["memory/2026-11-03.md"]
    assert any("rebuilt from 3 AIF-BIN files" in w for w in fresh.status().warnings)
    state, warnings = load_state(state_path)  # the output folder guessed, as the service asks today
    assert set(state.files) == set(NOTES) and "state file unreadable" in warnings[0]
    for rel, entry in state.files.items():
        old = before["files"][rel]
        assert (entry.hash, entry.output, entry.size, entry.chunks) == (
            old["hash"],
            old["output"],
            old["size"],
            old["chunks"],
        )
    assert state.model == before["model"] and state.chunker == before["chunker"]


def test_sync_after_a_damaged_state_file_changes_nothing_and_rewrites_it(
    tmp_path: Path, fake_embedder: FakeEmbedder
) -> None:
    root = write_notes(tmp_path / "ws", NOTES)
    service = MemoryService(root, embedder=fake_embedder, env={})
    service.sync()
    outputs = {p: p.read_bytes() for p in service.output_dir.rglob("*.aif-bin")}
    service.ws.state_path.write_text('{"version": 2, "files": [', encoding="utf-8")
    before = fake_embedder.embedded
    report = service.sync()
    assert report.added == () and report.modified == () and report.unchanged == 3
    assert fake_embedder.embedded == before
    assert {p: p.read_bytes() for p in service.output_dir.rglob("*.aif-bin")} == outputs
    assert set(json.loads(service.ws.state_path.read_text())["files"]) == set(NOTES)
    assert not service.sync().warnings  # mended: the next sync is quiet


def test_lost_state_file_beside_outputs_is_rebuilt(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    root = write_notes(tmp_path / "ws", NOTES)
    service = MemoryService(root, embedder=fake_embedder, env={})
    service.sync()
    service.ws.state_path.unlink()
    fresh = MemoryService(root, embedder=fake_embedder, env={})
    assert fresh.status().files == 3
    assert fresh.search(SearchRequest(query="uPlot dashboard", k=1, show_all=True)).hits


def test_outputs_that_do_not_match_their_path_are_not_trusted(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    root = write_notes(tmp_path / "ws", NOTES)
    service = MemoryService(root, embedder=fake_embedder, env={})
    service.sync()
    out = service.output_dir
    (out / "MEMORY.aif-bin").rename(out / "memory" / "stray.aif-bin")  # names another note than it holds
    (out / "junk.aif-bin").write_bytes(b"not an aif-bin file")
    service.ws.state_path.write_text("", encoding="utf-8")
    state, warnings = load_state(service.ws.state_path, "memory/aifbin")
    assert set(state.files) == {"memory/2026-11-03.md", "memory/deep/2026-11-04.md"} and warnings


def test_no_outputs_means_an_empty_state_and_no_warning_for_a_new_workspace(tmp_path: Path) -> None:
    assert load_state(tmp_path / "memory" / "aifbin" / "sync-state.json") == (load_state(tmp_path / "x")[0], [])
