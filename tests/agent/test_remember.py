"""``remember`` (agent/remember.py): a retried call writes nothing twice."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from botbin.agent.remember import RETRY_WINDOW_MIN, remember
from botbin.errors import BotbinError


def _note(root: Path) -> str:
    return (root / "memory" / "2026-12-01.md").read_text(encoding="utf-8")


def test_a_retry_within_the_window_returns_the_entry_already_written(tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, 10, 5).astimezone()
    first = remember(tmp_path, "Deploys go out from the blue cluster.", ["ops"], now)
    again = remember(tmp_path, "Deploys go out from the blue cluster.", ["ops"], now + timedelta(minutes=3))
    assert again == first
    assert _note(tmp_path).count("blue cluster") == 1


def test_the_same_text_later_or_with_other_tags_is_a_new_entry(tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, 10, 5).astimezone()
    remember(tmp_path, "Standup moved to 9:30.", [], now)
    later = remember(tmp_path, "Standup moved to 9:30.", [], now + timedelta(minutes=RETRY_WINDOW_MIN + 1))
    tagged = remember(tmp_path, "Standup moved to 9:30.", ["team"], now + timedelta(minutes=RETRY_WINDOW_MIN + 1))
    assert later.start_line == 3 and tagged.start_line == 4
    assert _note(tmp_path).count("Standup moved") == 3


def test_a_retried_multi_line_entry_is_matched_whole(tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, 22, 0).astimezone()
    first = remember(tmp_path, "Release checklist:\nrun the migrations\ntag the build", [], now)
    other = remember(tmp_path, "Release checklist:\nrun the migrations", [], now)
    again = remember(tmp_path, "Release checklist:\nrun the migrations\ntag the build", [], now)
    assert again == first and other.start_line == first.end_line


def test_remember_waits_for_the_servers_own_sync_and_is_then_searchable(tmp_path: Path) -> None:
    """Issue 20 item 4: a sync of this process is running (an MCP server's start-up sync); remember queues behind
    it instead of failing on the workspace lock, returns once its text is indexed, and a retry adds nothing."""
    import threading
    import time

    from botbin.service import MemoryService
    from conftest import FakeEmbedder, write_notes

    class SlowEmbedder(FakeEmbedder):
        def embed(self, texts: list[str]) -> Any:
            time.sleep(0.5)  # the start-up sync is still embedding when remember is called
            return super().embed(texts)

    root = write_notes(
        tmp_path / "ws", {f"memory/n{i}.md": f"# N{i}\n\nNote number {i} about herons.\n" for i in range(6)}
    )
    service = MemoryService(root, {"lock_timeout_s": 0.2}, embedder=SlowEmbedder(), env={})
    startup = threading.Thread(target=service.sync)
    startup.start()
    time.sleep(0.2)
    written, report = service.remember("The staging database moved to kestrel-db-3.", ["ops"])
    startup.join()
    assert not report.failed and written.path in report.added + report.modified
    assert service.search("staging database kestrel", k=1).hits[0].path == written.path
    again, _ = service.remember("The staging database moved to kestrel-db-3.", ["ops"])
    assert again == written
    assert (root / written.path).read_text(encoding="utf-8").count("kestrel-db-3") == 1


def test_a_lone_surrogate_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    # a JSON "\ud83d" (a string cut inside an emoji) or an undecodable command-line byte: no text a note can hold
    for text, tags in (("broker \ud83d", []), ("broker", ["tag\udcff"])):
        with pytest.raises(BotbinError, match="surrogate"):
            remember(tmp_path, text, tags)
    assert not (tmp_path / "memory").exists()
