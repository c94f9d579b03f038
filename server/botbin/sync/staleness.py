"""What ``botbin status`` says of the notes without syncing: which are out of date (no hashing)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from botbin.config import Settings
from botbin.sync.candidates import output_change
from botbin.sync.names import BAD_NAME_REASON
from botbin.sync.removal import on_disk
from botbin.sync.scan import scan_workspace, untracked_notes_hint
from botbin.sync.state import SyncState

DELETED_REASON = "deleted, still indexed"
"""An indexed note gone from disk."""
EXCLUDED_REASON = "excluded (on disk, no longer matched by include/exclude), still indexed"
"""An indexed note still on disk that the tracked globs no longer match."""


@dataclass(frozen=True)
class StaleNote:
    """A tracked note whose index entry does not match the disk."""

    path: str
    reason: str


@dataclass(frozen=True)
class Staleness:
    """Tracked notes on disk now, those whose index entry does not match them, and scan warnings."""

    tracked: int
    stale: tuple[StaleNote, ...]
    warnings: tuple[str, ...]


def find_stale(root: Path, settings: Settings, state: SyncState) -> Staleness:
    """Compare the notes under ``root`` with ``state`` by stat only (size, mtime, inode, ctime), and check that each
    output file is there with its recorded size and change time (a same-size edit of an output is stale too).
    Never raises: a scan that fails is a warning (tracked 0)."""
    stale: list[StaleNote] = []
    try:
        scan = scan_workspace(root, settings)
    except Exception as exc:  # status must report, not fail
        return Staleness(0, (), (str(exc),))
    for rel, st in scan.files.items():
        entry = state.files.get(rel)
        if entry is None:
            stale.append(StaleNote(rel, "not synced yet"))
        elif not entry.matches(st.size, st.mtime_ns, st.ino, st.ctime_ns):
            stale.append(StaleNote(rel, "changed since the last sync"))
        elif (change := output_change(root / entry.output, entry)) in ("missing", "damaged"):
            stale.append(StaleNote(rel, f"output {entry.output} is missing or damaged"))
        elif change == "changed" and entry.output_ctime_ns != -1:  # -1: written before botbin recorded it
            stale.append(StaleNote(rel, f"output {entry.output} changed since the last sync (the next sync checks it)"))
    stale += [
        StaleNote(rel, EXCLUDED_REASON if on_disk(root, rel) else DELETED_REASON)
        for rel in state.files
        if rel not in scan.files and not scan.covers(rel)
    ]
    hint = untracked_notes_hint(root, settings, scan)
    bad = tuple(f"{name}: {BAD_NAME_REASON}" for name in scan.bad_names)
    return Staleness(len(scan.files), tuple(stale), (*scan.warnings, *bad, *([hint] if hint else [])))
