"""One note -> one AIF-BIN document: decode, parse, chunk, and assemble the metadata (no file I/O)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from botbin import TOOL_NAME, __version__
from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.chunking import Chunk, ChunkerParams, TokenCounter, chunk_note
from botbin.sync.output_paths import mirrored

if TYPE_CHECKING:
    from botbin.directives.partition import Partition
    from botbin.parsing import ParsedNote


def utc_now() -> str:
    """Current UTC time as ISO 8601 with a 'Z' suffix, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def output_rel(rel: str, output_dir: str) -> str:
    """Relative path of the AIF-BIN file for note ``rel``: the note's path mirrored under ``output_dir``
    (``memory/2026-11-03.md`` -> ``memory/aifbin/memory/2026-11-03.aif-bin``; see ``mirrored``)."""
    return f"{output_dir.strip('/')}/{mirrored(rel)}"


@dataclass(frozen=True)
class PreparedNote:
    """A note read, parsed and chunked, waiting for its embeddings."""

    rel: str
    """Relative POSIX path."""
    data: bytes
    """The note's exact bytes."""
    md5: str
    """MD5 hex of ``data``."""
    note: ParsedNote
    """Parsed blocks and metadata."""
    chunks: tuple[Chunk, ...]
    """Chunks in source order, each with its kind."""
    partition: Partition
    """Block kinds and directives of the note."""
    warnings: tuple[str, ...]
    """Decode and parse warnings, each naming the file."""


def prepare_note(
    rel: str,
    data: bytes,
    counter: TokenCounter,
    params: ChunkerParams,
    md5: str | None = None,
    instruction_globs: Sequence[str] | None = None,
) -> PreparedNote:
    """Decode, parse and chunk the bytes of note ``rel`` (``md5``: their MD5 hex, if already known;
    ``instruction_globs``: ``Settings.instruction_globs``, default when None).

    Raises ParseError for a binary file.
    """
    from botbin.directives.partition import partition_note  # imported on first change, not on a no-op sync
    from botbin.parsing import decode_note, parse_note
    from botbin.parsing.binary import strip_binary

    decoded = decode_note(data, rel)
    stripped = strip_binary(parse_note(decoded.text, rel))  # drawings and base64 are not embedded
    note = stripped.note
    part = (
        partition_note(note, decoded.text)
        if instruction_globs is None
        else partition_note(note, decoded.text, instruction_globs)
    )
    chunks = tuple(chunk_note(note, counter, params, part.kinds, split_kinds=part.instruction))
    digest = md5 or hashlib.md5(data).hexdigest()
    skipped = stripped.warning()
    return PreparedNote(
        rel, data, digest, note, chunks, part, decoded.warnings + note.warnings + ((skipped,) if skipped else ())
    )


@dataclass(frozen=True)
class ModelMeta:
    """The ``model`` map of AIF-BIN metadata."""

    name: str
    dim: int
    max_tokens: int
    normalized: bool = True


def build_document(
    prep: PreparedNote,
    embeddings: npt.NDArray[np.float32],
    model: ModelMeta,
    params: ChunkerParams,
    created_at: str,
    synced_at: str,
) -> AifBinDocument:
    """Assemble the AIF-BIN document of ``prep``; ``embeddings`` is float32 (len(prep.chunks), model.dim)."""
    fm = prep.note.frontmatter
    metadata = {
        "source": prep.rel,
        "source_md5": prep.md5,
        "source_bytes": len(prep.data),
        "source_lines": prep.note.line_count,
        "created_at": created_at,
        "synced_at": synced_at,
        "model": {"name": model.name, "dim": model.dim, "normalized": model.normalized, "max_tokens": model.max_tokens},
        "chunker": params.as_dict(),
        "frontmatter": fm.data,
        "note": {"title": prep.note.title, "tags": list(fm.tags), "aliases": list(fm.aliases), "date": fm.date},
        "tool": {"name": TOOL_NAME, "version": __version__},
        "instruction": prep.partition.instruction,
        "directives": [d.to_dict() for d in prep.partition.directives],
        "source_text": prep.data,
    }
    records = tuple(
        ChunkRecord(
            id=i,
            text=c.text,
            start_line=c.start_line,
            end_line=c.end_line,
            heading_path=c.heading_path,
            kind=c.kind,
            tokens=c.tokens,
            text_md5=c.text_md5,
            embedding=embeddings[i],
        )
        for i, c in enumerate(prep.chunks)
    )
    return AifBinDocument(metadata, records)
