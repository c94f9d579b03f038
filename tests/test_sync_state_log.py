"""The state file's journal (sync/state_log.py, issue 21): a note-level sync appends the named notes' entries
instead of rewriting the whole state file; every reader sees the file and its journal as one state; a line cut
short by a kill is skipped; a full sync, or a journal grown past its limit, folds it back into the file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from botbin.service import MemoryService
from botbin.sync import state_log
from botbin.sync.state import STATE_FILE, load_state, state_stamp
from botbin.wire.requests import SearchRequest, SyncRequest
from conftest import FakeEmbedder

NOTES = {
    "MEMORY.md": "# Memory\n\nWe chose NATS for the alert queue.\n",
    "memory/a.md": "# A\n\nThe capybara rota covers weekends.\n",
    "memory/b.md": "# B\n\nThe quokka mascot is on the status page.\n",
}


def _edit(memory: MemoryService, rel: str, text: str) -> None:
    (memory.root / rel).write_text(text, encoding="utf-8")


def _saved_once(make_service: Callable[..., MemoryService]) -> tuple[MemoryService, Path]:
    """A synced workspace, then one note edited and saved (a note-level sync); and its state file."""
    memory = make_service(NOTES)
    memory.sync()
    _edit(memory, "memory/a.md", "# A\n\nVersion two.\n")
    memory.sync(SyncRequest(only=frozenset({"memory/a.md"})))
    return memory, memory.root / "memory/aifbin" / STATE_FILE


def test_a_note_level_sync_appends_to_the_journal_and_every_reader_sees_it(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder
) -> None:
    memory = make_service(NOTES)
    memory.sync()
    path = memory.root / "memory/aifbin" / STATE_FILE
    base, stamp = path.read_bytes(), state_stamp(path)
    _edit(memory, "memory/a.md", "# A\n\nThe capybara rota moved to Mondays.\n")
    _edit(memory, "memory/c.md", "# C\n\nA new note about the heron census.\n")
    (memory.root / "memory/b.md").unlink()
    report = memory.sync(SyncRequest(only=frozenset({"memory/a.md", "memory/b.md", "memory/c.md"})))
    assert report.modified == ("memory/a.md",) and report.added == ("memory/c.md",) and report.deleted
    assert path.read_bytes() == base and state_log.log_path(path).is_file()  # the file itself is untouched
    assert state_stamp(path) != stamp  # another process notices the change (workspace/handle.py)
    state, warnings = load_state(path, "memory/aifbin")
    assert warnings == [] and sorted(state.files) == ["MEMORY.md", "memory/a.md", "memory/c.md"]
    other = MemoryService(memory.root, embedder=fake_embedder, env={})  # a second process
    assert [h.path for h in other.search(SearchRequest(query="heron census", k=1, show_all=True)).hits] == [
        "memory/c.md"
    ]
    assert not other.sync().changed  # the journal's entries count: nothing is re-synced


def test_a_line_cut_short_by_a_kill_is_skipped_and_the_next_line_still_counts(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder
) -> None:
    memory, path = _saved_once(make_service)
    with state_log.log_path(path).open("ab") as handle:
        handle.write(b'{"base":"cut short by a kill","files":{"memory/b.md":{"ha')
    _edit(memory, "memory/b.md", "# B\n\nThe quokka retired.\n")
    memory.sync(SyncRequest(only=frozenset({"memory/b.md"})))
    state, _ = load_state(path, "memory/aifbin")
    fresh = MemoryService(memory.root, embedder=fake_embedder, env={})
    assert sorted(state.files) == ["MEMORY.md", "memory/a.md", "memory/b.md"]
    assert not fresh.sync().changed  # both notes' entries were read back


def test_a_full_sync_folds_the_journal_into_the_file_and_stale_lines_are_ignored(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder
) -> None:
    memory, path = _saved_once(make_service)
    stale = state_log.log_path(path).read_bytes()
    _edit(memory, "memory/b.md", "# B\n\nVersion two.\n")
    assert memory.sync().modified == ("memory/b.md",)
    assert not state_log.log_path(path).exists()
    state_log.log_path(path).write_bytes(stale.replace(b"Version", b"x"))  # a journal left by a kill
    _edit(memory, "memory/a.md", "# A\n\nVersion three.\n")
    assert memory.sync().modified == ("memory/a.md",)  # not fooled by the older file's journal
    state_log.log_path(path).write_bytes(stale)
    assert not MemoryService(memory.root, embedder=fake_embedder, env={}).sync().changed


def test_a_journal_past_its_limit_is_folded_in_by_the_next_save(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_log, "MIN_COMPACT_BYTES", 1)
    memory = make_service(NOTES)
    memory.sync()
    path = memory.root / "memory/aifbin" / STATE_FILE
    seen = []
    for i in range(6):
        _edit(memory, "memory/a.md", f"# A\n\nVersion {i} of the rota, with some words to grow the line.\n")
        memory.sync(SyncRequest(only=frozenset({"memory/a.md"})))
        logged = state_log.log_path(path).stat().st_size if state_log.log_path(path).exists() else 0
        assert logged < path.stat().st_size  # folded in before it outgrows the file
        seen.append(logged > 0)
    assert True in seen and False in seen  # appended, then folded in
    state, _ = load_state(path, "memory/aifbin")
    assert not MemoryService(memory.root, embedder=fake_embedder, env={}).sync().changed
    assert state.files["memory/a.md"].hash == load_state(path)[0].files["memory/a.md"].hash


def test_the_journal_sits_beside_the_state_file(tmp_path: Path) -> None:
    assert state_log.log_path(tmp_path / STATE_FILE) == tmp_path / "sync-state.log"
