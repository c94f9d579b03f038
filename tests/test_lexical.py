"""Incremental BM25 (index/lexical.py): the same scores as a full bm25s rebuild after any sequence of note
additions, replacements and removals, on the Obsidian help vault; compaction; empty cases."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from botbin.index import lexical
from botbin.index.bm25 import Bm25Index
from botbin.index.lexical import LexicalIndex, LexicalView
from botbin.index.tokenize import bm25_terms
from conftest import OBSIDIAN_HELP

REPO = Path(__file__).resolve().parents[1]
Tokens = tuple[npt.NDArray[np.int32], ...]


def note_tokens(text: str, vocab: dict[str, int]) -> Tokens:
    """One token-id array per paragraph (a stand-in for chunks), new terms added to ``vocab``."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()] or [""]
    return tuple(
        np.fromiter((vocab.setdefault(t, len(vocab)) for t in bm25_terms(p)), dtype=np.int32) for p in paragraphs
    )


def queries() -> list[str]:
    rows = [json.loads(x) for x in (REPO / "bench" / "data" / "obsidian_queries.jsonl").read_text().splitlines() if x]
    return [str(r["q"]) for r in rows] + ["the the of", "obsidian obsidian sync", "nonexistentword", ""]


def assert_same_scores(lex: LexicalIndex, notes: dict[str, Tokens], vocab: dict[str, int]) -> None:
    order = sorted(notes)
    reference = Bm25Index([t.tolist() for p in order for t in notes[p]], vocab)
    view = LexicalView(lex, order)
    assert view.size == reference.size
    for q in queries():
        terms = bm25_terms(q)
        expected, got = reference.scores(terms), view.scores(terms)
        assert got.dtype == np.float32
        assert np.allclose(got, expected, rtol=0, atol=1e-5), (q, float(np.abs(got - expected).max()))


@pytest.mark.skipif(not OBSIDIAN_HELP.is_dir(), reason="../shared/data/obsidian-help is absent")
def test_incremental_scores_equal_a_full_rebuild_on_the_obsidian_vault() -> None:
    vocab: dict[str, int] = {}
    texts = {str(p.relative_to(OBSIDIAN_HELP)): p.read_text(encoding="utf-8") for p in OBSIDIAN_HELP.rglob("*.md")}
    lex, notes = LexicalIndex(vocab), {}
    for path, text in texts.items():
        notes[path] = note_tokens(text, vocab)
        lex.put(path, notes[path])
    assert lex.chunk_count == sum(len(t) for t in notes.values())
    assert_same_scores(lex, notes, vocab)
    rng = random.Random(21)
    paths = sorted(texts)
    for step in range(60):  # replace (edited text), remove, re-add
        path = rng.choice(paths)
        if path in notes and step % 3 == 0:
            del notes[path]
            lex.remove(path)
        else:
            words = texts[path].split()
            rng.shuffle(words)
            notes[path] = note_tokens(" ".join(words[: rng.randint(0, len(words))]) + "\n\nnewterm" + str(step), vocab)
            lex.put(path, notes[path])
        lex.flush()  # as a search after each save does: one note at a time into the delta
        if step == 30:
            assert_same_scores(lex, notes, vocab)
    assert lex.slot_count > lex.chunk_count  # the edits went through the delta (dead slots remain)
    assert_same_scores(lex, notes, vocab)


def test_rebuilds_keep_scores_and_free_dead_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexical, "MIN_REBUILD_POSTINGS", 0)  # a tiny corpus: rebuild on REBUILD_SHARE alone
    vocab: dict[str, int] = {}
    lex, notes = LexicalIndex(vocab), {}
    for i in range(50):
        notes[f"n{i}.md"] = note_tokens(f"alpha beta {i}\n\ngamma delta word{i % 7} " * 30, vocab)
        lex.put(f"n{i}.md", notes[f"n{i}.md"])
    for _round in range(40):  # replaced postings pile up as delta and dead slots until a rebuild
        for i in range(0, 50, 5):
            notes[f"n{i}.md"] = note_tokens(f"alpha epsilon {_round} word{i}\n\nbeta " * 20, vocab)
            lex.put(f"n{i}.md", notes[f"n{i}.md"])
        lex.flush()
        if _round % 10 == 9:
            assert_same_scores(lex, notes, vocab)
    assert lex.slot_count < 2 * lex.chunk_count  # rebuilt at least once


def test_empty_and_token_less_corpora_score_zero() -> None:
    vocab: dict[str, int] = {}
    lex = LexicalIndex(vocab)
    assert LexicalView(lex, []).scores(["a"]).shape == (0,)
    lex.put("empty.md", (np.zeros(0, dtype=np.int32),))
    view = LexicalView(lex, ["empty.md"])
    assert view.scores(["anything"]).tolist() == [0.0]
    lex.remove("empty.md")
    lex.remove("never-added.md")
    assert lex.chunk_count == 0


def test_sparse_scores_equal_the_dense_ones_at_their_slots() -> None:
    # Issue 21: the HNSW path reads BM25 from the query terms' postings; the same float32 sums, to the last bit,
    # through the delta, dead slots and a repeated query term.
    vocab: dict[str, int] = {}
    lex = LexicalIndex(vocab)
    for i in range(40):
        lex.put(f"n{i}.md", note_tokens(f"alpha beta {i}\n\ngamma delta word{i % 7}\n\nepsilon{i % 3} " * 3, vocab))
    lex.flush()
    for i in range(0, 40, 4):  # edits into the delta; their old postings stay as dead slots
        lex.put(f"n{i}.md", note_tokens(f"alpha word{i % 5} zeta\n\ndelta", vocab))
    for query in (["alpha"], ["word3", "zeta", "word3"], ["epsilon1", "delta", "unknown"], []):
        dense = lex.slot_scores(query)
        found = lex.sparse_scores(query, limit=10**6)
        assert found is not None
        slots, scores = found
        assert slots.tolist() == np.flatnonzero(dense).tolist()
        assert scores.tobytes() == dense[slots].tobytes(), query
    assert lex.sparse_scores(["alpha"], limit=10) is None  # a common term: the caller takes the dense scores


def test_matchable_mass_leaves_out_terms_no_chunk_holds() -> None:
    vocab = {"cat": 0, "dog": 1, "the": 2}
    index = lexical.LexicalIndex(vocab)
    index.put("a.md", [np.array([0, 2], dtype=np.int32), np.array([1, 2], dtype=np.int32)])
    idf = index.idf(["cat", "the"])
    assert index.matchable_mass(["cat", "cat", "the", "zebra"]) == pytest.approx(2 * idf["cat"] + idf["the"])
    assert index.matchable_mass(["zebra"]) == 0.0 < index.idf_mass(["zebra"])
    assert index.matchable_mass([]) == 0.0
