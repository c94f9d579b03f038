"""The sync state file (Bot-BIN paper §3.3 structure plus what incremental sync needs), as JSON.

Shape: ``{"version", "last_sync", "model", "chunker", "files": {rel: {"hash", "synced_at", "chunks",
"output", "size", "mtime_ns", "created_at", "output_bytes", "ino", "ctime_ns"}}, "encrypted"}``.
``hash`` is the MD5 hex of the note's bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botbin.sync.atomic import atomic_write

STATE_FILE = "sync-state.json"
#: Present while a sync is writing; found by the next sync, it says the last one was killed mid-way.
JOURNAL_FILE = ".botbin-sync-incomplete"
STATE_VERSION = 2


@dataclass
class FileEntry:
    """What the last sync recorded for one note."""

    hash: str
    """MD5 hex of the note's bytes."""
    synced_at: str
    """ISO 8601 UTC time of the sync that wrote the output."""
    chunks: int
    """Chunks in the output file."""
    output: str
    """The output file, relative to the workspace (POSIX)."""
    size: int
    """Note size in bytes at that sync."""
    mtime_ns: int
    """Note modification time (ns) at that sync."""
    created_at: str = ""
    """When the note's first output was written (ISO 8601 UTC)."""
    output_bytes: int = -1
    """Size of the output file as written; a different size means it was damaged and is rewritten."""
    ino: int = -1
    """Note inode number at that sync (-1: unknown, the next sync hashes the note)."""
    ctime_ns: int = -1
    """Note inode change time (ns) at that sync (-1: unknown, the next sync hashes the note); stored only
    when it differs from ``mtime_ns``."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this entry; ``ctime_ns`` is left out when it equals ``mtime_ns`` (a note last
        written, not restored: most of them), which keeps the state file of a big vault small."""
        data = vars(self)
        if self.ctime_ns == self.mtime_ns:
            data = {k: v for k, v in data.items() if k != "ctime_ns"}
        return data

    def matches(self, size: int, mtime_ns: int, ino: int, ctime_ns: int) -> bool:
        """True if a note with this stat is, without reading it, the one recorded here."""
        return (self.size, self.mtime_ns, self.ino, self.ctime_ns) == (size, mtime_ns, ino, ctime_ns)

    def restat(self, size: int, mtime_ns: int, ino: int, ctime_ns: int) -> None:
        """Record a new stat of the same bytes (a touch, a copy, a restore)."""
        self.size, self.mtime_ns, self.ino, self.ctime_ns = size, mtime_ns, ino, ctime_ns


@dataclass
class SyncState:
    """The whole state file."""

    model: str = ""
    """Model id the outputs were embedded with."""
    chunker: dict[str, int] = field(default_factory=dict)
    """Chunker parameters the outputs were cut with."""
    last_sync: str | None = None
    """ISO 8601 UTC time of the last completed sync."""
    files: dict[str, FileEntry] = field(default_factory=dict)
    """Relative note path -> entry."""
    version: int = STATE_VERSION
    encrypted: bool = False
    """True once every output is encrypted (a conversion in either direction ends by setting this)."""

    def to_json(self) -> str:
        """Compact JSON (the file of a 10,000-note vault is ~3 MB; pretty-printing doubles its cost)."""
        data = {
            "version": self.version, "model": self.model, "chunker": self.chunker, "last_sync": self.last_sync,
            "files": {rel: entry.to_dict() for rel, entry in self.files.items()}, "encrypted": self.encrypted,
        }
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _entry(raw: Any) -> FileEntry | None:
    try:
        return FileEntry(
            hash=str(raw["hash"]),
            synced_at=str(raw["synced_at"]),
            chunks=int(raw["chunks"]),
            output=str(raw["output"]),
            size=int(raw.get("size", -1)),
            mtime_ns=int(raw.get("mtime_ns", -1)),
            created_at=str(raw.get("created_at", "")),
            output_bytes=int(raw.get("output_bytes", -1)),
            ino=int(raw.get("ino", -1)),
            ctime_ns=int(raw["ctime_ns"]) if "ctime_ns" in raw else int(raw.get("mtime_ns", -1)),
        )
    except (KeyError, TypeError, ValueError):
        return None


def load_state(path: Path, output_dir: str | None = None) -> tuple[SyncState, list[str]]:
    """Read the state file at ``path`` (in the output folder ``output_dir``, relative to the workspace;
    guessed when None).

    Never raises for bad content: a damaged file, or a missing one beside existing outputs, is rebuilt from
    the AIF-BIN files with a warning (sync/rebuild.py; the next sync re-checks each note by hash and
    re-embeds nothing); with no output to rebuild from, the state is empty.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _rebuilt(path, output_dir, "state file missing")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _rebuilt(path, output_dir, f"state file unreadable ({exc})")
    if not isinstance(raw, dict) or not isinstance(raw.get("files"), dict):
        return _rebuilt(path, output_dir, "state file has no 'files' map")
    files = {str(k): e for k, v in raw["files"].items() if (e := _entry(v)) is not None}
    chunker_raw = raw.get("chunker")
    chunker: dict[str, Any] = chunker_raw if isinstance(chunker_raw, dict) else {}
    state = SyncState(
        model=str(raw.get("model", "")),
        chunker={str(k): int(v) for k, v in chunker.items() if isinstance(v, int)},
        last_sync=raw.get("last_sync") if isinstance(raw.get("last_sync"), str) else None,
        files=files,
        version=int(raw.get("version", STATE_VERSION)) if isinstance(raw.get("version"), int) else STATE_VERSION,
        encrypted=raw.get("encrypted") is True,
    )
    return state, []


def _rebuilt(path: Path, output_dir: str | None, problem: str) -> tuple[SyncState, list[str]]:
    """The state rebuilt from the outputs beside ``path``, with a warning naming ``problem``; an empty state
    (with the warning unless the file is simply missing) when there is nothing to rebuild from."""
    from botbin.sync.rebuild import guess_output_rel, rebuild_state

    missing = problem == "state file missing"
    if not path.parent.is_dir():
        return SyncState(), []
    rel = output_dir if output_dir is not None else guess_output_rel(path.parent)
    state = rebuild_state(path.parent, rel) if rel is not None else SyncState()
    if state.files:
        return state, [f"{path}: {problem}; rebuilt from {len(state.files)} AIF-BIN files (each note is "
                       "re-checked by hash; nothing is re-embedded)"]
    if missing:
        return SyncState(), []
    return SyncState(), [f"{path}: {problem}; every note will be re-checked"]


def save_state(path: Path, state: SyncState) -> None:
    """Write the state file atomically. Raises OSError if it cannot be written."""
    atomic_write(path, state.to_json().encode("utf-8"))


def mark_interrupted(output_dir: Path) -> None:
    """Create the journal file before a sync's first write (cheap when it exists already)."""
    path = output_dir / JOURNAL_FILE
    if not path.exists():
        atomic_write(path, b"a botbin sync is writing; if no sync runs, the last one was killed\n")


def was_interrupted(output_dir: Path) -> bool:
    """True if the last sync that wrote was killed before it finished."""
    return (output_dir / JOURNAL_FILE).exists()


def mark_complete(output_dir: Path) -> None:
    """Remove the journal file once the state file records everything written."""
    (output_dir / JOURNAL_FILE).unlink(missing_ok=True)


def distrust_mismatched_outputs(root: Path, state: SyncState) -> int:
    """After a killed sync: mark for rewriting each entry whose output's ``source_md5`` (public metadata,
    read without the chunk block) is not the entry's hash, e.g. a newer version written before the kill.
    Returns how many were marked."""
    from botbin.errors import AifBinFormatError
    from botbin.sync.rebuild import read_header

    marked = 0
    for entry in state.files.values():
        try:
            same = read_header(root / entry.output)[2].get("source_md5") == entry.hash
        except (OSError, AifBinFormatError):
            same = False
        if not same:
            entry.output_bytes = -1
            marked += 1
    return marked
