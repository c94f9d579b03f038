"""``botbin watch``: sync after each debounced burst of file changes (watchfiles).

Each sync diffs the whole tree by content hash, so an editor's save-via-temp-file-and-rename shows
up as one modified note, never as a delete followed by an add.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from watchfiles import Change, watch

from botbin.errors import BotbinError
from botbin.sync.engine import SyncReport

if TYPE_CHECKING:
    from botbin.service import MemoryService

log = logging.getLogger(__name__)


def note_filter(root: Path, output_dir: str) -> Callable[[Change, str], bool]:
    """A watchfiles filter that passes markdown files outside the output folder."""
    out = (root / output_dir).resolve()

    def accept(_change: Change, path: str) -> bool:
        p = Path(path)
        return p.suffix.lower() == ".md" and out not in p.parents

    return accept


def watch_workspace(service: MemoryService, report: Callable[[SyncReport], None],
                    stop_after: int | None = None) -> int:
    """Sync once, then after every debounced burst of changes; returns 0 on Ctrl+C.

    ``stop_after``: stop after this many change-triggered syncs (tests). A failing sync is reported
    and watching goes on.
    """
    report(service.sync())
    runs = 0
    try:
        for _changes in watch(service.root, watch_filter=note_filter(service.root, service.settings.output_dir),
                              debounce=service.settings.debounce_ms, step=50, raise_interrupt=True):
            try:
                report(service.sync())
            except BotbinError as exc:
                print(f"botbin: error: {exc}", file=sys.stderr)
            runs += 1
            if stop_after is not None and runs >= stop_after:
                break
    except KeyboardInterrupt:
        pass
    return 0
