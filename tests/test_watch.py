"""botbin watch: a debounced burst of changes triggers one sync; temp-file-and-rename saves are edits."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from botbin.config import Settings
from botbin.service import MemoryService
from botbin.sync import watch
from botbin.sync.engine import SyncReport
from botbin.wire.requests import SearchRequest


def test_editor_style_save_is_one_modification(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(
        {"memory/a.md": "# A\n\nfirst version of the note\n", "MEMORY.md": "# M\n\nrules\n"}, debounce_ms=200
    )
    reports: list[SyncReport] = []
    started = threading.Event()

    def record(report: SyncReport) -> None:
        reports.append(report)
        started.set()

    thread = threading.Thread(target=service.watch, args=(record, 1), daemon=True)
    thread.start()
    assert started.wait(30)
    time.sleep(0.5)  # let the watcher start listening
    # What many editors do: write a temp file beside the note, then rename it over the note.
    tmp = service.root / "memory" / ".a.md.swp~"
    tmp.write_text("# A\n\nsecond version of the note\n", encoding="utf-8")
    os.replace(tmp, service.root / "memory" / "a.md")
    thread.join(30)
    assert not thread.is_alive()
    initial, change = reports
    assert sorted(initial.added) == ["MEMORY.md", "memory/a.md"]
    assert change.modified == ("memory/a.md",) and change.deleted == () and change.added == ()
    assert service.search(SearchRequest(query="second version", show_all=True)).hits[0].path == "memory/a.md"


def test_a_new_folder_is_watched_and_note_edits_rescan_nothing(
    make_service: Callable[..., MemoryService], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edits of notes leave the watched folders as they were (no walk of the whole workspace per save); a new
    folder is walked and watched, so an edit inside it is seen."""
    service = make_service({"memory/a.md": "# A\n\nfirst\n"}, debounce_ms=100)
    walks: list[int] = []
    real = watch.watched_folders

    def counting(root: Path, settings: Settings) -> list[Path]:
        walks.append(1)
        return real(root, settings)

    monkeypatch.setattr(watch, "watched_folders", counting)

    async def bursts() -> list[list[str]]:
        seen: list[list[str]] = []
        got: asyncio.Queue[list[str]] = asyncio.Queue()

        async def consume() -> None:
            async for burst in watch.watch_notes(service.root, service.ws.settings):
                if burst:
                    await got.put([os.path.relpath(p, service.root) for p in burst])

        task = asyncio.create_task(consume())
        await asyncio.sleep(1.0)  # the watcher is listening
        for text in ("second", "third"):
            (service.root / "memory/a.md").write_text(f"# A\n\n{text}\n", encoding="utf-8")
            seen.append(await got.get())
        walked.append(len(walks))
        (service.root / "memory/new").mkdir()
        await asyncio.sleep(1.0)  # the folder's event, then the walk that adds it to the watch
        (service.root / "memory/new/b.md").write_text("# B\n\nin a new folder\n", encoding="utf-8")
        while "memory/new/b.md" not in seen[-1]:
            seen.append(await got.get())
        task.cancel()
        return seen

    walked: list[int] = []
    seen = asyncio.run(asyncio.wait_for(bursts(), 30))
    assert seen[:2] == [["memory/a.md"], ["memory/a.md"]] and walked == [1]  # two saves, no walk after either
    assert seen[-1] == ["memory/new/b.md"] and len(walks) >= 2  # the new folder was walked, then watched
