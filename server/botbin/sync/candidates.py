"""Which notes a sync looks at (new, or size/mtime/output differ), whether an output is still the one written
(stat first, then decoded in full), and which of the notes were renames."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from botbin.aifbin import decode
from botbin.errors import AifBinFormatError
from botbin.sync.confine import Confined
from botbin.sync.output_paths import output_moved
from botbin.sync.scan import ScanResult
from botbin.sync.state import FileEntry, SyncState

if TYPE_CHECKING:
    from botbin.crypto.cipher import Keyring


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


def output_change(path: Path, entry: FileEntry) -> str | None:
    """None when the output is, by one ``lstat``, the file the last sync wrote for ``entry`` (a regular file
    with its size and inode change time); else "missing", "damaged" (another size, or not a regular file) or
    "changed" (touched or rewritten since, or written before its change time was recorded: decode to know)."""
    try:
        st = os.lstat(path)
    except OSError:
        return "missing"
    if not stat.S_ISREG(st.st_mode) or st.st_size != entry.output_bytes:
        return "damaged"
    return None if st.st_ctime_ns == entry.output_ctime_ns else "changed"


def output_intact(path: Path, entry: FileEntry) -> bool:
    """True if the output is the file the last sync wrote for ``entry`` (``output_change``, no read)."""
    return output_change(path, entry) is None


def output_problem(path: Path, rel: str, entry: FileEntry, expect: OutputCheck) -> str | None:
    """Why the output at ``path`` is not note ``rel``'s whole output as ``entry`` records it, read and decoded
    in full (a NaN vector, a changed chunk count, another model's data, another note's file), or None when it
    is. The file must stay in the output folder (``expect.guard``)."""
    try:
        with expect.guard.open(path) as handle:
            doc = decode(handle.read(), str(path), expect.keyring)
    except (OSError, AifBinFormatError) as exc:
        return str(exc) if isinstance(exc, AifBinFormatError) else f"{path}: {exc.strerror or exc}"
    model = doc.metadata.get("model", {})
    found = (doc.source, doc.metadata.get("source_md5"), len(doc.chunks), model.get("name"), doc.dim)
    wanted = (rel, entry.hash, entry.chunks, expect.model, expect.dim)
    if found != wanted:
        return f"{path}: holds {found[:3]} of model {found[3]!r} at dim {found[4]}, not this note's output"
    return None


@dataclass(frozen=True)
class OutputCheck:
    """What a decoded output must match (``output_problem``)."""

    guard: Confined
    """The output folder: the file must stay in it."""
    model: str
    """The model id the outputs are embedded with."""
    dim: int
    """Its vector size."""
    keyring: Keyring | None = None
    """Opens an encrypted store's outputs."""


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
            and output_intact(root / entry.output, entry)
            and not output_moved(rel, entry.output)
        ):
            unchanged += 1
        else:
            out.append(rel)
    return out, unchanged
