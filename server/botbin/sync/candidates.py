"""Which notes a sync looks at (new, or size/mtime/output differ), and which of them were renames."""

from __future__ import annotations

from pathlib import Path

from botbin.sync.output_paths import output_moved
from botbin.sync.scan import ScanResult
from botbin.sync.state import SyncState


def needs_full_check(state: SyncState, model: str, chunker: dict[str, int]) -> bool:
    """True when outputs were made with another model or chunker: every note is re-chunked."""
    return state.model != model or state.chunker != chunker


def renames(deleted: list[str], added: list[str], old: dict[str, str], state: SyncState) -> list[tuple[str, str]]:
    """(old path, new path) of each added note whose bytes are those of a deleted one (``old``: their hashes)."""
    by_hash = {old[rel]: rel for rel in deleted}
    return [
        (by_hash[state.files[rel].hash], rel)
        for rel in added
        if rel in state.files and state.files[rel].hash in by_hash
    ]


def output_intact(path: Path, expected_bytes: int) -> bool:
    """The output exists with the size it was written with (a stat, no read)."""
    try:
        return path.stat().st_size == expected_bytes
    except OSError:
        return False


def candidates(
    scan: ScanResult, state: SyncState, root: Path, force: bool, force_paths: frozenset[str]
) -> tuple[list[str], int]:
    """Notes that may have changed (new, or size/mtime/output differ), and the count of the rest."""
    out, unchanged = [], 0
    for rel, st in scan.files.items():
        entry = state.files.get(rel)
        if (
            not force
            and rel not in force_paths
            and entry is not None
            and entry.matches(st.size, st.mtime_ns, st.ino, st.ctime_ns)
            and output_intact(root / entry.output, entry.output_bytes)
            and not output_moved(rel, entry.output)
        ):
            unchanged += 1
        else:
            out.append(rel)
    return out, unchanged
