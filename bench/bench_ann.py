"""HNSW (index/ann.py: usearch, candidates rescored exactly) against the exact numpy scan at 100k (and optionally
1M) synthetic chunks, in the same run: query p50 / p95, recall@10 against exact, build time, memory.

Vectors: bench_query.py's ``Clusters`` (unit vectors around random centroids, 50 points per cluster; two points of
one cluster have cosine ~0.5), queries drawn from the same clusters. The exact scan is ``matrix @ q`` plus a
top-10 partition (what the store does for the vector part).

Then the same through the store (``--store 100000``): MemoryIndex.search (hybrid: cosine, BM25, note and
neighbour context, per-note cap) with HNSW candidates (past AnnConfig.min_rows) against the same index with
the exact scan, in the same run: p50 / p95 and the share of the exact top 10 the HNSW path returns; notes of 4
chunks, texts of a few words from a small vocabulary so that BM25 scores rows too.

Run from the repo root with the venv active: ``python bench/bench_ann.py [--sizes 100000[,1000000]]
[--queries 200] [--store 100000] [--cache DIR] [--sweep 256x100,512x200]``: ``--cache`` saves each HNSW
index built (a build takes minutes at 100k on 2 shared cores) and loads it in later runs (``build_s`` is then
null and ``loaded_from_cache_s`` set). ``--sweep`` measures more search settings (``expansion_search`` x candidates
rescored) on the same graph and queries, after the default ones. BLAS runs one thread, as in the servers.
Needs usearch (a botbin dependency).
Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench_query import Clusters
from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index.ann import CANDIDATES, REFERENCE_ROWS, AnnIndex, AnnParams, exact_top, rescore
from botbin.index.ann_live import AnnConfig
from botbin.index.blas import single_threaded_blas
from botbin.index.hits import IndexQuery
from botbin.index.store import MemoryIndex
from common import current_rss_mb, load_average, log, median, percentile, r


def one_size(n: int, n_queries: int, cache: Path | None, sweep: tuple[tuple[int, int], ...] = ()) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    gen = Clusters(rng, n, uniform=False)
    matrix = gen.draw(n)
    queries = gen.draw(n_queries)
    rss = current_rss_mb()
    keys = np.arange(n, dtype=np.int64)
    saved = None if cache is None else cache / f"vectors-{n}.usearch"
    start = time.perf_counter()
    loaded = None if saved is None else AnnIndex.load(saved, matrix.shape[1], keys)
    index = loaded or AnnIndex(matrix.shape[1])
    if loaded is None:
        index.add(keys, matrix)
    build_s = time.perf_counter() - start
    grown = current_rss_mb() - rss
    if loaded is None and saved is not None:
        index.save(saved)
    log(f"{n}: HNSW {'loaded' if loaded else 'built'} in {build_s:.1f} s")
    exact_s, wants = [], []
    for q in queries:
        t0 = time.perf_counter()
        wants.append(set(exact_top(matrix, q, 10).tolist()))
        exact_s.append(time.perf_counter() - t0)
    out: dict[str, Any] = {
        "chunks": n,
        "build_s": None if loaded else r(build_s, 2),
        "build_vectors_per_s": None if loaded else r(n / build_s, 0),
        "loaded_from_cache_s": r(build_s, 2) if loaded else None,
        "rss_mb_growth": r(grown, 1),
        "index_bytes_per_chunk": r(index._index.memory_usage / n, 1),
        "exact_ms": {"p50": r(1000 * median(exact_s), 3), "p95": r(1000 * percentile(exact_s, 95), 3)},
    }
    # first what botbin does (AnnIndex.candidates: ef from the graph's size), then each --sweep setting as given
    for setting in [None, *sweep]:
        ann_s, hits = [], 0
        for q, want in zip(queries, wants, strict=True):
            t0 = time.perf_counter()
            found = index.candidates(q, CANDIDATES) if setting is None else fixed_candidates(index, q, *setting)
            got, _ = rescore(matrix, found, q, 10)
            ann_s.append(time.perf_counter() - t0)
            hits += len(set(got.tolist()) & want)
        ef, count = (index.expansion_search, CANDIDATES) if setting is None else setting
        row = {
            "ann_rescored_ms": {"p50": r(1000 * median(ann_s), 3), "p95": r(1000 * percentile(ann_s, 95), 3)},
            "ratio_p95_ann_over_exact": r(percentile(ann_s, 95) / percentile(exact_s, 95), 3),
            "recall_at_10": r(hits / (10 * n_queries), 4),
        }
        if setting is None:
            out.update({"expansion_search": ef, "candidates": count, **row})
        else:
            out.setdefault("sweep", {})[f"ef{ef}_candidates{count}"] = row
        log(f"{n}: ef {ef}, {count} candidates: {row}")
    return out


STORE_WORDS = [f"w{i}" for i in range(2000)]
CHUNKS_PER_NOTE = 4


def fixed_candidates(index: AnnIndex, q: npt.NDArray[np.float32], ef: int, count: int) -> npt.NDArray[np.int64]:
    """``count`` candidates searched at ``ef`` exactly (AnnIndex.candidates would pick ef from the graph's size)."""
    index._index.expansion_search = max(ef, count)
    return np.asarray(index._index.search(q, count, threads=1).keys, dtype=np.int64)


def store_docs(matrix: npt.NDArray[np.float32], rng: np.random.Generator) -> list[AifBinDocument]:
    """Notes of CHUNKS_PER_NOTE chunks over the rows of ``matrix``, each chunk a few random words."""
    docs = []
    for n in range(len(matrix) // CHUNKS_PER_NOTE):
        source = f"f{n % 100:02d}/note-{n:06d}.md"
        meta = {"source": source, "model": {"name": "bench", "dim": matrix.shape[1]}}
        chunks = tuple(
            ChunkRecord(i, " ".join(rng.choice(STORE_WORDS, 8)), 3 * i, 3 * i + 2, ("H",), "lore", 10, f"{n}-{i}", v)
            for i, v in enumerate(matrix[n * CHUNKS_PER_NOTE : (n + 1) * CHUNKS_PER_NOTE])
        )
        docs.append(AifBinDocument(meta, chunks))
    return docs


def through_store(n: int, n_queries: int, cache: Path | None) -> dict[str, Any]:
    """MemoryIndex.search with HNSW candidates against the exact scan, same docs, same queries."""
    rng = np.random.default_rng(1)
    gen = Clusters(rng, n, uniform=False)
    docs = store_docs(gen.draw(n), rng)
    queries = gen.draw(n_queries)
    texts = [" ".join(rng.choice(STORE_WORDS, 3)) for _ in range(n_queries)]
    stores: dict[str, MemoryIndex] = {}
    ready_s: dict[str, float] = {}
    rss = current_rss_mb()
    cached = cache is not None and (cache / f"store-{n}.usearch").is_file()
    for name, min_rows in (("exact", 10**12), ("hnsw", 1)):
        path = None if cache is None else cache / f"store-{n}.usearch"
        index = MemoryIndex(matrix_dim := queries.shape[1], AnnConfig(min_rows=min_rows, path=path, model="bench"))
        for d in docs:
            index.upsert(d)
        start = time.perf_counter()
        index.prepare_ann()
        index.wait_ann()
        ready_s[name] = time.perf_counter() - start
        log(f"store {name}: {n} chunks, HNSW ready in {ready_s[name]:.1f} s (dim {matrix_dim})")
        index.search(IndexQuery("warm", queries[0], k=10))  # assembly, not timed
        stores[name] = index
    assert stores["hnsw"].ann_active() and not stores["exact"].ann_active()
    times: dict[str, list[float]] = {"exact": [], "hnsw": []}
    same = 0
    for text, q in zip(texts, queries, strict=True):
        found = {}
        for name, index in stores.items():
            t0 = time.perf_counter()
            hits = index.search(IndexQuery(text, q, k=10))
            times[name].append(time.perf_counter() - t0)
            found[name] = {(h.path, h.start_line) for h in hits}
        same += len(found["exact"] & found["hnsw"])
    return {
        "chunks": n,
        "vector_stage": vector_stage(stores, queries),
        "exact_ms": {"p50": r(1000 * median(times["exact"]), 3), "p95": r(1000 * percentile(times["exact"], 95), 3)},
        "hnsw_ms": {"p50": r(1000 * median(times["hnsw"]), 3), "p95": r(1000 * percentile(times["hnsw"], 95), 3)},
        "ratio_p95_hnsw_over_exact": r(percentile(times["hnsw"], 95) / percentile(times["exact"], 95), 3),
        "top10_agreement_with_exact": r(same / (10 * n_queries), 4),
        "hnsw_ready_s": r(ready_s["hnsw"], 2),
        "hnsw_from_cache": cached,
        "rss_mb_growth_both_stores": r(current_rss_mb() - rss, 1),
    }


def vector_stage(stores: dict[str, MemoryIndex], queries: npt.NDArray[np.float32]) -> dict[str, Any]:
    """The vector stage alone on the store's own matrix and HNSW index: candidates mapped to rows and rescored
    exactly, against ``matrix @ q`` + top 10, same queries; recall@10 against exact; the graph's memory."""
    index, asm = stores["hnsw"]._ann_index(), stores["hnsw"]._assemble()
    assert index is not None
    matrix = asm.matrix
    exact_s, ann_s, hits = [], [], 0
    for q in queries:
        t0 = time.perf_counter()
        want = exact_top(matrix, q, 10)
        t1 = time.perf_counter()
        got, _ = rescore(matrix, asm.rows_of(index.candidates(q, CANDIDATES)), q, 10)
        t2 = time.perf_counter()
        exact_s.append(t1 - t0)
        ann_s.append(t2 - t1)
        hits += len(set(got.tolist()) & set(want.tolist()))
    return {
        "exact_ms": {"p50": r(1000 * median(exact_s), 3), "p95": r(1000 * percentile(exact_s, 95), 3)},
        "ann_rescored_ms": {"p50": r(1000 * median(ann_s), 3), "p95": r(1000 * percentile(ann_s, 95), 3)},
        "ratio_p95_ann_over_exact": r(percentile(ann_s, 95) / percentile(exact_s, 95), 3),
        "recall_at_10": r(hits / (10 * len(queries)), 4),
        "index_bytes_per_chunk": r(index._index.memory_usage / len(index), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--store", type=int, default=0, help="chunks for the store-level comparison (0: none)")
    parser.add_argument("--cache", type=Path, help="keep the built HNSW indexes here and load them in later runs")
    parser.add_argument(
        "--sweep", default="", help="more search settings on the same graph: EFxCANDIDATES,... (e.g. 256x100,512x200)"
    )
    args = parser.parse_args()
    sweep = tuple((int(a), int(b)) for a, b in (x.split("x") for x in args.sweep.split(",") if x))
    if args.cache is not None:
        args.cache.mkdir(parents=True, exist_ok=True)
    single_threaded_blas()  # as the language and MCP servers run their searches
    params = AnnParams()
    out: dict[str, Any] = {
        "params": {
            "connectivity": params.connectivity,
            "expansion_add": params.expansion_add,
            "expansion_search_up_to_reference_rows": params.expansion_search,
            "reference_rows": REFERENCE_ROWS,
            "candidates": CANDIDATES,
        },
        "sizes": {s: one_size(int(s), args.queries, args.cache, sweep) for s in args.sizes.split(",") if s},
        "store": through_store(args.store, args.queries, args.cache) if args.store else None,
        "blas_threads": 1,
        "load_average_1_5_15": load_average(),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
