"""One note's entry in the in-memory index: its chunks without their vectors, its vectors as one matrix, its BM25
term ids, directives and the fields filters read (made from its AIF-BIN document)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.directives.partition import Directive
from botbin.index.ann import chunk_key
from botbin.index.ranking import note_centroids
from botbin.index.tokenize import bm25_terms

_NO_VECTOR = np.zeros(0, dtype=np.float32)


@dataclass
class NoteEntry:
    """A note as the index holds it (mutable only in ``matrix``, which assembly turns into a view)."""

    path: str
    """The note's path, relative to the workspace, as in the AIF-BIN ``source``."""
    title: str
    """Frontmatter title, else the file stem."""
    tags: tuple[str, ...]
    """Frontmatter tags."""
    date: str | None
    """Frontmatter date (ISO 8601, as written), if any."""
    chunks: tuple[ChunkRecord, ...]
    """Chunk records without their embeddings (those live in ``matrix``)."""
    matrix: npt.NDArray[np.float32]
    """float32 (len(chunks), dim); after assembly a view into the assembled matrix."""
    tokens: tuple[npt.NDArray[np.int32], ...]
    """BM25 token ids per chunk."""
    directives: tuple[Directive, ...] = ()
    """Hard and soft blocks of the note, from the AIF-BIN metadata."""
    source_md5: str | None = None
    """MD5 hex of the note bytes this entry was built from."""
    instruction: bool = False
    """True for an instruction note (MEMORY.md, AGENTS.md, CLAUDE.md, frontmatter ``botbin: instructions``)."""
    created_at: str | None = None
    """When the note was first synced (AIF-BIN ``created_at``), ISO 8601."""
    keys: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Each chunk's ANN key (ann.chunk_key), in chunk order."""
    centroid: npt.NDArray[np.float32] | None = None
    """float32 (dim,): the normalized mean chunk vector (ranking.note_centroids), made once per version of the
    note instead of at every assembly; None for a note without chunks."""


def _token_ids(terms: list[str], vocab: dict[str, int]) -> npt.NDArray[np.int32]:
    """int32 ids of ``terms``; terms new to ``vocab`` are numbered in order of first use (C-speed lookups)."""
    new = [t for t in dict.fromkeys(terms) if t not in vocab]
    vocab.update(zip(new, range(len(vocab), len(vocab) + len(new)), strict=True))
    return np.fromiter(map(vocab.__getitem__, terms), dtype=np.int32, count=len(terms))


def note_from(doc: AifBinDocument, vocab: dict[str, int]) -> NoteEntry:
    """Index entry of ``doc``; new BM25 terms are added to ``vocab``."""
    raw = doc.metadata.get("note")
    info: dict[str, Any] = raw if isinstance(raw, dict) else {}
    title = str(info.get("title") or Path(doc.source).stem)
    raw_tags = info.get("tags")  # metadata read back is untrusted: a tag list may be anything
    tags = tuple(t for t in raw_tags if isinstance(t, str)) if isinstance(raw_tags, list) else ()
    date = info.get("date") if isinstance(info.get("date"), str) else None
    tokens = tuple(_token_ids(bm25_terms(" ".join([title, *c.heading_path, c.text])), vocab) for c in doc.chunks)
    chunks = tuple(replace(c, embedding=_NO_VECTOR) for c in doc.chunks)
    raw_directives = doc.metadata.get("directives")
    directives = tuple(
        d
        for d in (
            Directive.from_dict(doc.source, r) for r in (raw_directives if isinstance(raw_directives, list) else [])
        )
        if d is not None
    )
    md5 = doc.metadata.get("source_md5")
    created = doc.metadata.get("created_at")
    matrix = doc.embeddings()
    return NoteEntry(
        doc.source,
        title,
        tags,
        date,
        chunks,
        matrix,
        tokens,
        directives,
        md5 if isinstance(md5, str) else None,
        doc.metadata.get("instruction") is True,
        created if isinstance(created, str) else None,
        np.fromiter((chunk_key(doc.source, i, c.text_md5) for i, c in enumerate(doc.chunks)), np.int64),
        note_centroids(matrix, [len(chunks)])[0] if chunks else None,
    )
