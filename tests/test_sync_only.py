"""``sync(only=...)`` (issue 21): the notes named are synced without a folder scan; a named note that is gone
or untracked leaves the index; other notes are not looked at; a store that needs a whole look gets a scan."""

from __future__ import annotations

from collections.abc import Callable

from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest, SyncRequest

NOTES = {
    "MEMORY.md": "# Memory\n\nWe chose NATS for the alert queue.\n",
    "memory/a.md": "# A\n\nThe capybara rota covers weekends.\n",
    "memory/b.md": "# B\n\nThe quokka mascot is on the status page.\n",
}


def test_only_the_named_notes_are_synced(make_service: Callable[..., MemoryService]) -> None:
    memory = make_service(NOTES)
    assert len(memory.sync().added) == 3
    (memory.root / "memory" / "a.md").write_text("# A\n\nThe capybara rota moved to Mondays.\n", encoding="utf-8")
    (memory.root / "memory" / "b.md").write_text("# B\n\nThe quokka left.\n", encoding="utf-8")
    (memory.root / "memory" / "c.md").write_text("# C\n\nA new note.\n", encoding="utf-8")
    report = memory.sync(SyncRequest(only=frozenset({"memory/a.md", "memory/c.md"})))
    assert report.modified == ("memory/a.md",) and report.added == ("memory/c.md",) and report.unchanged == 0
    state, _ = memory.ws.state()
    assert state.files["memory/b.md"].hash != state.files["memory/a.md"].hash
    assert memory.sync(SyncRequest(only=frozenset({"memory/a.md"}))).unchanged == 1  # content-hashed: nothing to do
    assert memory.sync().modified == ("memory/b.md",)  # the full scan catches the one not named


def test_a_named_note_that_is_gone_or_untracked_leaves_the_index(make_service: Callable[..., MemoryService]) -> None:
    memory = make_service({**NOTES, "notes/loose.md": "# Loose\n\nNot tracked.\n"})
    memory.sync()
    (memory.root / "memory" / "a.md").unlink()
    report = memory.sync(SyncRequest(only=frozenset({"memory/a.md", "notes/loose.md", "memory/missing.md", "../x.md"})))
    assert report.deleted == ("memory/a.md",) and not report.added and not report.failed
    assert "memory/a.md" not in memory.ws.state()[0].files and "memory/b.md" in memory.ws.state()[0].files
    assert [
        h.path
        for h in memory.search(SearchRequest(query="capybara rota", show_all=True)).hits
        if h.path == "memory/a.md"
    ] == []


def test_a_lost_state_file_gets_a_full_scan(make_service: Callable[..., MemoryService]) -> None:
    memory = make_service(NOTES)
    memory.sync()
    memory.ws.state_path.unlink()
    report = memory.sync(SyncRequest(only=frozenset({"MEMORY.md"})))
    assert len(report.added) + len(report.modified) + report.unchanged == 3  # every note looked at
