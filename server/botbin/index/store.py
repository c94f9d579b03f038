"""The in-memory index: per-note entries (index/entry.py), assembled on demand into one float32 matrix and
patched per note afterwards (index/assembled.py), BM25 postings patched per note (index/lexical.py); what a
search takes and gives is in index/hits.py."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from botbin.aifbin import AifBinDocument
from botbin.directives.partition import Directive
from botbin.index.ann import AnnIndex
from botbin.index.ann_live import AnnConfig, LiveAnn
from botbin.index.assembled import Assembled
from botbin.index.entry import NoteEntry, note_from
from botbin.index.hits import ChunkRef, Hit, IndexQuery
from botbin.index.lexical import LexicalIndex, MainSegment
from botbin.index.load_cache import searched
from botbin.index.ranking import bm25_share, keyword_floor
from botbin.index.search_rows import Query, ann_ranked, exact_ranked
from botbin.index.snippet import note_snippet
from botbin.index.tokenize import bm25_terms

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

_NO_KEYS = np.zeros(0, dtype=np.int64)


class MemoryIndex:
    """All chunks of a workspace in memory; patched per note, assembled lazily before a search."""

    def __init__(self, dim: int | None, ann: AnnConfig | None = None) -> None:
        """``dim``: embedding size (384 for all-MiniLM-L6-v2); None takes it from the first note added.
        ``ann``: where and from what size the HNSW index serves the vector side (default: ann.ANN_MIN_ROWS,
        memory only)."""
        self.dim = dim
        self._ann_config = ann or AnnConfig()
        self._ann: LiveAnn | None = None
        self._notes: dict[str, NoteEntry] = {}
        self._vocab: dict[str, int] = {}
        self._lexical = LexicalIndex(self._vocab)
        """BM25 postings, patched per note (no rebuild at assembly)."""
        self._assembled: Assembled | None = None
        """What searches read, patched per note (index/assembled.py); None until the next search assembles it."""
        self._hidden: frozenset[tuple[str, str]] = frozenset()
        self._ruled: dict[str, tuple[Directive, ...]] = {}
        """Directives of the notes that hold any, by path: a save of a note without rules leaves them be."""
        self._rules: list[Directive] | None = None
        """``directives()``, kept until a note with rules (before or after the change) changes."""
        self._chunk_count = 0
        self.version = 0
        """Bumped by every upsert and removal (``changed_since``)."""
        self._log: list[str] = []
        """Path changed at each version after ``_log_base`` (bounded: older changes are forgotten)."""
        self._log_base = 0
        self.layout = 0
        """Bumped by every full assembly, which renumbers ``ChunkRef.row``."""

    def __len__(self) -> int:
        """Number of chunks; O(1) (a search asks several times, and summing over 10,000 notes took ~2 ms)."""
        return self._chunk_count

    @property
    def note_count(self) -> int:
        return len(self._notes)

    def seed_vocab(self, terms: list[str]) -> None:
        """Number ``terms`` 0, 1, ... in this index's BM25 vocabulary (a load cache's token ids then hold); only
        on an index with no vocabulary yet. Raises ValueError otherwise."""
        if self._vocab:
            raise ValueError("seed_vocab on an index that already has a vocabulary")
        self._vocab.update(zip(terms, range(len(terms)), strict=True))

    def adopt_lexical(self, paths: list[str], main: MainSegment) -> bool:
        """Take ``main`` as the BM25 main segment of the notes ``paths`` just put, in that order
        (``LexicalIndex.adopt``); False, nothing changed, when they are not exactly the notes put."""
        return self._lexical.adopt(paths, main)

    def vocab_terms(self) -> list[str]:
        """Every BM25 term, in id order (term i has id i)."""
        return list(self._vocab)

    def entries(self) -> list[NoteEntry]:
        """Every note's entry, by path (shared, not copied: treat as read-only)."""
        return [self._notes[p] for p in sorted(self._notes)]

    def upsert(self, doc: AifBinDocument) -> NoteEntry:
        """Add or replace the note of ``doc``; returns its entry. Raises ValueError if its dimension differs."""
        if self.dim is None:
            self.dim = doc.dim
        if doc.chunks and doc.dim != self.dim:
            raise ValueError(f"{doc.source}: embedding dim {doc.dim}, index holds {self.dim}")
        note = note_from(doc, self._vocab)
        self.put_entry(note)
        return note

    def put_entry(self, note: NoteEntry) -> None:
        """Add or replace ``note``, an entry made against this index's vocabulary (``note_from``, or the load
        cache's, whose vocabulary ``seed_vocab`` gave); its matrix has ``dim`` columns."""
        if self.dim is None and len(note.chunks):
            self.dim = int(note.matrix.shape[1])
        old = self._notes.get(note.path)
        self._chunk_count += len(note.chunks) - (len(old.chunks) if old is not None else 0)
        self._notes[note.path] = note
        self._set_rules(note.path, note.directives)
        self._changed(note.path)
        self._lexical.put(note.path, note.tokens)
        if self._assembled is not None and not self._assembled.patch(note, self._hidden):
            self._assembled = None
        if self._ann is not None:
            self._ann.patch(_NO_KEYS if old is None else old.keys, note.keys, note.matrix)

    def _changed(self, path: str) -> None:
        self.version += 1
        self._log.append(path)
        if len(self._log) > max(1024, 2 * len(self._notes)):
            half = len(self._log) // 2
            self._log, self._log_base = self._log[half:], self._log_base + half

    def changed_since(self, version: int) -> set[str] | None:
        """Paths upserted or removed after ``version`` (a past ``self.version``); None when that is too long
        ago to tell."""
        if version < self._log_base or version > self.version:
            return None
        return set(self._log[version - self._log_base :])

    @property
    def hidden(self) -> frozenset[tuple[str, str]]:
        """What ``set_hidden`` was last given."""
        return self._hidden

    def directives(self) -> list[Directive]:
        """Every hard and soft directive of the indexed notes, by path, then line; O(notes with directives)."""
        if self._rules is None:
            self._rules = [d for p in sorted(self._ruled) for d in self._ruled[p]]
        return list(self._rules)

    def _set_rules(self, path: str, rules: tuple[Directive, ...]) -> None:
        if rules or path in self._ruled:
            self._rules = None
            if rules:
                self._ruled[path] = rules
            else:
                del self._ruled[path]

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

    def chunk_refs(self, paths: set[str] | None = None) -> list[ChunkRef]:
        """Every chunk (or those of ``paths``), by path then position; ``row`` indexes ``matrix()`` until the next
        full assembly (``layout``)."""
        asm = self._assemble()
        spans = asm.spans if paths is None else {p: asm.spans[p] for p in paths if p in asm.spans}
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
                row,
            )
            for _, span in sorted(spans.items())
            for n in (asm.notes[span.note],)
            for row, c in enumerate(n.chunks, span.start)
        ]

    def matrix(self) -> npt.NDArray[np.float32]:
        """float32 (rows, dim): the embedding of each ``ChunkRef.row`` of ``chunk_refs()`` (not a copy). After a
        change it may also hold rows of replaced notes, which no ChunkRef names."""
        return self._assemble().matrix

    def set_hidden(self, keys: frozenset[tuple[str, str]]) -> None:
        """Leave the chunks keyed (path, text_md5) out of every search (archived memos). Costs in proportion to
        the notes whose chunks changed state."""
        if keys != self._hidden:
            changed = {path for path, _ in keys ^ self._hidden}
            self._hidden = keys
            if self._assembled is not None:
                self._assembled.hide(changed, keys)

    def remove(self, path: str) -> None:
        """Drop note ``path`` (no-op if absent)."""
        old = self._notes.pop(path, None)
        if old is not None:
            self._chunk_count -= len(old.chunks)
            self._set_rules(path, ())
            self._changed(path)
            self._lexical.remove(path)
            if self._assembled is not None and not self._assembled.kill(path):
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
        return self._ann_index() is not None

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
        return self._assemble().live()

    def _ann_index(self) -> AnnIndex | None:
        """The HNSW index searches take their vector candidates from, or None (the exact scan serves)."""
        live = self._live_ann()
        return None if live is None else live.ready(len(self), self._ann_snapshot)

    def _assemble(self) -> Assembled:
        if self._assembled is None:
            notes = [self._notes[p] for p in sorted(self._notes)]
            self._assembled = Assembled(notes, self._lexical, self.dim or 0, self._hidden)
            self.layout += 1
        return self._assembled

    def search(self, request: IndexQuery) -> list[Hit]:
        """The ``request.k`` best chunks for the query by hybrid score, best first (IndexQuery states each part).

        The note and neighbour weights are averaged into the score when 0 < alpha < 1 (ranking.add_context);
        alpha 1 and 0 rank by cosine alone and BM25 alone, as does a query without a vector by BM25. An empty
        index gives [].
        """
        asm = self._assemble()
        if not asm.live_rows:
            return []
        r = request
        q = None if r.query_vector is None else r.query_vector.astype(np.float32, copy=False)
        alpha = 0.0 if q is None else r.alpha
        context = q is not None and 0.0 < alpha < 1.0 and (r.note_weight > 0 or r.neighbour_weight > 0)
        terms = bm25_terms(r.query)
        floor = keyword_floor(asm.idf_mass(terms)) if context else 0.0
        ctx = (
            (asm.note_vectors, asm.note_of_row, asm.near, r.note_weight, r.neighbour_weight, floor) if context else None
        )
        cap = 1 if r.best_per_note else r.max_hits_per_note
        free = asm.daily if r.exempt_daily and not r.best_per_note else None
        ask = Query(terms, q, alpha, r.k, cap, r, ctx, free, asm.matchable_mass(terms))
        hnsw = self._ann_index() if q is not None and alpha > 0 else None
        found = None if hnsw is None else ann_ranked(asm, hnsw, ask)
        if found is None:
            found = exact_ranked(asm, ask)
        searched()  # a pending load-cache write may go now
        full = found.bm25_full
        weights = asm.idf(terms) if found.rows else {}
        mass = asm.idf_mass(terms) if found.rows else 0.0
        return [
            self._hit(
                asm, i, weights, score, raw / full if full > 0 else 0.0, bm25_share(raw, mass), _cosines(asm, i, q)
            )
            for i, score, raw in zip(found.rows, found.scores, found.bm25_raw, strict=True)
        ]

    @staticmethod
    def _hit(
        asm: Assembled,
        i: int,
        weights: dict[str, float],
        score: float,
        bm25: float,
        share: float,
        cosines: tuple[float, float, float],
    ) -> Hit:
        """The hit of row ``i``; ``cosines``: its own, its note's and its neighbours' cosine to the query."""
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
            cosine=cosines[0],
            bm25=bm25,
            date=note.date,
            instruction=note.instruction,
            text_md5=chunk.text_md5,
            snippet_start_line=shown.start_line,
            snippet_end_line=shown.end_line,
            bm25_share=share,
            note_cosine=cosines[1],
            neighbour_cosine=cosines[2],
        )


def _cosines(asm: Assembled, i: int, q: npt.NDArray[np.float32] | None) -> tuple[float, float, float]:
    """Row ``i``'s cosine to the query, its note's and its neighbours' mean (ranking.add_context's terms); zeros
    without a query vector."""
    if q is None:
        return 0.0, 0.0, 0.0
    near = asm.near
    own = float(asm.matrix[i] @ q)
    around = float(near.w_prev[i] * (asm.matrix[near.prev[i]] @ q) + near.w_next[i] * (asm.matrix[near.next[i]] @ q))
    note = float(asm.note_vectors[asm.note_of_row[i]] @ q)
    return own, note, around
