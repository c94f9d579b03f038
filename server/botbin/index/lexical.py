"""Incremental BM25: per-term postings patched per note, so adding, replacing or removing a note costs in
proportion to that note; idf and average length come from totals kept up to date and are applied at query time.

Scores equal bm25s's ``method="lucene"`` with ``K1`` / ``B`` of bm25.py (the index before this one; a test holds
them within 1e-5 on the Obsidian help vault): for each query term occurrence t (repeats count again),
``idf(t) * tf / (tf + k1 * (1 - b + b * len / avg_len))`` with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``,
N every chunk (token-less ones too), in float32 like bm25s.

Each chunk gets a slot number, never reused: a removed note's postings stay behind as dead slots (scored, then
dropped by the row gather) until they outnumber the live ones, when everything is compacted once (amortized
O(1) per removed posting)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from botbin.index.bm25 import K1, B


@dataclass(frozen=True)
class _NoteTerms:
    slots: npt.NDArray[np.int32]
    """Slot of each chunk of the note, in chunk order."""
    tokens: tuple[npt.NDArray[np.int32], ...]
    """The caller's term-id arrays (shared, not copied): what ``remove`` and compaction read back."""


def _distinct(chunk: npt.NDArray[np.int32]) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    ids, counts = np.unique(chunk, return_counts=True)
    return ids, counts


class LexicalIndex:
    """BM25 postings of every chunk, patched per note. Not thread-safe (the store's lock covers it).

    Memory: 8 bytes per (chunk, distinct term) posting (int32 slot, float32 count), plus 8 per slot; the
    token arrays themselves are the caller's."""

    def __init__(self, vocab: dict[str, int]) -> None:
        """``vocab``: token -> id, shared with the caller, which adds new tokens before ``put``."""
        self._vocab = vocab
        self._notes: dict[str, _NoteTerms] = {}
        self._post_slots: dict[int, array[int]] = {}
        """Term id -> slots holding it (live and dead), in insertion order."""
        self._post_tfs: dict[int, array[float]] = {}
        """Term id -> its count in each of those slots."""
        self._slot_len = array("q")
        """Tokens in each slot's chunk (dead slots keep theirs)."""
        self._df = np.zeros(0, dtype=np.int64)
        """Live chunks holding each term id."""
        self._docs = 0
        self._total_len = 0
        self._live_postings = 0
        self._dead_postings = 0

    @property
    def chunk_count(self) -> int:
        """Live chunks indexed (N of the idf)."""
        return self._docs

    @property
    def slot_count(self) -> int:
        """Slots handed out since the last compaction, live and dead."""
        return len(self._slot_len)

    def slots(self, path: str) -> npt.NDArray[np.int32]:
        """Slot of each chunk of note ``path``, in chunk order (empty if absent)."""
        entry = self._notes.get(path)
        return entry.slots if entry is not None else np.zeros(0, dtype=np.int32)

    def put(self, path: str, tokens: Sequence[npt.NDArray[np.int32]]) -> None:
        """Index note ``path`` (replacing its previous version): ``tokens`` holds one array of term ids per
        chunk, ids from the shared vocab; the arrays are kept by reference and must not be changed
        afterwards. Costs O(tokens of the note) (plus a rare compaction)."""
        self.remove(path)
        self._insert(path, tuple(tokens))

    def _insert(self, path: str, tokens: tuple[npt.NDArray[np.int32], ...]) -> None:
        start = len(self._slot_len)
        if len(self._df) < len(self._vocab):
            grown = np.zeros(max(len(self._vocab), 2 * len(self._df)), dtype=np.int64)
            grown[: len(self._df)] = self._df
            self._df = grown
        for slot, chunk in enumerate(tokens, start):
            ids, counts = _distinct(chunk)
            for term, count in zip(ids.tolist(), counts.tolist(), strict=True):
                post = self._post_slots.get(term)
                if post is None:
                    post = self._post_slots[term] = array("i")
                    self._post_tfs[term] = array("f")
                post.append(slot)
                self._post_tfs[term].append(count)
            self._df[ids] += 1
            self._live_postings += len(ids)
            self._slot_len.append(len(chunk))
            self._total_len += len(chunk)
        self._docs += len(tokens)
        self._notes[path] = _NoteTerms(np.arange(start, start + len(tokens), dtype=np.int32), tokens)

    def remove(self, path: str) -> None:
        """Drop note ``path`` (no-op if absent). O(tokens of the note), plus a rare compaction."""
        old = self._notes.pop(path, None)
        if old is None:
            return
        for chunk in old.tokens:
            ids = _distinct(chunk)[0]
            self._df[ids] -= 1
            self._live_postings -= len(ids)
            self._dead_postings += len(ids)
            self._total_len -= len(chunk)
        self._docs -= len(old.tokens)
        if self._dead_postings > max(self._live_postings, 4096):
            self._compact()

    def _compact(self) -> None:
        """Rebuild every posting list from the live notes only, with new slots: O(corpus), once per as many
        removed postings as there are live ones."""
        notes = self._notes
        self._notes, self._post_slots, self._post_tfs = {}, {}, {}
        self._slot_len = array("q")
        self._df[:] = 0
        self._docs = self._total_len = self._live_postings = self._dead_postings = 0
        for path, entry in notes.items():
            self._insert(path, entry.tokens)

    def slot_scores(self, query: list[str]) -> npt.NDArray[np.float32]:
        """float32 (slot_count,): BM25 score of each slot for ``query`` tokens (unknown ones ignored; dead
        slots get scores too, which callers drop by gathering live slots only)."""
        out = np.zeros(len(self._slot_len), dtype=np.float32)
        if self._docs == 0 or self._total_len == 0:
            return out
        avg_len = self._total_len / self._docs
        lengths = np.frombuffer(self._slot_len, dtype=np.int64)
        for token in query:
            term = self._vocab.get(token)
            post = self._post_slots.get(term) if term is not None else None
            if term is None or post is None or term >= len(self._df) or self._df[term] == 0:
                continue
            df = int(self._df[term])
            idf = float(np.float32(np.log(1 + (self._docs - df + 0.5) / (df + 0.5))))
            slots = np.frombuffer(post, dtype=np.int32)
            tfs = np.frombuffer(self._post_tfs[term], dtype=np.float32).astype(np.float64)
            # As bm25s computes each posting: float64 arithmetic with a float32 idf, rounded to float32, then
            # summed in float32 in query order; so the scores match to the last bit or two.
            norm = K1 * ((1 - B) + B * lengths[slots] / avg_len)
            out[slots] += (idf * (tfs / (norm + tfs))).astype(np.float32)
        return out


class LexicalView:
    """BM25 scores in an assembled index's row order: the rows' slots, gathered once per assembly."""

    def __init__(self, index: LexicalIndex, paths: Sequence[str]) -> None:
        """``paths``: the notes in row order (each contributes its chunks' rows in chunk order)."""
        self._index = index
        parts = [index.slots(p) for p in paths]
        self._row_slots = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
        self.size = len(self._row_slots)

    def scores(self, query: list[str]) -> npt.NDArray[np.float32]:
        """float32 (size,): BM25 score of each row for ``query`` tokens; zeros if no token is known."""
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        return self._index.slot_scores(query)[self._row_slots]
