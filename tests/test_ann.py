"""HNSW index (index/ann.py): recall@10 against the exact scan after exact rescoring, in-place removal,
persistence validated on load (missing, corrupt, stale files give None)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from botbin.index import ann
from botbin.index.ann import CANDIDATES, AnnIndex, AnnParams, chunk_key, exact_top, rescore, usearch_available

pytestmark = pytest.mark.skipif(not usearch_available(), reason="usearch is not installed")
DIM = 384


def clustered(n: int, seed: int = 0, clusters: int = 120) -> npt.NDArray[np.float32]:
    """Unit vectors around ``clusters`` random unit centroids, float32 (n, DIM); two points of one cluster have
    cosine ~0.5, of two clusters ~0 (bench_query.py's generator; the same centroids for every seed)."""
    centres = np.random.default_rng(0).standard_normal((clusters, DIM))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    rng = np.random.default_rng(seed + 1)
    out = centres[rng.integers(clusters, size=n)] + rng.standard_normal((n, DIM)) / np.sqrt(DIM)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def recall_at_10(index: AnnIndex, matrix: npt.NDArray[np.float32], queries: npt.NDArray[np.float32]) -> float:
    hits = 0
    for q in queries:
        rows, _ = rescore(matrix, index.candidates(q), q, 10)
        hits += len(set(rows.tolist()) & set(exact_top(matrix, q, 10).tolist()))
    return hits / (10 * len(queries))


def test_recall_at_10_after_rescoring_is_at_least_099() -> None:
    matrix = clustered(3000)
    index = AnnIndex(DIM)
    index.add(np.arange(len(matrix), dtype=np.int64), matrix)
    queries = clustered(100, seed=1)
    assert recall_at_10(index, matrix, queries) >= 0.99


def test_the_search_widens_as_the_graph_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    """ef is expansion_search up to REFERENCE_ROWS, doubled per tenfold past it (a fixed ef loses recall at 1M),
    never under the candidates asked for."""
    params = AnnParams(expansion_search=128)
    widths = [params.search_width(n) for n in (0, 50_000, 100_000, 1_000_000, 10_000_000)]
    assert widths == [128, 128, 128, 256, 512]
    assert AnnParams(expansion_search=16).search_width(0) == CANDIDATES
    monkeypatch.setattr(ann, "REFERENCE_ROWS", 100)
    matrix = clustered(1000)
    index = AnnIndex(DIM, params)
    index.add(np.arange(len(matrix), dtype=np.int64), matrix)
    index.candidates(matrix[0])
    assert index.expansion_search == 256
    index.candidates(matrix[0], 400)
    assert index.expansion_search == 400
    index.remove(np.arange(900, dtype=np.int64))
    index.candidates(matrix[950])
    assert index.expansion_search == 128


def test_removed_keys_are_never_candidates() -> None:
    matrix = clustered(2000)
    index = AnnIndex(DIM)
    index.add(np.arange(2000, dtype=np.int64), matrix)
    gone = np.arange(0, 2000, 2, dtype=np.int64)
    index.remove(gone)
    assert len(index) == 1000
    for q in matrix[:20]:
        assert not set(index.candidates(q).tolist()) & set(gone.tolist())


def test_saved_index_loads_only_when_it_matches(tmp_path: Path) -> None:
    matrix = clustered(1500)
    keys = np.arange(100, 1600, dtype=np.int64)
    index = AnnIndex(DIM)
    index.add(keys, matrix)
    path = tmp_path / "vectors.usearch"
    index.save(path)
    loaded = AnnIndex.load(path, DIM, keys)
    assert loaded is not None and len(loaded) == 1500
    assert loaded.candidates(matrix[7])[0] == 107
    assert AnnIndex.load(path, DIM, keys[:-1]) is None  # stale: the index lacks a note's removal
    assert AnnIndex.load(tmp_path / "missing.usearch", DIM, keys) is None
    path.write_bytes(path.read_bytes()[:1000])  # truncated
    assert AnnIndex.load(path, DIM, keys) is None


def test_chunk_keys_are_stable_and_distinct() -> None:
    a = chunk_key("notes/a.md", 0, "d41d8cd98f00b204e9800998ecf8427e")
    assert a == chunk_key("notes/a.md", 0, "d41d8cd98f00b204e9800998ecf8427e") and 0 <= a < 2**63
    assert len({chunk_key("notes/a.md", i, "x") for i in range(1000)}) == 1000
