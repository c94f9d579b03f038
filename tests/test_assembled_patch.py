"""The assembled index patched per note (index/assembled.py) answers as an index built afresh from the same notes:
random upserts (new notes, edited notes keeping some chunks, emptied notes), removals and hidden sets, each
followed by searches of every kind (hybrid with the context terms, cosine alone, BM25 alone, filters, per-note
caps) compared hit by hit with a fresh MemoryIndex. Small spare and rebuild thresholds make the run cross full
re-assemblies and lexical rebuilds too. The same with the HNSW path (past a threshold of 1 row, so its candidates
are every row): its sparse BM25, slot map and candidate-only filters against the scan of a fresh index. Random
vectors and words (index-side only, no model); ~15 s on 2 busy cores."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index import assembled, lexical
from botbin.index.ann import usearch_available
from botbin.index.ann_live import AnnConfig
from botbin.index.hits import Hit, IndexQuery
from botbin.index.store import MemoryIndex
from botbin.wire.requests import SearchFilters

DIM = 16
WORDS = [f"w{i}" for i in range(60)]
KINDS = ("lore", "code", "hard")


def make_note(path: str, rng: np.random.Generator, keep: AifBinDocument | None = None) -> AifBinDocument:
    """A note of 0-5 chunks; with ``keep``, an edit of it that keeps some of its chunks as they were."""
    old = list(keep.chunks) if keep is not None else []
    records = []
    for i in range(int(rng.integers(0, 6))):
        if i < len(old) and rng.random() < 0.5:
            c = old[i]
            records.append(
                ChunkRecord(i, c.text, c.start_line, c.end_line, c.heading_path, c.kind, 10, c.text_md5, c.embedding)
            )
            continue
        text = " ".join(rng.choice(WORDS, int(rng.integers(3, 12))))
        vec = rng.standard_normal(DIM).astype(np.float32)
        vec /= np.linalg.norm(vec)
        md5 = hashlib.md5(f"{text}{i}".encode()).hexdigest()
        records.append(ChunkRecord(i, text, 3 * i, 3 * i + 2, ("H",), str(rng.choice(KINDS)), 10, md5, vec))
    tags = ["t/a"] if rng.random() < 0.5 else ["b"]
    meta = {
        "source": path,
        "model": {"name": "test", "dim": DIM},
        "note": {"title": path.rsplit("/", 1)[-1], "tags": tags, "date": f"2026-11-{rng.integers(1, 29):02d}"},
    }
    return AifBinDocument(meta, tuple(records))


def fresh(docs: dict[str, AifBinDocument], hidden: frozenset[tuple[str, str]]) -> MemoryIndex:
    index = MemoryIndex(DIM)
    for d in docs.values():
        index.upsert(d)
    index.set_hidden(hidden)
    return index


def key(hits: list[Hit]) -> list[list[tuple[str, int, str]]]:
    """The hits in runs of equal score (to 1e-5: the matrix product may differ in the last bit with the row's
    place, and the HNSW path multiplies a gathered submatrix), each run in path order, the last run left out:
    equal scores follow the rows' order, which patching changes (and so which of them make the cut at k)."""
    runs: list[list[tuple[str, int, str]]] = []
    last: float | None = None
    for h in hits:
        if last is None or abs(h.score - last) > 1e-5:
            runs.append([])
        runs[-1].append((h.path, h.start_line, h.text_md5))
        last = h.score
    return [sorted(run) for run in runs[:-1]]


def same_answers(patched: MemoryIndex, built: MemoryIndex, rng: np.random.Generator) -> None:
    q = rng.standard_normal(DIM).astype(np.float32)
    q /= np.linalg.norm(q)
    words = " ".join(rng.choice(WORDS, 2))
    cases: list[tuple[np.ndarray | None, dict[str, object]]] = [
        (q, {}),
        (q, {"alpha": 1.0, "max_hits_per_note": 0}),
        (q, {"best_per_note": True, "k": 5}),
        (q, {"filters": SearchFilters(tag="t")}),
        (q, {"filters": SearchFilters.model_construct(kind="code", path_glob="f1/*")}),  # a kind no chunk has
        (q, {"filters": SearchFilters(date_from="2026-11-10", date_to="2026-11-20")}),
        (None, {}),
    ]
    for vector, kwargs in cases:
        ask = IndexQuery(words, vector, **kwargs)  # type: ignore[arg-type]
        got, want = patched.search(ask), built.search(ask)
        assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5), kwargs
        assert key(got) == key(want), kwargs
        assert [h.bm25 for h in got] == pytest.approx([h.bm25 for h in want], abs=1e-5)


@pytest.mark.parametrize(("spare", "lexical_rebuild", "hnsw"), [(1024, 50_000, False), (4, 40, False), (4, 40, True)])
def test_patched_index_answers_as_a_fresh_one(
    monkeypatch: pytest.MonkeyPatch, spare: int, lexical_rebuild: int, hnsw: bool
) -> None:
    if hnsw and not usearch_available():
        pytest.skip("usearch is not installed")
    monkeypatch.setattr(assembled, "MIN_SPARE", spare)
    monkeypatch.setattr(lexical, "MIN_REBUILD_POSTINGS", lexical_rebuild)
    rng = np.random.default_rng(spare)
    docs = {f"f{n % 3}/n{n:03d}.md": make_note(f"f{n % 3}/n{n:03d}.md", rng) for n in range(40)}
    index = MemoryIndex(DIM, AnnConfig(min_rows=1 if hnsw else 10**9))
    for d in docs.values():
        index.upsert(d)
    index.prepare_ann()
    assert index.wait_ann(60) and index.ann_active() == hnsw
    hidden: frozenset[tuple[str, str]] = frozenset()
    same_answers(index, fresh(docs, hidden), rng)
    patched = reassembled = 0
    for step in range(80):
        before = index._assembled
        roll = rng.random()
        path = str(rng.choice(sorted(docs)))
        if roll < 0.15:
            index.remove(path)
            del docs[path]
        elif roll < 0.3:
            path = f"f{step % 3}/new{step:03d}.md"
            docs[path] = make_note(path, rng)
            index.upsert(docs[path])
        elif roll < 0.85:
            docs[path] = make_note(path, rng, keep=docs[path])
            index.upsert(docs[path])
        else:
            chunks = [(p, c.text_md5) for p, d in docs.items() for c in d.chunks]
            hidden = frozenset(chunks[i] for i in rng.choice(len(chunks), len(chunks) // 5)) if chunks else hidden
            index.set_hidden(hidden)
        if before is not None:
            patched += index._assembled is before
            reassembled += index._assembled is None
        built = fresh(docs, hidden)
        same_answers(index, built, rng)
        refs = index.chunk_refs()
        assert [(r.path, r.text_md5) for r in refs] == [(r.path, r.text_md5) for r in built.chunk_refs()]
        vectors = {(p, c.text_md5): c.embedding for p, d in docs.items() for c in d.chunks}
        assert all(np.array_equal(index.matrix()[r.row], vectors[(r.path, r.text_md5)]) for r in refs)
    assert patched > 60  # the run patched the assembled index (it did not re-assemble each time)...
    assert (reassembled > 0) == (spare < 100)  # ...and with few spare rows it also crossed re-assemblies


def test_directives_follow_saves_and_removals() -> None:
    """``directives()`` is kept between saves of notes without rules and follows every change of one with rules."""
    rng = np.random.default_rng(1)

    def ruled(path: str, text: str | None) -> AifBinDocument:
        doc = make_note(path, rng)
        if text is not None:
            rule = {"kind": "hard", "text": text, "start_line": 0, "end_line": 1, "heading_path": [], "cues": []}
            doc.metadata["directives"] = [rule]
        return doc

    index = MemoryIndex(DIM)
    for path, text in [("b.md", "Never push."), ("a.md", None), ("c.md", "Always test.")]:
        index.upsert(ruled(path, text))
    assert [(d.path, d.text) for d in index.directives()] == [("b.md", "Never push."), ("c.md", "Always test.")]
    index.upsert(ruled("a.md", "Use ruff."))
    index.upsert(ruled("b.md", None))
    index.remove("c.md")
    index.upsert(ruled("d.md", None))
    assert [(d.path, d.text) for d in index.directives()] == [("a.md", "Use ruff.")]
    index.remove("a.md")
    assert index.directives() == []


def test_changed_since_names_the_notes_saved_and_forgets_old_versions() -> None:
    rng = np.random.default_rng(2)
    index = MemoryIndex(DIM)
    index.upsert(make_note("a.md", rng))
    start = index.version
    index.upsert(make_note("b.md", rng))
    index.remove("a.md")
    index.remove("absent.md")  # not a change
    assert index.changed_since(start) == {"a.md", "b.md"} and index.changed_since(index.version) == set()
    for _ in range(1100):  # the log keeps max(1024, 2 x notes) entries: the oldest go
        index.upsert(make_note("b.md", rng))
    assert index.changed_since(start) is None and index.changed_since(index.version - 3) == {"b.md"}
