"""The in-memory index: per-note entries, assembled on demand into one float32 matrix and one BM25 (what a
search takes and gives is in index/hits.py)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from botbin.aifbin import AifBinDocument, ChunkRecord, decode
from botbin.config import path_glob
from botbin.directives.partition import Directive
from botbin.errors import AifBinFormatError
from botbin.index.ann import CANDIDATES, chunk_key
from botbin.index.ann_live import AnnConfig, LiveAnn
from botbin.index.candidates import candidate_rows, candidate_scores, exact_scores, rank, rows_of_keys
from botbin.index.hits import ChunkRef, Hit, SearchFilters
from botbin.index.lexical import LexicalIndex, LexicalView
from botbin.index.ranking import (
    MAX_HITS_PER_NOTE,
    NEIGHBOUR_WEIGHT,
    NOTE_WEIGHT,
    Neighbours,
    neighbours,
    note_centroids,
)
from botbin.index.snippet import note_snippet
from botbin.index.tokenize import bm25_terms

if TYPE_CHECKING:
    from botbin.crypto.cipher import Keyring

log = logging.getLogger(__name__)


@dataclass
class _Note:
    path: str
    title: str
    tags: tuple[str, ...]
    date: str | None
    chunks: tuple[ChunkRecord, ...]
    """Chunk records without their embeddings (those live in ``matrix``)."""
    matrix: npt.NDArray[np.float32]
    """float32 (len(chunks), dim); after assembly a view into the index's one matrix."""
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


@dataclass
class _Assembled:
    matrix: npt.NDArray[np.float32]
    rows: list[tuple[_Note, ChunkRecord]]
    bm25: LexicalView
    paths: list[str] = field(default_factory=list)
    notes: list[_Note] = field(default_factory=list)
    note_of_row: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Position in ``notes`` of each row's note, so note-level filters are decided once per note."""
    kinds: npt.NDArray[np.str_] = field(default_factory=lambda: np.zeros(0, dtype="<U4"))
    visible: npt.NDArray[np.bool_] | None = None
    """Rows not hidden (archived memos); None when nothing is hidden."""
    note_vectors: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    """float32 (len(notes), dim): each note's mean chunk embedding, normalized (zeros for a note without chunks)."""
    near: Neighbours = field(default_factory=lambda: neighbours(np.zeros(0, dtype=np.int64)))
    """Each row's neighbouring chunks in its note."""
    row_keys: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Each row's ANN key."""
    key_order: npt.NDArray[np.int64] | None = None
    """Argsort of ``row_keys`` (made by the first ANN search after assembly)."""


_NO_VECTOR = np.zeros(0, dtype=np.float32)
_NO_KEYS = np.zeros(0, dtype=np.int64)


def _token_ids(terms: list[str], vocab: dict[str, int]) -> npt.NDArray[np.int32]:
    """int32 ids of ``terms``; terms new to ``vocab`` are numbered in order of first use (C-speed lookups)."""
    new = [t for t in dict.fromkeys(terms) if t not in vocab]
    vocab.update(zip(new, range(len(vocab), len(vocab) + len(new)), strict=True))
    return np.fromiter(map(vocab.__getitem__, terms), dtype=np.int32, count=len(terms))


def _note_from(doc: AifBinDocument, vocab: dict[str, int]) -> _Note:
    """Index entry of ``doc``; new BM25 terms are added to ``vocab``."""
    raw = doc.metadata.get("note")
    info: dict[str, Any] = raw if isinstance(raw, dict) else {}
    title = str(info.get("title") or Path(doc.source).stem)
    tags = tuple(str(t) for t in info.get("tags", []) if isinstance(t, str))
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
    return _Note(
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


class MemoryIndex:
    """All chunks of a workspace in memory; patched per note, assembled lazily before a search."""

    def __init__(self, dim: int | None, ann: AnnConfig | None = None) -> None:
        """``dim``: embedding size (384 for all-MiniLM-L6-v2); None takes it from the first note added.
        ``ann``: where and from what size the HNSW index serves the vector side (default: ann.ANN_MIN_ROWS,
        memory only)."""
        self.dim = dim
        self._ann_config = ann or AnnConfig()
        self._ann: LiveAnn | None = None
        self._notes: dict[str, _Note] = {}
        self._vocab: dict[str, int] = {}
        self._lexical = LexicalIndex(self._vocab)
        """BM25 postings, patched per note (no rebuild at assembly)."""
        self._assembled: _Assembled | None = None
        self._hidden: frozenset[tuple[str, str]] = frozenset()
        self._chunk_count = 0

    def __len__(self) -> int:
        """Number of chunks; O(1) (a search asks several times, and summing over 10,000 notes took ~2 ms)."""
        return self._chunk_count

    @property
    def note_count(self) -> int:
        return len(self._notes)

    def upsert(self, doc: AifBinDocument) -> None:
        """Add or replace the note of ``doc``. Raises ValueError if its dimension differs."""
        if self.dim is None:
            self.dim = doc.dim
        if doc.chunks and doc.dim != self.dim:
            raise ValueError(f"{doc.source}: embedding dim {doc.dim}, index holds {self.dim}")
        note = _note_from(doc, self._vocab)
        old = self._notes.get(doc.source)
        self._chunk_count += len(note.chunks) - (len(old.chunks) if old is not None else 0)
        self._notes[doc.source] = note
        self._lexical.put(doc.source, note.tokens)
        self._assembled = None
        if self._ann is not None:
            self._ann.patch(_NO_KEYS if old is None else old.keys, note.keys, note.matrix)

    def directives(self) -> list[Directive]:
        """Every hard and soft directive of the indexed notes, by path, then line."""
        return [d for p in sorted(self._notes) for d in self._notes[p].directives]

    def instruction_notes(self) -> list[str]:
        """Paths of the indexed instruction notes, sorted."""
        return sorted(p for p, n in self._notes.items() if n.instruction)

    def note_paths(self) -> list[str]:
        """Paths of every indexed note, sorted."""
        return sorted(self._notes)

    def chunk_vector(self, path: str, lines: tuple[int, int], source_md5: str) -> npt.NDArray[np.float32] | None:
        """float32 (dim,) embedding of the chunk of note ``path`` that overlaps ``lines`` (0-based, end
        exclusive) the most, if the index holds exactly the version ``source_md5`` of the note; else None."""
        note = self._notes.get(path)
        if note is None or note.source_md5 != source_md5 or not note.chunks:
            return None
        overlaps = [min(c.end_line, lines[1]) - max(c.start_line, lines[0]) for c in note.chunks]
        best = int(np.argmax(overlaps))
        return note.matrix[best].copy() if overlaps[best] > 0 else None

    def chunk_refs(self) -> list[ChunkRef]:
        """Every chunk, by path then position; ``row`` indexes ``matrix()``."""
        asm = self._assemble()
        return [
            ChunkRef(
                n.path,
                c.text_md5,
                c.start_line,
                c.end_line,
                c.kind,
                c.text,
                n.tags,
                n.date,
                n.created_at,
                n.instruction,
                i,
            )
            for i, (n, c) in enumerate(asm.rows)
        ]

    def matrix(self) -> npt.NDArray[np.float32]:
        """float32 (len(self), dim): every chunk's embedding, rows as in ``chunk_refs()`` (not a copy)."""
        return self._assemble().matrix

    def set_hidden(self, keys: frozenset[tuple[str, str]]) -> None:
        """Leave the chunks keyed (path, text_md5) out of every search (archived memos)."""
        if keys != self._hidden:
            self._hidden = keys
            if self._assembled is not None:
                self._assembled.visible = self._visible(self._assembled.rows)

    def _visible(self, rows: list[tuple[_Note, ChunkRecord]]) -> npt.NDArray[np.bool_] | None:
        if not self._hidden:
            return None
        return np.fromiter(((n.path, c.text_md5) not in self._hidden for n, c in rows), dtype=bool, count=len(rows))

    def remove(self, path: str) -> None:
        """Drop note ``path`` (no-op if absent)."""
        old = self._notes.pop(path, None)
        if old is not None:
            self._chunk_count -= len(old.chunks)
            self._lexical.remove(path)
            self._assembled = None
            if self._ann is not None:
                self._ann.patch(old.keys, _NO_KEYS, np.zeros((0, self.dim or 0), dtype=np.float32))

    # -- the HNSW side (index/ann_live.py) ------------------------------------------------------------------
    def prepare_ann(self) -> None:
        """Start loading or building the HNSW index in the background if the index is past the threshold."""
        live = self._live_ann()
        if live is not None:
            live.ready(len(self), self._ann_snapshot)

    def ann_active(self) -> bool:
        """True when searches take their vector candidates from HNSW (past the threshold, index ready)."""
        live = self._live_ann()
        return live is not None and live.ready(len(self), self._ann_snapshot) is not None

    def wait_ann(self, timeout: float | None = None) -> bool:
        """Block until a background HNSW load/build ends; True when none runs."""
        return self._ann is None or self._ann.wait(timeout)

    def save_ann(self) -> bool:
        """Write the HNSW cache file if it changed since loaded or saved; True when written."""
        return self._ann is not None and self._ann.save()

    def _live_ann(self) -> LiveAnn | None:
        if self._ann is None and self.dim is not None:
            self._ann = LiveAnn(self.dim, self._ann_config)
        return self._ann

    def _ann_snapshot(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        asm = self._assemble()
        return asm.row_keys, asm.matrix

    def _ann_rows(self, asm: _Assembled, q: npt.NDArray[np.float32] | None, k: int) -> npt.NDArray[np.int64] | None:
        """Rows HNSW finds nearest to ``q``, or None when the exact scan is to be used."""
        live = self._live_ann()
        index = None if live is None or q is None else live.ready(len(self), self._ann_snapshot)
        if index is None or q is None:
            return None
        found = index.candidates(q, max(CANDIDATES, 10 * k))
        if asm.key_order is None:
            asm.key_order = np.argsort(asm.row_keys, kind="stable")
        return rows_of_keys(asm.row_keys, asm.key_order, found)

    def _assemble(self) -> _Assembled:
        if self._assembled is None:
            notes = [self._notes[p] for p in sorted(self._notes)]
            rows = [(n, c) for n in notes for c in n.chunks]
            mats = [n.matrix for n in notes if len(n.chunks)]
            matrix = np.ascontiguousarray(np.vstack(mats)) if mats else np.zeros((0, self.dim or 0), np.float32)
            row = 0
            for note in notes:  # keep one copy of the vectors: each note's matrix becomes a view
                note.matrix = matrix[row : row + len(note.chunks)]
                row += len(note.chunks)
            bm25 = LexicalView(self._lexical, [n.path for n in notes])
            note_of_row = np.repeat(np.arange(len(notes), dtype=np.int64), [len(n.chunks) for n in notes])
            kinds = np.array([c.kind for _, c in rows], dtype="<U4")
            self._assembled = _Assembled(
                matrix,
                rows,
                bm25,
                [n.path for n, _ in rows],
                notes,
                note_of_row,
                kinds,
                self._visible(rows),
                self._centroids(notes),
                neighbours(note_of_row),
                np.concatenate([n.keys for n in notes]) if notes else _NO_KEYS,
            )
        return self._assembled

    def _centroids(self, notes: list[_Note]) -> npt.NDArray[np.float32]:
        """float32 (len(notes), dim): each note's centroid, zeros for a note without chunks (a copy per note,
        not a pass over every chunk vector)."""
        out = np.zeros((len(notes), self.dim or 0), dtype=np.float32)
        for i, note in enumerate(notes):
            if note.centroid is not None:
                out[i] = note.centroid
        return out

    def _mask(self, asm: _Assembled, f: SearchFilters) -> npt.NDArray[np.bool_] | None:
        """Rows that pass ``f`` (None: no filter). Note-level tests run once per note, not per chunk."""
        if f == SearchFilters():
            return None
        tag = f.tag.casefold().lstrip("#") if f.tag else None
        glob = path_glob(f.path_glob) if f.path_glob else None

        def keep(note: _Note) -> bool:
            if tag and not any(t.casefold() == tag or t.casefold().startswith(tag + "/") for t in note.tags):
                return False
            # Dates compare by day, whatever time part either side carries; "2026-11" as date_to means
            # the whole month.
            if f.date_from and (note.date is None or note.date[:10] < f.date_from[:10]):
                return False
            until = f.date_to[:10] if f.date_to else None
            if until and (note.date is None or note.date[: len(until)] > until):
                return False
            return glob is None or glob(note.path)

        notes_kept = np.fromiter((keep(n) for n in asm.notes), dtype=bool, count=len(asm.notes))
        mask: npt.NDArray[np.bool_] = notes_kept[asm.note_of_row]
        if f.kind:
            mask &= asm.kinds == f.kind
        return mask

    def search(
        self,
        query: str,
        query_vector: npt.NDArray[np.float32] | None,
        k: int = 10,
        alpha: float = 0.7,
        filters: SearchFilters | None = None,
        best_per_note: bool = False,
        max_hits_per_note: int = MAX_HITS_PER_NOTE,
        note_weight: float = NOTE_WEIGHT,
        neighbour_weight: float = NEIGHBOUR_WEIGHT,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query`` by hybrid score, best first.

        ``query_vector``: float32 (dim,), normalized; None ranks by BM25 alone (keyword fallback).
        ``max_hits_per_note``: at most that many hits of one note (0: no cap); ``best_per_note`` is a cap of 1.
        ``note_weight`` and ``neighbour_weight``: weights of the query's cosine to the chunk's note (its mean
        chunk vector) and to the chunks around it, averaged into the score when 0 < alpha < 1
        (ranking.add_context); alpha 1 and 0 rank by cosine alone and BM25 alone. An empty index gives [].
        """
        asm = self._assemble()
        if not asm.rows:
            return []
        terms = bm25_terms(query)
        bm25_raw = asm.bm25.scores(terms)
        q = None if query_vector is None else query_vector.astype(np.float32, copy=False)
        if q is None:
            alpha = 0.0
        context = q is not None and 0.0 < alpha < 1.0 and (note_weight > 0 or neighbour_weight > 0)
        ctx = (asm.note_vectors, asm.note_of_row, asm.near, note_weight, neighbour_weight) if context else None
        mask = self._mask(asm, filters or SearchFilters())
        if asm.visible is not None:
            mask = asm.visible if mask is None else mask & asm.visible
        cap = 1 if best_per_note else max_hits_per_note
        order: list[int] | None = None
        near = self._ann_rows(asm, q, k) if q is not None and alpha > 0 else None
        if near is not None and q is not None:
            rows = candidate_rows(near, bm25_raw)
            scores = candidate_scores(rows, asm.matrix, q, alpha, bm25_raw, ctx)
            kept = np.zeros(len(asm.rows), dtype=bool)
            kept[rows] = True
            order = rank(scores, k, kept if mask is None else mask & kept, asm.note_of_row, cap)
            if len(order) < k:
                order = None  # filters or the per-note cap left too few candidates: scan every row
        if order is None:
            scores = exact_scores(asm.matrix, q, alpha, bm25_raw, ctx)
            order = rank(scores, k, mask, asm.note_of_row, cap)
        best = float(bm25_raw.max()) if bm25_raw.size else 0.0
        weights = asm.bm25.idf(terms) if order else {}
        return [
            self._hit(
                asm,
                i,
                weights,
                float(scores[i]),
                0.0 if q is None else float(asm.matrix[i] @ q),
                float(bm25_raw[i]) / best if best > 0 else 0.0,
            )
            for i in order
        ]

    @staticmethod
    def _hit(asm: _Assembled, i: int, weights: dict[str, float], score: float, cosine: float, bm25: float) -> Hit:
        note, chunk = asm.rows[i]
        shown = note_snippet(chunk.text, chunk.start_line, chunk.end_line, weights)
        return Hit(
            path=note.path,
            start_line=chunk.start_line,
            end_line=chunk.end_line,
            heading_path=chunk.heading_path,
            kind=chunk.kind,
            title=note.title,
            snippet=shown.text,
            text=chunk.text,
            score=score,
            cosine=cosine,
            bm25=bm25,
            date=note.date,
            instruction=note.instruction,
            text_md5=chunk.text_md5,
            snippet_start_line=shown.start_line,
            snippet_end_line=shown.end_line,
        )


def load_index(
    files: list[Path],
    dim: int | None,
    damaged: list[Path] | None = None,
    keyring: Keyring | None = None,
    ann: AnnConfig | None = None,
) -> tuple[MemoryIndex, list[str]]:
    """Read AIF-BIN ``files`` into a new index (``keyring`` opens encrypted ones, in memory only); a bad
    file is skipped with a warning naming it (and is appended to ``damaged`` when given). ``ann``: the HNSW
    settings; past its threshold the HNSW index is loaded or built in the background (exact search meanwhile)."""
    index = MemoryIndex(dim, ann)
    warnings: list[str] = []
    for path in files:
        try:
            index.upsert(decode(path.read_bytes(), str(path), keyring))
        except (OSError, AifBinFormatError, ValueError) as exc:
            reason = str(exc) if isinstance(exc, AifBinFormatError) else f"{path}: {exc}"
            warnings.append(f"{reason}; skipped, the next sync rebuilds it from its note")
            if damaged is not None:
                damaged.append(path)
    index.prepare_ann()
    return index, warnings
