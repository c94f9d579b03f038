"""A lost or damaged state file rebuilt from the AIF-BIN files (their public metadata holds the source
path, its MD5 and size, the model and the chunker), so it is never read as "nothing indexed"."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

from botbin.aifbin import FLAG_ENCRYPTED, HEADER, HEADER_SIZE, decode_metadata
from botbin.errors import AifBinFormatError
from botbin.sync.state import FileEntry, SyncState

log = logging.getLogger(__name__)

#: The output folder a workspace uses unless its settings say otherwise (config.Settings.output_dir).
DEFAULT_OUTPUT_DIR = "memory/aifbin"
#: Folders above the output folder tried when the workspace root must be guessed.
_MAX_DEPTH = 6


def read_header(path: Path) -> tuple[int, int, dict[str, Any]]:
    """(flags, chunk_count, metadata) of the AIF-BIN file at ``path``, reading no chunk.

    Raises OSError if it cannot be read, AifBinFormatError if its header or metadata is bad.
    """
    with path.open("rb") as handle:
        head = handle.read(HEADER_SIZE)
        meta_len = HEADER.unpack_from(head)[4] if len(head) == HEADER_SIZE else 0
        head += handle.read(meta_len)
    return decode_metadata(head, str(path))


def _entry(path: Path, out_dir: Path, output_rel: str) -> tuple[str, FileEntry, dict[str, Any], bool] | None:
    """(note path, entry, metadata, encrypted) for one output, or None if it is not a botbin output of the
    note its own path names."""
    try:
        flags, count, meta = read_header(path)
        size = path.stat().st_size
    except (OSError, AifBinFormatError) as exc:
        log.info("state rebuild skips %s: %s", path, exc)
        return None
    source, md5, source_bytes = meta.get("source"), meta.get("source_md5"), meta.get("source_bytes")
    mirrored = path.relative_to(out_dir).as_posix()
    if not (
        isinstance(source, str)
        and isinstance(md5, str)
        and isinstance(source_bytes, int)
        and source.endswith(".md")
        and mirrored == source[:-3] + ".aif-bin"
    ):
        return None
    synced = meta.get("synced_at") if isinstance(meta.get("synced_at"), str) else ""
    created = meta.get("created_at") if isinstance(meta.get("created_at"), str) else synced
    # mtime_ns -1: the next sync hashes the note once (its bytes decide; nothing is re-embedded).
    entry = FileEntry(md5, str(synced), count, f"{output_rel}/{mirrored}", source_bytes, -1, str(created), size)
    return source, entry, meta, bool(flags & FLAG_ENCRYPTED)


def rebuild_state(out_dir: Path, output_rel: str) -> SyncState:
    """A state holding every valid output under ``out_dir`` (``output_rel``: that folder relative to the
    workspace, POSIX). Files that are not outputs of the note their path names are left out."""
    state = SyncState()
    models: Counter[str] = Counter()
    encrypted = []
    for path in sorted(out_dir.rglob("*.aif-bin")):
        found = _entry(path, out_dir, output_rel.strip("/"))
        if found is None:
            continue
        rel, entry, meta, locked = found
        state.files[rel] = entry
        model, chunker = meta.get("model"), meta.get("chunker")
        if isinstance(model, dict) and isinstance(model.get("name"), str):
            models[model["name"]] += 1
        if isinstance(chunker, dict) and not state.chunker:
            state.chunker = {str(k): v for k, v in chunker.items() if isinstance(v, int)}
        encrypted.append(locked)
    state.model = models.most_common(1)[0][0] if models else ""
    state.encrypted = bool(encrypted) and all(encrypted)
    stamps = [e.synced_at for e in state.files.values() if e.synced_at]
    state.last_sync = max(stamps) if stamps else None
    return state


def guess_output_rel(out_dir: Path) -> str | None:
    """The output folder relative to its workspace, when the caller does not know it: the default one if
    ``out_dir`` ends with it, else the shortest tail under which the outputs' notes exist. None if unknown."""
    posix = out_dir.as_posix().rstrip("/")
    if posix.endswith("/" + DEFAULT_OUTPUT_DIR):
        return DEFAULT_OUTPUT_DIR
    sources = []
    for path in sorted(out_dir.rglob("*.aif-bin"))[:20]:
        try:
            source = read_header(path)[2].get("source")
        except (OSError, AifBinFormatError):
            continue
        if isinstance(source, str):
            sources.append(source)
    for depth in range(1, min(_MAX_DEPTH, len(out_dir.parts) - 1) + 1):
        root = out_dir.parents[depth - 1]
        if sources and any((root / s).is_file() for s in sources):
            return out_dir.relative_to(root).as_posix()
    return None
