"""The assembled index a search reads, patched per note.

A full assembly lays every note out by path, its chunks' rows in order: one float32 matrix and, per row, its
note, kind, visibility, neighbours in its note, ANN key and BM25 slot, plus each note's centroid; every array
has spare rows. A note saved afterwards is patched in, in proportion to its size: the rows of its previous
version die (masked out of every ranking, their BM25 scores zeroed so that they never set the normalization) and
its new rows fill spare rows at the end. A search scores the rows with the same code as after a full assembly,
so hits and scores are those of a freshly built index (only exactly equal scores may come in another order:
ties follow the rows). When the spare rows run out or dead rows pass REBUILD_SHARE of the live ones, ``patch``
and ``kill`` answer False and the store assembles anew: amortized O(1) per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from botbin.aifbin import ChunkRecord
from botbin.index.candidates import rows_of_keys
from botbin.index.daily import daily_date
from botbin.index.entry import NoteEntry
from botbin.index.hits import IndexQuery
from botbin.index.lexical import LexicalIndex
from botbin.index.ranking import Neighbours, neighbours

REBUILD_SHARE = 0.25
"""Assemble anew when dead rows (of replaced or removed notes) exceed this share of the live rows."""
SPARE_SHARE = 0.125
"""Spare rows (and note places) allocated at assembly, as a share of the live ones..."""
MIN_SPARE = 1024
"""...and at least this many (2,048 rows of 384 floats: 1.5 MB; untouched pages cost no memory)."""
SPARSE_SHARE = 8
"""``bm25_rows`` reads the query terms' postings while they number under 1/SPARSE_SHARE of the rows, past that
the dense per-row scores (a scattered add over a sort costs more than one gather then)."""

Hidden = frozenset[tuple[str, str]]
"""(path, text_md5) of the chunks left out of every search."""


@dataclass(frozen=True)
class Span:
    """Where a live note sits in the assembled index."""

    note: int
    """Position of the note in ``Assembled.notes``."""
    start: int
    """Its first row."""
    stop: int
    """The row after its last."""


class Assembled:
    """Rows of every chunk (see the module doc); ``size`` rows are in use, live or dead."""

    def __init__(self, notes: list[NoteEntry], lexical: LexicalIndex, dim: int, hidden: Hidden) -> None:
        """Assemble ``notes`` (in path order) in one pass; each note's matrix becomes a view into ``matrix``."""
        self._lexical = lexical
        live = sum(len(n.chunks) for n in notes)
        self._cap = live + max(MIN_SPARE, int(SPARE_SHARE * live))
        self._note_cap = len(notes) + max(MIN_SPARE, int(SPARE_SHARE * len(notes)))
        self._matrix = np.zeros((self._cap, dim), dtype=np.float32)
        self._note_vectors = np.zeros((self._note_cap, dim), dtype=np.float32)
        self._daily = np.zeros(self._note_cap, dtype=bool)
        self._note_of_row = np.zeros(self._cap, dtype=np.int64)
        self._kinds = np.zeros(self._cap, dtype="<U4")
        self._alive = np.zeros(self._cap, dtype=bool)
        self._visible = np.zeros(self._cap, dtype=bool)
        self._prev = np.zeros(self._cap, dtype=np.int64)
        self._next = np.zeros(self._cap, dtype=np.int64)
        self._w_prev = np.zeros(self._cap, dtype=np.float32)
        self._w_next = np.zeros(self._cap, dtype=np.float32)
        self._row_keys = np.zeros(self._cap, dtype=np.int64)
        self._row_slots = np.zeros(self._cap, dtype=np.int32)
        self.rows: list[tuple[NoteEntry, ChunkRecord]] = [(n, c) for n in notes for c in n.chunks]
        """Each row's note and chunk record (dead rows keep theirs)."""
        self.notes = list(notes)
        """Every note assembled or patched in, live or replaced; rows point into it."""
        self.spans: dict[str, Span] = {}
        """Live notes by path."""
        self.size = self.live_rows = live
        self.dead_rows = 0
        self.invisible = 0
        """Rows in use that no search may return (dead or hidden)."""
        self._base = live
        """Rows of the full assembly, whose keys ``_key_order`` sorts; later rows' keys are in ``_delta_keys``."""
        self._key_order: npt.NDArray[np.int64] | None = None
        self._sorted_keys = np.zeros(0, dtype=np.int64)
        """``_row_keys[:_base][_key_order]``: the full assembly's keys sorted (made with ``_key_order``)."""
        self._delta_keys: dict[int, int] = {}
        self._slot_rows: npt.NDArray[np.int64] | None = None
        """Live row of each BM25 slot (-1: none), for the HNSW path's sparse BM25; built on its first use, then
        patched with the rows, in the numbering of ``_slots_generation``."""
        self._fill(notes, hidden)

    def _fill(self, notes: list[NoteEntry], hidden: Hidden) -> None:
        row = 0
        for pos, note in enumerate(notes):
            k = len(note.chunks)
            if k:
                self._matrix[row : row + k] = note.matrix
                note.matrix = self._matrix[row : row + k]
            if note.centroid is not None:
                self._note_vectors[pos] = note.centroid
            self._daily[pos] = daily_date(note.path) is not None
            self.spans[note.path] = Span(pos, row, row + k)
            row += k
        counts = np.fromiter((len(n.chunks) for n in notes), dtype=np.int64, count=len(notes))
        self._note_of_row[:row] = np.repeat(np.arange(len(notes), dtype=np.int64), counts)
        self._kinds[:row] = [c.kind for _, c in self.rows]
        self._set_near(0, self._note_of_row[:row])
        if notes:
            self._row_keys[:row] = np.concatenate([n.keys for n in notes])
        self._alive[:row] = True
        self._visible[:row] = True
        if hidden:
            self._visible[:row] = [(n.path, c.text_md5) not in hidden for n, c in self.rows]
            self.invisible = row - int(np.count_nonzero(self._visible[:row]))
        self._row_slots[:row] = self._lexical.row_slots([n.path for n in notes])
        self._slots_generation = self._lexical.generation

    def _set_near(self, start: int, note_of_row: npt.NDArray[np.int64]) -> None:
        near = neighbours(note_of_row)
        stop = start + len(note_of_row)
        self._prev[start:stop] = near.prev + start
        self._next[start:stop] = near.next + start
        self._w_prev[start:stop] = near.w_prev
        self._w_next[start:stop] = near.w_next

    # -- what a search reads -----------------------------------------------------------------------------
    @property
    def matrix(self) -> npt.NDArray[np.float32]:
        """float32 (size, dim): every row's embedding (a view)."""
        return self._matrix[: self.size]

    @property
    def note_of_row(self) -> npt.NDArray[np.int64]:
        """Position in ``notes`` of each row's note."""
        return self._note_of_row[: self.size]

    @property
    def kinds(self) -> npt.NDArray[np.str_]:
        """Each row's chunk kind."""
        return self._kinds[: self.size]

    @property
    def note_vectors(self) -> npt.NDArray[np.float32]:
        """float32 (len(notes), dim): each note's centroid (zeros for a note without chunks)."""
        return self._note_vectors[: len(self.notes)]

    @property
    def daily(self) -> npt.NDArray[np.bool_]:
        """True for each daily note in ``notes`` (index/daily.py: the per-note cap may exempt them)."""
        return self._daily[: len(self.notes)]

    @property
    def near(self) -> Neighbours:
        """Each row's neighbouring chunks in its note."""
        n = self.size
        return Neighbours(self._prev[:n], self._next[:n], self._w_prev[:n], self._w_next[:n])

    def visible(self) -> npt.NDArray[np.bool_] | None:
        """Rows a search may return (live, not hidden); None when that is every row."""
        return self._visible[: self.size] if self.invisible else None

    def _gather_slots(self) -> None:
        self._lexical.flush()
        if self._slots_generation != self._lexical.generation:  # slots renumbered: gather them anew
            for path, span in self.spans.items():
                self._row_slots[span.start : span.stop] = self._lexical.slots(path)
            self._slots_generation = self._lexical.generation
            self._slot_rows = None

    def bm25_scores(self, terms: list[str]) -> npt.NDArray[np.float32]:
        """float32 (size,): each row's BM25 score for ``terms`` (0 for dead rows)."""
        self._gather_slots()
        by_slot = self._lexical.slot_scores(terms)
        if not by_slot.size:
            return np.zeros(self.size, dtype=np.float32)
        raw: npt.NDArray[np.float32] = by_slot[self._row_slots[: self.size]]
        if self.dead_rows:
            raw[~self._alive[: self.size]] = 0.0
        return raw

    def bm25_rows(self, terms: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The live rows (sorted) with a BM25 score for ``terms`` and their scores, those of ``bm25_scores``: from
        the terms' postings when they are few (O(postings), the HNSW path), else from ``bm25_scores``."""
        self._gather_slots()
        found = self._lexical.sparse_scores(terms, max(1, self.size // SPARSE_SHARE))
        if found is None:
            raw = self.bm25_scores(terms)
            rows = np.flatnonzero(raw > 0)
            return rows, raw[rows]
        slots, scores = found
        rows = self._slot_row_map()[slots]
        held = rows >= 0
        rows, scores = rows[held], scores[held]
        order = np.argsort(rows)
        return rows[order], scores[order]

    def _slot_row_map(self) -> npt.NDArray[np.int64]:
        if self._slot_rows is None:
            out = np.full(self._lexical.slot_count, -1, dtype=np.int64)
            live = np.flatnonzero(self._alive[: self.size])
            out[self._row_slots[live]] = live
            self._slot_rows = out
        return self._slot_rows

    def _map_slots(self, rows: slice, alive: bool) -> None:
        """Keep ``_slot_rows`` in step for ``rows`` (their slots in the current numbering): -1 when they die."""
        if self._slot_rows is None:
            return
        slots = self._row_slots[rows]
        if alive and slots.size and int(slots.max()) >= len(self._slot_rows):
            grown = np.full(max(int(slots.max()) + 1, 2 * len(self._slot_rows)), -1, dtype=np.int64)
            grown[: len(self._slot_rows)] = self._slot_rows
            self._slot_rows = grown
        self._slot_rows[slots] = np.arange(rows.start, rows.stop) if alive else -1

    def idf(self, terms: list[str]) -> dict[str, float]:
        """IDF of each known term of ``terms`` (``LexicalIndex.idf``)."""
        return self._lexical.idf(terms)

    def idf_mass(self, terms: list[str]) -> float:
        """The most BM25 score a row could reach for ``terms`` (``LexicalIndex.idf_mass``)."""
        return self._lexical.idf_mass(terms)

    def matchable_mass(self, terms: list[str]) -> float:
        """The IDF mass of ``terms`` that some row holds (``LexicalIndex.matchable_mass``)."""
        return self._lexical.matchable_mass(terms)

    def rows_of(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Live rows whose ANN key is in ``keys`` (unknown keys are skipped)."""
        if self._key_order is None:
            self._key_order = np.argsort(self._row_keys[: self._base], kind="stable")
            self._sorted_keys = self._row_keys[: self._base][self._key_order]
        base = rows_of_keys(self._sorted_keys, self._key_order, keys)
        later = [r for k in keys.tolist() if (r := self._delta_keys.get(k)) is not None]
        rows = np.concatenate((base, np.asarray(later, dtype=np.int64))) if later else base
        out: npt.NDArray[np.int64] = rows[self._alive[rows]]
        return out

    def live(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ANN keys, vectors) of the live rows (views when no row is dead, else copies)."""
        if not self.dead_rows:
            return self._row_keys[: self.size], self.matrix
        alive = self._alive[: self.size]
        return self._row_keys[: self.size][alive], self.matrix[alive]

    # -- patches -------------------------------------------------------------------------------------------
    def patch(self, note: NoteEntry, hidden: Hidden) -> bool:
        """Put ``note`` in place of its previous version (if any), in O(its chunks). False when the spare rows
        are used up or dead rows are too many: the caller assembles anew instead (this object is then unusable)."""
        k = len(note.chunks)
        if self.size + k > self._cap or len(self.notes) >= self._note_cap or not self.kill(note.path):
            return False
        start, stop, pos = self.size, self.size + k, len(self.notes)
        self.notes.append(note)
        if note.centroid is not None:
            self._note_vectors[pos] = note.centroid
        self._daily[pos] = daily_date(note.path) is not None
        if k:
            self._matrix[start:stop] = note.matrix
            note.matrix = self._matrix[start:stop]
            self.rows.extend((note, c) for c in note.chunks)
            self._note_of_row[start:stop] = pos
            self._kinds[start:stop] = [c.kind for c in note.chunks]
            self._set_near(start, np.zeros(k, dtype=np.int64))
            self._row_keys[start:stop] = note.keys
            self._delta_keys.update(zip(note.keys.tolist(), range(start, stop), strict=True))
            self._alive[start:stop] = True
            self._row_slots[start:stop] = self._lexical.slots(note.path)
            if self._slots_generation == self._lexical.generation:
                self._map_slots(slice(start, stop), alive=True)
            else:  # the lexical index was rebuilt: the next bm25 call gathers every slot anew
                self._slot_rows = None
        self.spans[note.path] = Span(pos, start, stop)
        self.size = stop
        self.live_rows += k
        self._visible[start:stop] = True
        self._show(note.path, hidden)
        return True

    def kill(self, path: str) -> bool:
        """Take note ``path``'s rows out of every search (no-op if absent), in O(its chunks). False when dead rows
        pass REBUILD_SHARE of the live ones (the caller assembles anew)."""
        span = self.spans.pop(path, None)
        if span is not None and span.stop > span.start:
            rows = slice(span.start, span.stop)
            self.invisible += int(np.count_nonzero(self._visible[rows]))
            self._visible[rows] = False
            self._alive[rows] = False
            self._map_slots(rows, alive=False)
            self._row_slots[rows] = 0  # a slot that exists after any rebuild of the lexical index
            for key, row in zip(self._row_keys[rows].tolist(), range(span.start, span.stop), strict=True):
                if self._delta_keys.get(key) == row:
                    del self._delta_keys[key]
            self.dead_rows += span.stop - span.start
            self.live_rows -= span.stop - span.start
        return self.dead_rows <= max(REBUILD_SHARE * self.live_rows, MIN_SPARE)

    def hide(self, paths: set[str], hidden: Hidden) -> None:
        """Apply a new hidden set to the live notes of ``paths`` (those holding a chunk whose state changed)."""
        for path in paths:
            self._show(path, hidden)

    def _show(self, path: str, hidden: Hidden) -> None:
        span = self.spans.get(path)
        if span is None or span.stop == span.start:
            return
        rows = slice(span.start, span.stop)
        before = int(np.count_nonzero(self._visible[rows]))
        note = self.notes[span.note]
        self._visible[rows] = [(path, c.text_md5) not in hidden for c in note.chunks] if hidden else True
        self.invisible += before - int(np.count_nonzero(self._visible[rows]))


def filter_mask(asm: Assembled, f: IndexQuery) -> npt.NDArray[np.bool_] | None:
    """Rows that pass the filters of ``f`` (None: no filter). Note-level tests run once per note, not per chunk."""
    if f.unfiltered:
        return None

    def keep(note: NoteEntry) -> bool:
        return f.admits_note(note.path, note.tags, note.date)

    notes_kept = np.fromiter((keep(n) for n in asm.notes), dtype=bool, count=len(asm.notes))
    mask: npt.NDArray[np.bool_] = notes_kept[asm.note_of_row]
    if f.filters.kind:
        mask &= asm.kinds == f.filters.kind
    return mask


def filter_rows(asm: Assembled, rows: npt.NDArray[np.int64], f: IndexQuery) -> npt.NDArray[np.bool_] | None:
    """Which of the live ``rows`` a search may return: visible (not hidden) and passing the filters of ``f``; None
    when all may.
    Like ``filter_mask`` and ``visible`` restricted to ``rows``, in O(len(rows)) (the HNSW path)."""
    visible = asm.visible()
    mask = None if visible is None else visible[rows]
    if f.unfiltered:
        return mask
    notes, inverse = np.unique(asm.note_of_row[rows], return_inverse=True)
    admits = (f.admits_note(n.path, n.tags, n.date) for n in (asm.notes[i] for i in notes.tolist()))
    kept: npt.NDArray[np.bool_] = np.fromiter(admits, dtype=bool, count=len(notes))[inverse.reshape(-1)]
    if f.filters.kind:
        kept &= asm.kinds[rows] == f.filters.kind
    return kept if mask is None else mask & kept
