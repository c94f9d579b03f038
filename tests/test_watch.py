"""botbin watch: a debounced burst of changes triggers one sync; temp-file-and-rename saves are edits."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from botbin.service import MemoryService
from botbin.sync.engine import SyncReport


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
    assert service.search("second version").hits[0].path == "memory/a.md"
