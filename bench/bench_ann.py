"""HNSW (index/ann.py: usearch, candidates rescored exactly) against the exact numpy scan at 100k (and optionally
1M) synthetic chunks, in the same run: query p50 / p95, recall@10 against exact, build time, memory.

Vectors: bench_query.py's ``Clusters`` (unit vectors around random centroids, 50 points per cluster; two points of
one cluster have cosine ~0.5), queries drawn from the same clusters. The exact scan is ``matrix @ q`` plus a
top-10 partition (what the store does for the vector part).

Run from the repo root with the venv active: ``python bench/bench_ann.py [--sizes 100000[,1000000]]
[--queries 200]``. Needs usearch (a botbin dependency). Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from bench_query import Clusters
from botbin.index.ann import CANDIDATES, AnnIndex, AnnParams, exact_top, rescore
from common import current_rss_mb, load_average, log, median, percentile, r


def one_size(n: int, n_queries: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    gen = Clusters(rng, n, uniform=False)
    matrix = gen.draw(n)
    queries = gen.draw(n_queries)
    rss = current_rss_mb()
    index = AnnIndex(matrix.shape[1])
    start = time.perf_counter()
    index.add(np.arange(n, dtype=np.int64), matrix)
    build_s = time.perf_counter() - start
    grown = current_rss_mb() - rss
    log(f"{n}: HNSW build {build_s:.1f} s")
    exact_s, ann_s, hits = [], [], 0
    for q in queries:
        t0 = time.perf_counter()
        want = exact_top(matrix, q, 10)
        t1 = time.perf_counter()
        got, _ = rescore(matrix, index.candidates(q), q, 10)
        t2 = time.perf_counter()
        exact_s.append(t1 - t0)
        ann_s.append(t2 - t1)
        hits += len(set(got.tolist()) & set(want.tolist()))
    return {
        "chunks": n,
        "build_s": r(build_s, 2),
        "build_vectors_per_s": r(n / build_s, 0),
        "rss_mb_growth": r(grown, 1),
        "index_bytes_per_chunk": r(index._index.memory_usage / n, 1),
        "exact_ms": {"p50": r(1000 * median(exact_s), 3), "p95": r(1000 * percentile(exact_s, 95), 3)},
        "ann_rescored_ms": {"p50": r(1000 * median(ann_s), 3), "p95": r(1000 * percentile(ann_s, 95), 3)},
        "ratio_p95_ann_over_exact": r(percentile(ann_s, 95) / percentile(exact_s, 95), 3),
        "recall_at_10": r(hits / (10 * n_queries), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    params = AnnParams()
    out: dict[str, Any] = {
        "params": {
            "connectivity": params.connectivity,
            "expansion_add": params.expansion_add,
            "expansion_search": max(params.expansion_search, CANDIDATES),
            "candidates": CANDIDATES,
        },
        "sizes": {s: one_size(int(s), args.queries) for s in args.sizes.split(",")},
        "load_average_1_5_15": load_average(),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
