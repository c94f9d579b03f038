"""The load cache's note and chunk tables, column by column (one list or array per field, not one record per
chunk): MessagePack and numpy unpack a column at C speed, and an entry is sliced from the columns on demand.

``note_columns`` / ``chunk_columns`` turn entries into the columns ``write_cache`` stores; ``Table`` reads them
back and makes a note's entry (``entry``). Numbers live in numpy arrays (``stamps``, ``counts``, ``chunk_ints``),
strings and nested lists in the MessagePack header.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.aifbin import KINDS, ChunkRecord
from botbin.directives.partition import Directive
from botbin.index.entry import NoteEntry

Stamp = tuple[int, int, int]
"""(size in bytes, mtime_ns, inode) of an AIF-BIN file."""

NOTE_FIELDS = ("file", "path", "title", "tags", "date", "md5", "instruction", "created", "directives")
"""The note columns in the header's ``notes`` map, one value per note."""
CHUNK_FIELDS = ("text", "heading", "kind", "md5", "directives")
"""The chunk columns in the header's ``chunks`` map, one value per chunk (notes in order, chunks in order)."""
CHUNK_INTS = ("id", "start_line", "end_line", "tokens")
"""The columns of the ``chunk_ints`` array, int64 (rows, 4)."""
_EMPTY = np.zeros(0, dtype=np.float32)


def _all(kind: type | tuple[type, ...]) -> Callable[[list[Any]], bool]:
    return lambda column: all(isinstance(v, kind) for v in column)


def _lists_of(kind: type) -> Callable[[list[Any]], bool]:
    return lambda column: all(isinstance(v, list) and all(isinstance(x, kind) for x in v) for v in column)


_COLUMN_CHECKS: dict[str, Callable[[list[Any]], bool]] = {
    "file": _all(str),
    "path": _all(str),
    "title": _all(str),
    "tags": _lists_of(str),
    "date": _all((str, type(None))),
    "md5": _all((str, type(None))),
    "instruction": _all(bool),
    "created": _all((str, type(None))),
    "directives": _lists_of(dict),
    "text": _all(str),
    "heading": _lists_of(str),
    "kind": lambda column: set(column) <= KINDS if all(isinstance(v, str) for v in column) else False,
}
"""A read-back cache is untrusted: each column's values must have the type an entry holds (the header is
MessagePack, where any value can stand anywhere)."""


def note_columns(notes: list[tuple[str, Stamp, NoteEntry]]) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """The header's note columns and the arrays ``stamps`` int64 (notes, 3) and ``counts`` int64 (notes,)."""
    entries = [n for _, _, n in notes]
    columns: dict[str, list[Any]] = {
        "file": [f for f, _, _ in notes],
        "path": [n.path for n in entries],
        "title": [n.title for n in entries],
        "tags": [list(n.tags) for n in entries],
        "date": [n.date for n in entries],
        "md5": [n.source_md5 for n in entries],
        "instruction": [n.instruction for n in entries],
        "created": [n.created_at for n in entries],
        "directives": [[d.to_dict() for d in n.directives] for n in entries],
    }
    arrays = {
        "stamps": np.array([s for _, s, _ in notes], dtype=np.int64).reshape(len(notes), 3),
        "counts": np.fromiter((len(n.chunks) for n in entries), dtype=np.int64, count=len(entries)),
    }
    return columns, arrays


def chunk_columns(entries: list[NoteEntry]) -> tuple[dict[str, list[Any]], npt.NDArray[np.int64]]:
    """The header's chunk columns and the ``chunk_ints`` array (CHUNK_INTS per chunk)."""
    chunks = [c for n in entries for c in n.chunks]
    columns: dict[str, list[Any]] = {
        "text": [c.text for c in chunks],
        "heading": [list(c.heading_path) for c in chunks],
        "kind": [c.kind for c in chunks],
        "md5": [c.text_md5 for c in chunks],
        "directives": [list(c.directives) for c in chunks],
    }
    ints = np.array([(c.id, c.start_line, c.end_line, c.tokens) for c in chunks], dtype=np.int64)
    return columns, ints.reshape(len(chunks), len(CHUNK_INTS))


@dataclass(frozen=True)
class Table:
    """The note and chunk columns of a cache file, checked for length; ``entry`` builds one note's entry."""

    notes: dict[str, list[Any]]
    """NOTE_FIELDS -> one value per note."""
    chunks: dict[str, list[Any]]
    """CHUNK_FIELDS and CHUNK_INTS -> one value per chunk (headings and directives as tuples)."""
    starts: list[int]
    """First row of each note."""
    stops: list[int]
    """The row after each note's last."""

    @classmethod
    def read(cls, notes: Any, chunks: Any, counts: npt.NDArray[Any], ints: npt.NDArray[Any]) -> Table:
        """Columns as unpacked (``notes``, ``chunks``: the header's maps) and the ``counts`` and ``chunk_ints``
        arrays. Raises ValueError when a column is missing or its length does not fit."""
        if not isinstance(notes, dict) or not isinstance(chunks, dict):
            raise ValueError("the note or chunk table is not a map")
        n, rows = len(counts), int(counts.sum()) if len(counts) else 0
        if counts.ndim != 1 or (n and int(counts.min()) < 0) or ints.shape != (rows, len(CHUNK_INTS)):
            raise ValueError(f"chunk_ints has shape {ints.shape} for {rows} chunks")
        for fields, table, size in ((NOTE_FIELDS, notes, n), (CHUNK_FIELDS, chunks, rows)):
            for name in fields:
                column = table.get(name)
                if not isinstance(column, list) or len(column) != size:
                    raise ValueError(f"column {name!r} does not hold {size} values")
                if not _COLUMN_CHECKS[name](column):
                    raise ValueError(f"column {name!r} holds a value of the wrong type")
        if rows and (int(ints.min(axis=0)[0]) < 0 or bool((ints[:, 1] < 0).any() | (ints[:, 2] <= ints[:, 1]).any())):
            raise ValueError("chunk_ints holds a negative id, a negative line or an empty line range")
        if rows and int(ints[:, 3].min()) < 0:
            raise ValueError("chunk_ints holds a negative token count")
        cols = {name: chunks[name] for name in CHUNK_FIELDS}
        cols["heading"] = list(map(tuple, cols["heading"]))
        cols["directives"] = list(map(tuple, cols["directives"]))
        for i, name in enumerate(CHUNK_INTS):
            cols[name] = ints[:, i].tolist()
        stops = np.cumsum(counts).tolist()
        return cls({name: notes[name] for name in NOTE_FIELDS}, cols, [0, *stops[:-1]] if n else [], stops)

    def entry(
        self, pos: int, arrays: dict[str, npt.NDArray[Any]], tokens: tuple[npt.NDArray[np.int32], ...]
    ) -> NoteEntry:
        """The entry of the note at ``pos``; its vectors, keys and centroid from ``arrays`` (the cache's matrix,
        keys, centroids), its BM25 ids ``tokens``. Raises ValueError, TypeError, IndexError or KeyError on a
        damaged record."""
        a, b = self.starts[pos], self.stops[pos]
        c, n = self.chunks, self.notes
        records = tuple(
            map(
                ChunkRecord,
                c["id"][a:b],
                c["text"][a:b],
                c["start_line"][a:b],
                c["end_line"][a:b],
                c["heading"][a:b],
                c["kind"][a:b],
                c["tokens"][a:b],
                c["md5"][a:b],
                repeat(_EMPTY, b - a),
                c["directives"][a:b],
            )
        )
        path = n["path"][pos]
        directives = tuple(d for d in (Directive.from_dict(path, r) for r in n["directives"][pos]) if d is not None)
        return NoteEntry(
            path,
            n["title"][pos],
            tuple(n["tags"][pos]),
            n["date"][pos],
            records,
            arrays["matrix"][a:b],
            tokens,
            directives,
            n["md5"][pos],
            n["instruction"][pos],
            n["created"][pos],
            arrays["keys"][a:b],
            arrays["centroids"][pos] if b > a else None,
        )
