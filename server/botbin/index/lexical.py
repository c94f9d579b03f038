"""Incremental BM25: adding, replacing or removing a note costs in proportion to that note; idf and average length
come from totals kept up to date and are applied at query time.

Scores equal bm25s's ``method="lucene"`` with ``K1`` / ``B`` of bm25.py (the index before this one; a test holds
them within 1e-5 on the Obsidian help vault): for each query term occurrence t (repeats count again),
``idf(t) * tf / (tf + k1 * (1 - b + b * len / avg_len))`` with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``,
N every chunk (token-less ones too), in float32 like bm25s.

Layout: each chunk has a slot. Postings live in a *main* segment (term-sorted numpy arrays, built in one
vectorized pass) and a *delta* (per-term growable arrays, appended per note). ``put`` only queues the note; the
first query after changes flushes the queue: a few notes go to the delta (O(their tokens)), while a large batch
(index load) or an accumulation of delta and removed postings past ``REBUILD_SHARE`` of the live ones rebuilds
the main segment from every live note in one numpy pass (amortized O(1) per posting). A removed note's postings
stay as dead slots (scored, then dropped by the row gather) until that rebuild."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from botbin.index.bm25 import K1, B

REBUILD_SHARE = 0.25
"""Rebuild the main segment when delta, dead and queued postings exceed this share of the live ones."""
MIN_REBUILD_POSTINGS = 50_000
"""...and exceed this many (below it, appending to the delta is cheaper than any rebuild)."""

Tokens = tuple[npt.NDArray[np.int32], ...]


@dataclass(frozen=True)
class _NoteTerms:
    slots: npt.NDArray[np.int32]
    """Slot of each chunk of the note, in chunk order."""
    tokens: Tokens
    """The caller's term-id arrays (shared, not copied): what ``remove`` and rebuilds read back."""


@dataclass(frozen=True)
class MainSegment:
    """Postings of a list of chunks (slot i: chunk i), term-major."""

    indptr: npt.NDArray[np.int64]
    """(n_terms + 1,): the postings of term t at [indptr[t], indptr[t + 1])."""
    slots: npt.NDArray[np.int32]
    """Slot of each posting, ascending within a term."""
    tfs: npt.NDArray[np.float32]
    """Count of the term in the slot's chunk."""
    lengths: npt.NDArray[np.int64]
    """Tokens in each chunk."""


def main_segment(chunks: Sequence[npt.NDArray[np.int32]], n_terms: int) -> MainSegment:
    """The main segment of ``chunks`` (term ids < ``n_terms``) in one vectorized pass."""
    lengths = np.fromiter((len(c) for c in chunks), dtype=np.int64, count=len(chunks))
    terms = np.concatenate(chunks).astype(np.int64) if len(chunks) else np.zeros(0, dtype=np.int64)
    return flat_main_segment(terms, lengths, n_terms)


def flat_main_segment(terms: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64], n_terms: int) -> MainSegment:
    """``main_segment`` of the chunks laid end to end in ``terms``, chunk i holding ``lengths[i]`` ids."""
    owners = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    width = max(len(lengths), 1)
    # One sort of term * width + slot gives the postings term-major, slots ascending, and counts per pair.
    pairs, counts = np.unique(terms * width + owners, return_counts=True)
    df = np.bincount(pairs // width, minlength=n_terms).astype(np.int64)
    indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
    return MainSegment(indptr, (pairs % width).astype(np.int32), counts.astype(np.float32), lengths)


class LexicalIndex:
    """BM25 postings of every chunk, patched per note. Not thread-safe (the store's lock covers it).

    Memory: 8 bytes per (chunk, distinct term) posting (int32 slot, float32 count) and 8 per slot; the token
    arrays themselves are the caller's."""

    def __init__(self, vocab: dict[str, int]) -> None:
        """``vocab``: token -> id, shared with the caller, which adds new tokens before ``put``."""
        self._vocab = vocab
        self._notes: dict[str, _NoteTerms] = {}
        self._queued: dict[str, Tokens] = {}
        self._queued_tokens = 0
        self._queued_chunks = 0
        self._indptr = np.zeros(1, dtype=np.int64)
        """Main segment: postings of term t at [indptr[t], indptr[t + 1])."""
        self._main_slots = np.zeros(0, dtype=np.int32)
        self._main_tfs = np.zeros(0, dtype=np.float32)
        self._delta: dict[int, tuple[array[int], array[float]]] = {}
        """Term id -> (slots, counts) appended since the last rebuild."""
        self._slot_len = array("q")
        """Tokens in each slot's chunk (dead slots keep theirs)."""
        self._df = np.zeros(0, dtype=np.int64)
        """Live chunks holding each term id."""
        self._docs = 0
        self._total_len = 0
        self._live_postings = 0
        self._stale_postings = 0
        """Delta and dead postings: what a rebuild would fold in or drop."""
        self._scored: dict[int, list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]]] = {}
        """Term id -> its postings' scores (slots, float32) under the current totals; cleared by any change."""
        self.generation = 0
        """Bumped by every rebuild, which renumbers the slots (holders of slots gather them anew)."""

    @property
    def chunk_count(self) -> int:
        """Live chunks, queued ones included (N of the idf once flushed)."""
        return self._docs + self._queued_chunks

    @property
    def slot_count(self) -> int:
        """Slots handed out since the last rebuild, live and dead."""
        self.flush()
        return len(self._slot_len)

    def put(self, path: str, tokens: Sequence[npt.NDArray[np.int32]]) -> None:
        """Queue note ``path`` (replacing its previous version): one array of term ids per chunk, ids from the
        shared vocab, kept by reference (they must not change afterwards). O(1); the next query indexes it."""
        self.remove(path)
        self._scored.clear()
        self._queued[path] = tuple(tokens)
        self._queued_chunks += len(tokens)
        self._queued_tokens += sum(len(c) for c in tokens)

    def remove(self, path: str) -> None:
        """Drop note ``path`` (no-op if absent). O(tokens of the note)."""
        queued = self._queued.pop(path, None)
        if queued is not None:
            self._queued_chunks -= len(queued)
            self._queued_tokens -= sum(len(c) for c in queued)
            return
        old = self._notes.pop(path, None)
        if old is None:
            return
        self._scored.clear()
        for chunk in old.tokens:
            ids = np.unique(chunk)
            self._df[ids] -= 1
            self._live_postings -= len(ids)
            self._stale_postings += len(ids)
            self._total_len -= len(chunk)
        self._docs -= len(old.tokens)

    def slots(self, path: str) -> npt.NDArray[np.int32]:
        """Slot of each chunk of note ``path``, in chunk order (empty if absent). Flushes the queue."""
        self.flush()
        entry = self._notes.get(path)
        return entry.slots if entry is not None else np.zeros(0, dtype=np.int32)

    def row_slots(self, paths: Sequence[str]) -> npt.NDArray[np.int32]:
        """The slots of every chunk of ``paths``, note after note (absent notes contribute none)."""
        self.flush()
        empty = np.zeros(0, dtype=np.int32)
        parts = [e.slots if (e := self._notes.get(p)) is not None else empty for p in paths]
        return np.concatenate(parts) if parts else empty

    def flush(self) -> None:
        """Index the queued notes: into the delta, or by one rebuild when that is cheaper (see module doc)."""
        if not self._queued:
            return
        if self._stale_postings + self._queued_tokens > max(REBUILD_SHARE * self._live_postings, MIN_REBUILD_POSTINGS):
            self._rebuild()
            return
        self._grow_df()
        for path, tokens in self._queued.items():
            self._append(path, tokens)
        self._queued.clear()
        self._queued_chunks = self._queued_tokens = 0

    def _grow_df(self) -> None:
        if len(self._df) < len(self._vocab):
            grown = np.zeros(max(len(self._vocab), 2 * len(self._df)), dtype=np.int64)
            grown[: len(self._df)] = self._df
            self._df = grown

    def _append(self, path: str, tokens: Tokens) -> None:
        start = len(self._slot_len)
        for slot, chunk in enumerate(tokens, start):
            ids, counts = np.unique(chunk, return_counts=True)
            for term, count in zip(ids.tolist(), counts.tolist(), strict=True):
                post = self._delta.get(term)
                if post is None:
                    post = self._delta[term] = (array("i"), array("f"))
                post[0].append(slot)
                post[1].append(count)
            self._df[ids] += 1
            self._live_postings += len(ids)
            self._stale_postings += len(ids)
            self._slot_len.append(len(chunk))
            self._total_len += len(chunk)
        self._docs += len(tokens)
        self._notes[path] = _NoteTerms(np.arange(start, start + len(tokens), dtype=np.int32), tokens)

    def _rebuild(self) -> None:
        """Every live note into a new main segment, new slots in note order: one vectorized pass."""
        notes = {p: e.tokens for p, e in self._notes.items()} | self._queued
        self._install(notes, main_segment([c for tokens in notes.values() for c in tokens], len(self._vocab)))

    def adopt(self, paths: Sequence[str], main: MainSegment) -> bool:
        """Take ``main`` (``main_segment`` of the chunks of ``paths``, note after note, built elsewhere: the load
        cache) as the main segment instead of the rebuild the next query would do; only when the queue holds
        exactly ``paths``, in that order, and nothing else is indexed. False (nothing changed) otherwise."""
        if self._notes or list(self._queued) != list(paths) or len(main.indptr) != len(self._vocab) + 1:
            return False
        if len(main.lengths) != self._queued_chunks:
            return False
        self._install(dict(self._queued), main)
        return True

    def _install(self, notes: dict[str, Tokens], main: MainSegment) -> None:
        self.generation += 1
        self._queued, self._queued_chunks, self._queued_tokens = {}, 0, 0
        self._delta, self._notes = {}, {}
        self._indptr, self._main_slots, self._main_tfs = main.indptr, main.slots, main.tfs
        self._df = np.diff(main.indptr).astype(np.int64)
        self._slot_len = array("q", main.lengths.tobytes()) if len(main.lengths) else array("q")
        self._docs, self._total_len = len(main.lengths), int(main.lengths.sum())
        self._live_postings, self._stale_postings = len(main.slots), 0
        start = 0
        for path, tokens in notes.items():
            self._notes[path] = _NoteTerms(np.arange(start, start + len(tokens), dtype=np.int32), tokens)
            start += len(tokens)

    def _postings(self, term: int) -> list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]]:
        parts = []
        if term + 1 < len(self._indptr) and self._indptr[term] < self._indptr[term + 1]:
            lo, hi = int(self._indptr[term]), int(self._indptr[term + 1])
            parts.append((self._main_slots[lo:hi], self._main_tfs[lo:hi]))
        delta = self._delta.get(term)
        if delta is not None:
            # copies, not buffer views: a view would forbid the next append to these arrays
            parts.append((np.array(delta[0], dtype=np.int32), np.array(delta[1], dtype=np.float32)))
        return parts

    def _term_scores(self, term: int) -> list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]]:
        """(slots, scores) of ``term``'s postings under the current totals, cached until the next change."""
        cached = self._scored.get(term)
        if cached is not None:
            return cached
        df = int(self._df[term])
        idf = float(np.float32(np.log(1 + (self._docs - df + 0.5) / (df + 0.5))))
        avg_len = self._total_len / self._docs
        lengths = np.frombuffer(self._slot_len, dtype=np.int64)
        out = []
        for slots, tfs32 in self._postings(term):
            tfs = tfs32.astype(np.float64)
            # As bm25s computes each posting: float64 arithmetic with a float32 idf, rounded to float32 (then
            # summed in float32 in query order), so the scores match to the last bit or two.
            norm = K1 * ((1 - B) + B * lengths[slots] / avg_len)
            out.append((slots, (idf * (tfs / (norm + tfs))).astype(np.float32)))
        if len(self._scored) >= 4096:  # bound the cache (distinct query terms between two changes)
            self._scored.clear()
        self._scored[term] = out
        return out

    def idf(self, query: list[str]) -> dict[str, float]:
        """Lucene's IDF, ``ln(1 + (N - df + 0.5) / (df + 0.5))``, of each known term of ``query`` (the weights
        that place a snippet); terms in no live chunk are left out."""
        self.flush()
        out: dict[str, float] = {}
        for token in query:
            term = self._vocab.get(token)
            if term is not None and term < len(self._df) and self._df[term] > 0:
                df = int(self._df[term])
                out[token] = float(np.log1p((self._docs - df + 0.5) / (df + 0.5)))
        return out

    def idf_mass(self, query: list[str]) -> float:
        """The most BM25 score a chunk could reach for ``query``: the sum, over its term occurrences (a repeat
        counts again), of Lucene's IDF, a term in no live chunk counting with the largest, ``ln(1 + (N + 0.5) /
        0.5)`` (each term's score is at most its IDF, since ``tf / (tf + k1 * norm)`` < 1)."""
        self.flush()
        total = 0.0
        for token in query:
            term = self._vocab.get(token)
            df = int(self._df[term]) if term is not None and term < len(self._df) else 0
            total += float(np.log1p((self._docs - df + 0.5) / (df + 0.5)))
        return total

    def matchable_mass(self, query: list[str]) -> float:
        """``idf_mass`` over the term occurrences of ``query`` that some live chunk holds: a term in no chunk tells
        no chunk apart, so it does not raise the bar of a full keyword match (ranking.keyword_full)."""
        self.flush()
        total = 0.0
        for token in query:
            term = self._vocab.get(token)
            df = int(self._df[term]) if term is not None and term < len(self._df) else 0
            if df:
                total += float(np.log1p((self._docs - df + 0.5) / (df + 0.5)))
        return total

    def slot_scores(self, query: list[str]) -> npt.NDArray[np.float32]:
        """float32 (slot_count,): BM25 score of each slot for ``query`` tokens (unknown ones ignored; dead
        slots get scores too, which callers drop by gathering live slots only)."""
        self.flush()
        out = np.zeros(len(self._slot_len), dtype=np.float32)
        if self._docs == 0 or self._total_len == 0:
            return out
        for token in query:
            term = self._vocab.get(token)
            if term is None or term >= len(self._df) or self._df[term] == 0:
                continue
            for slots, scores in self._term_scores(term):
                if 16 * len(slots) > len(out):  # a common term: bincount beats a scattered add
                    out += np.bincount(slots, weights=scores, minlength=len(out)).astype(np.float32)
                else:
                    out[slots] += scores
        return out

    def sparse_scores(
        self, query: list[str], limit: int
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]] | None:
        """The slots (sorted) holding any of ``query``'s tokens and their BM25 scores, equal to ``slot_scores``'s
        there to the last bit (the same float32 sums in the same order), in O(postings log postings) instead of
        O(slots): what the HNSW path reads. None when the query's postings pass ``limit`` (a common term: the
        dense ``slot_scores`` is cheaper then)."""
        self.flush()
        parts: list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]] = []
        if self._docs and self._total_len:
            for token in query:
                term = self._vocab.get(token)
                if term is not None and term < len(self._df) and self._df[term] > 0:
                    parts.extend(self._term_scores(term))
        if sum(len(slots) for slots, _ in parts) > limit:
            return None
        if not parts:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        held = np.unique(np.concatenate([slots for slots, _ in parts]))
        out = np.zeros(len(held), dtype=np.float32)
        for slots, scores in parts:  # a term's postings name each slot once: a plain scattered add
            out[np.searchsorted(held, slots)] += scores
        return held, out


class LexicalView:
    """BM25 scores in an assembled index's row order: the rows' slots, gathered once per assembly."""

    def __init__(self, index: LexicalIndex, paths: Sequence[str]) -> None:
        """``paths``: the notes in row order (each contributes its chunks' rows in chunk order)."""
        self._index = index
        self._row_slots = index.row_slots(paths)
        self.size = len(self._row_slots)

    def idf(self, query: list[str]) -> dict[str, float]:
        """IDF of each known term of ``query`` (``LexicalIndex.idf``)."""
        return self._index.idf(query)

    def idf_mass(self, query: list[str]) -> float:
        """The most BM25 score a chunk could reach for ``query`` (``LexicalIndex.idf_mass``)."""
        return self._index.idf_mass(query)

    def scores(self, query: list[str]) -> npt.NDArray[np.float32]:
        """float32 (size,): BM25 score of each row for ``query`` tokens; zeros if no token is known."""
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        return self._index.slot_scores(query)[self._row_slots]
