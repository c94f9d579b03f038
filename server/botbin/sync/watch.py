"""``botbin watch``: sync after each debounced burst of file changes (watchfiles).

Each sync diffs the whole tree by content hash, so an editor's save-via-temp-file-and-rename shows
up as one modified note, never as a delete followed by an add.

The watcher watches, each non-recursively, the folders the scan walks: a recursive watch would follow
every symbolic link, even one to a huge or endless tree outside the workspace that the scan skips.
When a folder appears or goes, the set is rebuilt after the sync.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path

from watchfiles import Change, awatch

from botbin.config import ALWAYS_EXCLUDED_DIRS, Settings
from botbin.errors import BotbinError
from botbin.sync.engine import SyncReport
from botbin.sync.scan import outside_target, scan_workspace, walk_roots

log = logging.getLogger(__name__)
#: Milliseconds the watcher waits before yielding an empty batch (when a rebuilt watcher catches up).
IDLE_YIELD_MS = 1000


def watched_folders(root: Path, settings: Settings) -> list[Path]:
    """The root, every folder the scan walks (links it follows included, links it skips left out), and
    the nearest existing folder above a walk root that does not exist yet (where it will appear)."""
    try:
        rels = set(scan_workspace(root, settings).folders)
    except BotbinError:
        rels = set()
    for start in walk_roots(settings.tracked_globs):
        parts = start.split("/") if start else []
        while parts and not os.path.isdir(root.joinpath(*parts)):
            parts.pop()
        rel = "/".join(parts)
        if settings.follow_symlinks or outside_target(root, rel) is None:
            rels.add(rel)
    return [root / rel for rel in sorted(rels | {""})]


def note_filter(root: Path, output_dir: str, folders: Iterable[Path] = ()) -> Callable[[Change, str], bool]:
    """A watchfiles filter that passes markdown files outside the output folder, folders created (outside
    it, not dot folders) and the removal of a watched folder ``folders``: those change what to watch."""
    out = (root / output_dir).resolve()
    watched = {str(f) for f in folders}

    def accept(change: Change, path: str) -> bool:
        p = Path(path)
        if p.suffix.lower() == ".md":
            return out not in p.parents
        if change == Change.deleted:
            return path in watched
        return (
            change == Change.added
            and p != out
            and out not in p.parents
            and not p.name.startswith(".")
            and p.name not in ALWAYS_EXCLUDED_DIRS
            and os.path.isdir(path)
        )

    return accept


async def watch_notes(root: Path, settings: Settings) -> AsyncIterator[list[str]]:
    """Each debounced burst of note changes under ``root``: the paths changed (absolute, sorted; an empty list
    when the set of watched folders changed and a rebuilt watcher catches up on what it may have missed).
    The code after each ``yield`` runs once the consumer has handled the burst (synced), so a folder created
    meanwhile is watched from then on. Runs until cancelled."""
    loop = asyncio.get_running_loop()
    catch_up = False  # a rebuilt watcher syncs once more: changes made while it started were not seen
    while True:
        folders = await loop.run_in_executor(None, watched_folders, root, settings)
        async for changes in awatch(
            *folders,
            watch_filter=note_filter(root, settings.output_dir, folders),
            debounce=settings.debounce_ms,
            step=50,
            recursive=False,
            ignore_permission_denied=True,
            rust_timeout=IDLE_YIELD_MS,
            yield_on_timeout=True,
        ):
            if not changes and not catch_up:
                continue
            yield sorted(path for _, path in changes)
            if changes and all(path.lower().endswith(".md") for _, path in changes):
                continue  # notes only: the folders to watch are the same (a folder's own event says otherwise)
            catch_up = await loop.run_in_executor(None, watched_folders, root, settings) != folders
            if catch_up:
                break


def watch_workspace(
    root: Path,
    settings: Settings,
    sync: Callable[[], SyncReport],
    report: Callable[[SyncReport], None],
    stop_after: int | None = None,
) -> int:
    """``botbin watch``: ``sync()`` once, then after every burst of ``watch_notes``; returns 0 on Ctrl+C.

    ``stop_after``: stop after this many change-triggered syncs (tests). A failing sync is reported and
    watching goes on.
    """
    report(sync())

    async def run() -> None:
        runs = 0
        async for changed in watch_notes(root, settings):
            try:
                report(sync())
            except BotbinError as exc:
                print(f"botbin: error: {exc}", file=sys.stderr)
            runs += bool(changed)
            if stop_after is not None and runs >= stop_after:
                return

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
    return 0
