"""Issue 20, item 2: exclude globs follow .gitignore conventions for folder names, and freshness() tells
which hits are gone from disk or excluded now."""

from __future__ import annotations

from pathlib import Path

import pytest

from botbin.config import Settings, load_settings
from botbin.service import MemoryService
from botbin.sync.freshness import freshness
from botbin.sync.scan import TrackedMatcher
from botbin.wire.requests import SearchRequest
from conftest import FakeEmbedder, write_notes

VAULT = {
    "Start.md": "# Start\n\nHerons nest near the lake.\n",
    "Archive/Old.md": "# Old\n\nThe zebrafish aquarium plan.\n",
    "Projects/Archive/Older.md": "# Older\n\nTelescopes on the roof.\n",
    "Projects/Live.md": "# Live\n\nThe quokka census runs in May.\n",
    "Archive.md": "# A note named like the folder\n\nIt stays.\n",
}


@pytest.mark.parametrize("pattern", ["Archive", "Archive/", "**/Archive", "Archive/**"])
def test_exclude_a_folder_the_gitignore_way(pattern: str) -> None:
    tracked = TrackedMatcher(Settings(vault=True, exclude=(pattern,)))
    assert not tracked("Archive/Old.md")
    assert tracked("Start.md") and tracked("Archive.md") and tracked("Projects/Live.md")
    if pattern != "Archive/**":  # anchored: only the top folder
        assert not tracked("Projects/Archive/Older.md")


def test_exclude_gitignore_patterns_with_a_slash_are_anchored_and_wildcards_match_at_any_depth() -> None:
    tracked = TrackedMatcher(Settings(vault=True, exclude=("Projects/Archive", "*.draft.md")))
    assert not tracked("Projects/Archive/Older.md") and tracked("Archive/Old.md")
    assert not tracked("a/b/plan.draft.md") and not tracked("plan.draft.md")


def test_exclude_in_botbin_toml_removes_the_folder_from_the_index(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    root = write_notes(tmp_path / "vault", VAULT)
    MemoryService(root, {"vault": True}, embedder=fake_embedder, env={}).sync()
    (root / "botbin.toml").write_text('vault = true\nexclude = ["Archive"]\n', encoding="utf-8")
    service = MemoryService(root, embedder=fake_embedder, env={})
    report = service.sync()
    assert sorted(report.excluded) == ["Archive/Old.md", "Projects/Archive/Older.md"] and report.deleted == ()
    assert not service.sync().changed  # never re-added
    assert [
        h.path
        for h in service.search(SearchRequest(query="zebrafish aquarium", k=5, show_all=True)).hits
        if "Archive/" in h.path
    ] == []


def test_freshness_names_deleted_and_excluded_hits(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "vault", VAULT)
    (root / "Projects/Live.md").unlink()
    settings = load_settings(root, {"vault": True, "exclude": ["Archive/"]}, env={}).settings
    paths = [
        "Start.md",
        "Archive/Old.md",
        "Projects/Live.md",
        "Archive.md",
        "Projects/Archive/Older.md",
        "Start.md",
        "../outside.md",
    ]
    found = freshness(root, settings, paths)
    assert found.gone == ("Projects/Live.md", "../outside.md")
    assert found.excluded == ("Archive/Old.md", "Projects/Archive/Older.md")
    assert found.dropped == {"Projects/Live.md", "../outside.md", "Archive/Old.md", "Projects/Archive/Older.md"}
    warning = found.warning()
    assert found.stale and warning is not None and "2 deleted" in warning and "2 excluded" in warning
    assert freshness(root, settings, ["Start.md"]).warning() is None


def test_freshness_after_a_vault_sync_and_plain_settings(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    root = write_notes(tmp_path / "vault", VAULT)
    service = MemoryService(root, {"vault": True}, embedder=fake_embedder, env={})
    service.sync()
    hits = [h.path for h in service.search(SearchRequest(query="quokka census", k=3, show_all=True)).hits]
    assert freshness(root, Settings(), hits).excluded == tuple(hits)  # none is a MEMORY.md / memory/ note


def test_a_search_skips_every_stale_note_at_once_and_still_finds_the_tracked_answer(
    tmp_path: Path, fake_embedder: FakeEmbedder
) -> None:
    """Synced as a vault, searched with plain settings: 60 excluded notes outrank the one tracked note (under
    memory/), yet it is returned, and the warning counts every excluded note, not only those among the first hits."""
    notes = {
        f"Topics/t{i:02d}.md": f"# T{i}\n\nQuokka census quokka census quokka census, island {i}.\n" for i in range(60)
    }
    notes["memory/2026-11-30.md"] = "# 2026-11-30\n\n- The quokka census counted 412 animals.\n"
    root = write_notes(tmp_path / "vault", notes)
    MemoryService(root, {"vault": True}, embedder=fake_embedder, env={}).sync()
    result = MemoryService(root, embedder=fake_embedder, env={}).search(
        SearchRequest(query="quokka census", k=3, show_all=True), reinforce=False
    )
    assert [h.path for h in result.hits] == ["memory/2026-11-30.md"]
    assert result.stale and any("60 excluded" in w for w in result.warnings)
