"""The HNSW index wired into MemoryIndex (index/ann_live.py, index/candidates.py): past the threshold the vector
side takes its candidates from HNSW and the hybrid ranking matches the exact scan's; notes removed or changed
leave and enter the graph by chunk key; the cache file is reused across reloads, patched when stale and rebuilt
when corrupt; below the threshold nothing but the exact scan runs. Synthetic clustered 384-d vectors (no model):
about 20 s in all on 2 shared cores."""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index.ann import AnnIndex, usearch_available
from botbin.index.ann_live import AnnConfig
from botbin.index.hits import IndexQuery
from botbin.index.store import MemoryIndex
from botbin.wire.requests import SearchFilters

pytestmark = pytest.mark.skipif(not usearch_available(), reason="usearch is not installed")
DIM = 384
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
]
CHUNKS_PER_NOTE = 4


def clustered(n: int, seed: int) -> npt.NDArray[np.float32]:
    """Unit vectors around 60 fixed random centroids (two of one cluster: cosine ~0.5)."""
    centres = np.random.default_rng(0).standard_normal((60, DIM))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    rng = np.random.default_rng(seed + 1)
    out = centres[rng.integers(60, size=n)] + rng.standard_normal((n, DIM)) / np.sqrt(DIM)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def note(path: str, vectors: npt.NDArray[np.float32], salt: str = "") -> AifBinDocument:
    """A note of one chunk per row of ``vectors``, with a few words each (so BM25 has something to score)."""
    meta = {"source": path, "model": {"name": "test", "dim": DIM, "normalized": True, "max_tokens": 256}}
    chunks = []
    for i, vec in enumerate(vectors):
        text = f"{WORDS[(len(path) + i) % len(WORDS)]} {WORDS[i % len(WORDS)]} {path} {salt} {i}"
        md5 = hashlib.md5(text.encode()).hexdigest()
        chunks.append(ChunkRecord(i, text, i * 3, i * 3 + 2, ("H",), "lore", 10, md5, vec))
    return AifBinDocument(meta, tuple(chunks))


def corpus(n_notes: int, seed: int = 0) -> list[AifBinDocument]:
    vectors = clustered(n_notes * CHUNKS_PER_NOTE, seed)
    return [note(f"n/{i:05d}.md", vectors[i * CHUNKS_PER_NOTE : (i + 1) * CHUNKS_PER_NOTE]) for i in range(n_notes)]


def store(docs: list[AifBinDocument], min_rows: int, path: Path | None = None) -> MemoryIndex:
    index = MemoryIndex(DIM, AnnConfig(min_rows=min_rows, path=path, model="test"))
    for d in docs:
        index.upsert(d)
    index.prepare_ann()
    assert index.wait_ann(120)
    return index


def ranked(index: MemoryIndex, query: npt.NDArray[np.float32], words: str = "bravo") -> list[tuple[str, int]]:
    return [(h.path, h.start_line) for h in index.search(IndexQuery(words, query, k=10))]


def test_hnsw_candidates_rank_like_the_exact_scan() -> None:
    docs = corpus(1500)
    ann, exact = store(docs, min_rows=1000), store(docs, min_rows=10**9)
    assert ann.ann_active() and not exact.ann_active()
    queries = clustered(40, seed=7)
    same = sum(len(set(ranked(ann, q)) & set(ranked(exact, q))) for q in queries)
    assert same / (10 * len(queries)) >= 0.97
    vector_only = {(h.path, h.start_line) for q in queries[:10] for h in ann.search(IndexQuery("", q, k=10, alpha=1.0))}
    want = {(h.path, h.start_line) for q in queries[:10] for h in exact.search(IndexQuery("", q, k=10, alpha=1.0))}
    assert len(vector_only & want) >= 0.97 * len(want)  # cosine alone: HNSW then exact rescoring


def test_hidden_rows_filters_and_deletions_rank_like_the_exact_scan() -> None:
    # Issue 21: the HNSW path tests hidden memos and filters on its candidates only, asks 8x more neighbours when
    # they leave fewer than k, and scans every row past that: cosine alone (no context term), its top 10 equals
    # the exact scan's; hybrid with context, nearly (the context can lift a row HNSW did not return).
    docs = corpus(1500, seed=2)
    ann, exact = store(docs, min_rows=1000), store(docs, min_rows=10**9)
    rng = np.random.default_rng(5)
    for gone in rng.choice(len(docs), 60, replace=False).tolist():
        ann.remove(docs[gone].source)
        exact.remove(docs[gone].source)
    chunks = [(d.source, c.text_md5) for d in docs for c in d.chunks]
    hidden = frozenset(chunks[i] for i in rng.choice(len(chunks), len(chunks) // 4, replace=False).tolist())
    ann.set_hidden(hidden)
    exact.set_hidden(hidden)
    assert ann.ann_active() and not exact.ann_active()
    cases: list[dict[str, object]] = [
        {},
        {"filters": SearchFilters(path_glob="n/00[0-7]*")},  # about half of the notes
        {"filters": SearchFilters(path_glob="n/0000*")},  # 10 notes: fewer than k among the first candidates
        {"best_per_note": True},
    ]
    hybrid_same = hybrid_all = 0
    for q in clustered(12, seed=9):
        for kwargs in cases:
            vector_only = IndexQuery("", q, alpha=1.0, **kwargs)  # type: ignore[arg-type]
            got, want = ann.search(vector_only), exact.search(vector_only)
            assert [(h.path, h.start_line) for h in got] == [(h.path, h.start_line) for h in want], kwargs
            assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-6)
            assert all((h.path, h.text_md5) not in hidden for h in got)
            hybrid = IndexQuery("bravo kilo", q, **kwargs)  # type: ignore[arg-type]
            mixed = {(h.path, h.start_line) for h in ann.search(hybrid)}
            hybrid_same += len(mixed & {(h.path, h.start_line) for h in exact.search(hybrid)})
            hybrid_all += len(mixed)
    assert hybrid_same >= 0.97 * hybrid_all


def test_removed_and_changed_notes_leave_the_graph() -> None:
    docs = corpus(400)
    index = store(docs, min_rows=1000)
    assert index.ann_active()
    gone = docs[3]
    index.remove(gone.source)
    moved = clustered(CHUNKS_PER_NOTE, seed=11)
    index.upsert(note(docs[5].source, moved, salt="v2"))
    assert gone.source not in {h.path for h in index.search(IndexQuery("", gone.chunks[0].embedding, k=10, alpha=1.0))}
    top = index.search(IndexQuery("", moved[2], k=1, alpha=1.0))[0]
    assert (top.path, top.start_line) == (docs[5].source, 6)  # the new version's chunk 2, found through HNSW
    assert set(index._ann._live.keys().tolist()) == set(index._assemble().live()[0].tolist())  # type: ignore[union-attr]


def test_cache_file_is_reused_patched_and_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "ann.usearch"
    docs = corpus(300)
    first = store(docs, min_rows=1000, path=path)
    assert first.ann_active() and path.exists()  # written by the background build
    assert not first.save_ann()  # nothing changed since
    again = store(docs, min_rows=1000, path=path)
    assert again.ann_active() and not again.save_ann()  # loaded as saved: nothing to write
    fewer = store(docs[:-1], min_rows=1000, path=path)  # the file holds a note removed since
    assert fewer.ann_active() and not fewer.save_ann()  # patched by the background load, and written there
    assert len(AnnIndex.load_checked(path, DIM, "test")) == 299 * CHUNKS_PER_NOTE  # type: ignore[arg-type]
    q = docs[0].chunks[1].embedding
    assert next(h.path for h in fewer.search(IndexQuery("", q, k=3, alpha=1.0))) == docs[0].source
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with caplog.at_level(logging.WARNING, logger="botbin.index.ann"):
        rebuilt = store(docs, min_rows=1000, path=path)
    assert "unreadable ANN index" in caplog.text or "does not match its record" in caplog.text
    assert rebuilt.ann_active() and AnnIndex.load_checked(path, DIM, "test") is not None  # whole again
    other_model = MemoryIndex(DIM, AnnConfig(min_rows=1000, path=path, model="another"))
    for d in docs:
        other_model.upsert(d)
    other_model.prepare_ann()
    assert other_model.wait_ann(120) and other_model.ann_active()
    assert AnnIndex.load_checked(path, DIM, "test") is None and AnnIndex.load_checked(path, DIM, "another") is not None


def test_a_cache_file_that_cannot_be_written_leaves_the_graph_in_use(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "gone" / "ann.usearch"  # its folder does not exist: usearch's save fails (RuntimeError)
    with caplog.at_level(logging.WARNING, logger="botbin.index.ann_live"):
        index = store(corpus(300), min_rows=1000, path=path)
    assert index.ann_active() and not path.exists()
    assert "could not save the ANN index" in caplog.text


def test_below_the_threshold_no_hnsw_index_is_made() -> None:
    index = store(corpus(100), min_rows=401)
    assert not index.ann_active() and index._ann is not None and not index._ann.building
    assert index._ann._live is None and index._ann._thread is None
    q = clustered(1, seed=3)[0]
    scores = index.matrix() @ q
    best = index.chunk_refs()[int(np.argmax(scores))]
    assert index.search(IndexQuery("", q, k=1, alpha=1.0))[0].text_md5 == best.text_md5


def test_usearch_then_onnxruntime_in_one_process() -> None:
    """usearch imported before onnxruntime crashed the process (SIGSEGV) when the query embedder loaded later:
    botbin imports onnxruntime first. A child process, so that a crash fails this test only."""
    code = "from botbin.index.ann import AnnIndex; AnnIndex(4)\nimport onnxruntime\nprint('ok')"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "server")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-2000:]


def test_a_one_shot_process_starts_no_hnsw_load(tmp_path: Path) -> None:
    # Issue 21: a CLI search that answers once and exits never loads or builds the graph it would not use,
    # even past the threshold and with a cache file beside it; its searches scan exactly.
    docs = corpus(100)
    store(docs, min_rows=1, path=tmp_path / "ann.usearch").save_ann()
    assert (tmp_path / "ann.usearch").is_file()
    config = AnnConfig(min_rows=1, path=tmp_path / "ann.usearch", model="test", background=False)
    index = MemoryIndex(DIM, config)
    for d in docs:
        index.upsert(d)
    index.prepare_ann()
    q = clustered(1, seed=3)[0]
    assert ranked(index, q)
    assert not index.ann_active() and index._ann is not None
    assert index._ann._thread is None and index._ann._live is None


def test_a_process_that_exits_during_a_background_build_exits_cleanly() -> None:
    """The build stops between two batches at exit; a thread left inside usearch aborted the process (exit 134,
    "terminate called without an active exception")."""
    script = """
import time
import numpy as np
from botbin.index.ann_live import AnnConfig, LiveAnn
vectors = np.random.default_rng(0).standard_normal((20000, 384)).astype(np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
keys = np.arange(len(vectors), dtype=np.int64)
live = LiveAnn(384, AnnConfig(min_rows=10))
assert live.ready(len(keys), lambda: (keys, vectors)) is None and live.building
time.sleep(0.5)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "terminate called" not in done.stderr


def test_a_build_stopped_at_exit_is_saved_and_resumed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A process that exits mid-build saves the graph it built; the next one loads it and adds only the rest
    (a 100k-chunk vault whose editor sessions are shorter than the build used to start over every time)."""
    path = tmp_path / "ann.usearch"
    script = f"""
import time
from pathlib import Path
import numpy as np
from botbin.index.ann_live import AnnConfig, LiveAnn
from botbin.index.hits import IndexQuery
vectors = np.random.default_rng(0).standard_normal((20000, 384)).astype(np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
keys = np.arange(len(vectors), dtype=np.int64)
live = LiveAnn(384, AnnConfig(min_rows=10, path=Path({str(path)!r}), model="test"))
assert live.ready(len(keys), lambda: (keys, vectors)) is None and live.building
time.sleep(1.0)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    partial = AnnIndex.load_checked(path, DIM, "test")
    assert partial is not None and 0 < len(partial) <= 20000
    vectors = np.random.default_rng(0).standard_normal((20000, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = np.arange(len(vectors), dtype=np.int64)
    from botbin.index.ann_live import LiveAnn

    live = LiveAnn(DIM, AnnConfig(min_rows=10, path=path, model="test"))
    with caplog.at_level(logging.INFO, logger="botbin.index.ann_live"):
        live.ready(len(keys), lambda: (keys, vectors))
        assert live.wait(120)
        whole = live.ready(len(keys), lambda: (keys, vectors))
    assert whole is not None and np.array_equal(whole.keys(), keys)
    if len(partial) < len(keys):
        assert f"resuming from {len(partial)} saved chunks" in caplog.text
    assert np.array_equal(AnnIndex.load_checked(path, DIM, "test").keys(), keys)  # type: ignore[union-attr]
    assert int(whole.candidates(vectors[123], 1)[0]) == 123


def test_a_store_encrypted_since_the_load_gets_no_hnsw_cache_file(tmp_path: Path) -> None:
    # Issue 36: vectors reveal the text; an index loaded before the store was encrypted (by this process or
    # another) keeps its graph in memory only.
    (tmp_path / "encryption.json").write_text("{}", encoding="utf-8")
    index = store(corpus(100), min_rows=1, path=tmp_path / "ann.usearch")  # the build saves when it ends
    index.upsert(note("n/new.md", clustered(CHUNKS_PER_NOTE, seed=9)))
    assert index.ann_active() and not index.save_ann()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["encryption.json"]
