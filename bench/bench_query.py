"""Query benchmark: botbin.index.store.MemoryIndex (hybrid and vector-only) against what a user would run instead
for the vector part (numpy, a flat FAISS index, a usearch HNSW index) at 10k, 100k and 1M synthetic chunks.

Run from the repo root with the venv active: ``python bench/bench_query.py [--sizes 10000,100000,1000000]``.
FAISS (``faiss-cpu``) and usearch (``usearch``) are optional (bench/requirements-optional.txt): a missing one is
skipped with a note. Latencies exclude the query embedding (query vectors are precomputed). Prints one JSON object
on stdout; about 6 min and a peak of ~8.3 GB for all three sizes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index.hits import IndexQuery
from botbin.index.store import MemoryIndex
from common import DIM, current_rss_mb, load_average, log, peak_rss_mb, percentile, r, timed, vocabulary, zipf_weights

SIZES = (10_000, 100_000, 1_000_000)
CHUNKS_PER_NOTE = 10
K = 10
WORDS_PER_CHUNK = (40, 120)
WORDS_PER_QUERY = (2, 5)
TARGET_P95_MS_100K = 10.0
POINTS_PER_CLUSTER = 50
CLUSTER_NOISE = 1.0
BLOCK = 100_000
MIB = 1024 * 1024
REASSEMBLE_MAX = 100_000

Vectors = npt.NDArray[np.float32]


class Clusters:
    """Synthetic embeddings with structure, like real ones: unit vectors drawn around random unit centroids,
    ``normalize(c + CLUSTER_NOISE * g / sqrt(DIM))`` with g ~ N(0, I) (two points of one cluster: cosine ~0.5,
    of two clusters: ~0). ``uniform`` draws plain random unit vectors instead (no structure: the hardest case
    for an approximate index)."""

    def __init__(self, rng: np.random.Generator, n: int, uniform: bool) -> None:
        self.rng, self.uniform = rng, uniform
        self.centroids = self._unit(rng.standard_normal((max(1, n // POINTS_PER_CLUSTER), DIM), dtype=np.float32))

    @staticmethod
    def _unit(m: Vectors) -> Vectors:
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        return m

    def draw(self, n: int) -> Vectors:
        out = np.empty((n, DIM), dtype=np.float32)
        for s in range(0, n, BLOCK):  # in blocks: no 1M x 384 temporaries
            m = self.rng.standard_normal((min(BLOCK, n - s), DIM), dtype=np.float32)
            if not self.uniform:
                m *= np.float32(CLUSTER_NOISE / np.sqrt(DIM))
                m += self.centroids[self.rng.integers(0, len(self.centroids), size=len(m))]
            out[s : s + len(m)] = self._unit(m)
        return out


def zipf_texts(rng: np.random.Generator, vocab: list[str], n: int, lo: int, hi: int) -> list[str]:
    """``n`` texts of ``lo``..``hi`` words drawn from ``vocab`` with Zipf-like frequencies."""
    words_of = np.asarray(vocab, dtype=object)
    p = zipf_weights(len(vocab))
    out: list[str] = []
    for s in range(0, n, BLOCK):
        lengths = rng.integers(lo, hi + 1, size=min(BLOCK, n - s))
        words = words_of[rng.choice(len(vocab), size=int(lengths.sum()), p=p)]
        ends = np.cumsum(lengths)
        out.extend(" ".join(words[e - k : e]) for e, k in zip(ends.tolist(), lengths.tolist(), strict=True))
    return out


def note_doc(note: int, vectors: Vectors, texts: list[str], first_row: int = 0) -> AifBinDocument:
    """The document of synthetic note ``note``: CHUNKS_PER_NOTE consecutive rows of ``vectors``/``texts``
    (``vectors`` may hold only the rows from ``first_row`` on)."""
    model = {"name": "bench/random-vectors", "dim": DIM, "normalized": True, "max_tokens": 256}
    chunks = tuple(
        ChunkRecord(
            id=i,
            text=texts[row],
            start_line=3 * i,
            end_line=3 * i + 2,
            heading_path=(f"Note {note}", f"Section {i}"),
            kind="lore",
            tokens=0,
            text_md5="",
            embedding=vectors[row - first_row],
        )
        for i in range(CHUNKS_PER_NOTE)
        if (row := note * CHUNKS_PER_NOTE + i) < len(texts)
    )
    meta = {
        "source": note_path(note),
        "model": model,
        "note": {"title": f"Note {note}", "tags": [], "aliases": [], "date": None},
    }
    return AifBinDocument(meta, chunks)


def note_path(note: int) -> str:
    return f"notes/{note // 1000:03d}/note-{note:07d}.md"  # zero-padded: sorted paths keep row order


def build_index(vectors: Vectors, texts: list[str]) -> MemoryIndex:
    """A MemoryIndex holding ``len(texts)`` chunks, CHUNKS_PER_NOTE per note, upserted note by note."""
    index = MemoryIndex(DIM)
    for note in range(len(texts) // CHUNKS_PER_NOTE):
        index.upsert(note_doc(note, vectors, texts))
    return index


def latencies_ms(variants: dict[str, Callable[[int], object]], n: int, warmup: int = 10) -> dict[str, list[float]]:
    """Milliseconds per call of each variant for queries 0..n-1, interleaved (query i runs every variant
    before query i+1) so that load from other processes skews all variants alike; ``warmup`` calls first."""
    out: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(-warmup, n):
        for name, fn in variants.items():
            start = time.perf_counter()
            fn(i % n)
            if i >= 0:
                out[name].append((time.perf_counter() - start) * 1000)
    return out


def summary(ms: list[float]) -> dict[str, float]:
    return {
        "p50_ms": r(percentile(ms, 50), 3),
        "p95_ms": r(percentile(ms, 95), 3),
        "p99_ms": r(percentile(ms, 99), 3),
        "max_ms": r(max(ms), 3),
        "mean_ms": r(sum(ms) / len(ms), 3),
    }


def numpy_topk(matrix: Vectors, q: Vectors, k: int) -> npt.NDArray[np.intp]:
    """Baseline: one matmul, argpartition, then sort the k best (what any brute-force index must do)."""
    scores = matrix @ q
    part = np.argpartition(-scores, k - 1)[:k]
    out: npt.NDArray[np.intp] = part[np.argsort(-scores[part], kind="stable")]
    return out


def token_lists_bytes(index: MemoryIndex, sample: int = 200) -> int:
    """Estimated bytes of the per-chunk BM25 token ids the index keeps (int32 arrays), extrapolated from
    ``sample`` notes (private attribute; for the report only)."""
    notes = list(getattr(index, "_notes", {}).values())
    if not notes:
        return 0
    picked = notes[:: max(1, len(notes) // sample)]
    size = sum(sys.getsizeof(t) for n in picked for t in n.tokens)
    return int(size * len(notes) / len(picked))


def overlap(a: list[int], b: list[int]) -> float:
    return len(set(a) & set(b)) / max(1, len(b))


def build_faiss(matrix: Vectors) -> tuple[Any, dict[str, Any]]:
    """A flat (exact) inner-product FAISS index of ``matrix``, or (None, a note why not)."""
    try:
        import faiss  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:
        return None, {"skipped": f"faiss-cpu not importable ({exc}); pip install -r bench/requirements-optional.txt"}
    rss = current_rss_mb()
    index = faiss.IndexFlatIP(DIM)
    seconds, _ = timed(lambda: index.add(matrix))
    grown = current_rss_mb() - rss
    return index, {
        "version": faiss.__version__,
        "kind": "IndexFlatIP (exact inner product)",
        "build_s": r(seconds),
        "rss_mb_growth": r(grown, 1),
        "rss_bytes_per_chunk": r(grown * MIB / len(matrix), 1),
        "index_bytes_per_chunk": DIM * 4,
    }


def build_usearch(matrix: Vectors, budget_s: float) -> tuple[Any, dict[str, Any]]:
    """A usearch HNSW index of ``matrix`` with the library defaults (metric inner product), or (None, why not).
    Vectors are added in blocks; the build stops when the rate so far says it would exceed ``budget_s``."""
    try:
        import usearch  # type: ignore[import-untyped,import-not-found,unused-ignore]
        from usearch.index import Index  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:
        return None, {"skipped": f"usearch not importable ({exc}); pip install -r bench/requirements-optional.txt"}
    rss = current_rss_mb()
    index = Index(ndim=DIM, metric="ip")
    info: dict[str, Any] = {
        "version": usearch.__version__,
        "kind": "HNSW, library defaults",
        "dtype": str(index.dtype),
        "connectivity": index.connectivity,
        "expansion_add": index.expansion_add,
        "expansion_search": index.expansion_search,
    }
    n, start, step = len(matrix), time.perf_counter(), max(1000, min(50_000, len(matrix) // 10))
    for s in range(0, n, step):
        index.add(np.arange(s, min(n, s + step)), matrix[s : s + step], threads=0)
        spent = time.perf_counter() - start
        if s + step < n and spent * n / (s + step) > budget_s:
            return None, {
                **info,
                "skipped": f"build too slow: {s + step} vectors in {spent:.0f} s, "
                f"~{spent * n / (s + step):.0f} s for {n} > --usearch-budget-s {budget_s:.0f}",
            }
    grown, seconds = current_rss_mb() - rss, time.perf_counter() - start
    return index, {
        **info,
        "build_s": r(seconds),
        "build_vectors_per_s": r(n / seconds, 0),
        "rss_mb_growth": r(grown, 1),
        "rss_bytes_per_chunk": r(grown * MIB / n, 1),
        "index_bytes_per_chunk": r(index.memory_usage / n, 1),
    }


def generate_and_build(gen: Clusters, texts: list[str]) -> tuple[MemoryIndex, Vectors, float, tuple[float, float]]:
    """Draw the vectors and build the index; the drawn vectors are freed on return (the index holds copies:
    AifBinDocument.embeddings stacks them). (index, the first note's vectors, seconds, (RSS MiB before, after))."""
    vectors = gen.draw(len(texts))
    rss0 = current_rss_mb()
    build_s, index = timed(lambda: build_index(vectors, texts))
    return index, vectors[:CHUNKS_PER_NOTE].copy(), build_s, (rss0, current_rss_mb())


def bench_size(n: int, queries_n: int, uniform: bool, usearch_budget_s: float) -> dict[str, Any]:
    rng = np.random.default_rng(n)
    vocab = vocabulary(random.Random(0))
    log(f"{n} chunks: generating vectors and texts")
    gen = Clusters(rng, n, uniform)
    texts = zipf_texts(rng, vocab, n, *WORDS_PER_CHUNK)
    queries = zipf_texts(rng, vocab, queries_n, *WORDS_PER_QUERY)
    load_start = load_average()
    index, first_note, build_s, (rss0, rss_built) = generate_and_build(gen, texts)
    qvecs = gen.draw(queries_n)
    gc.collect()
    rss_freed = current_rss_mb()
    log(f"{n} chunks: built in {build_s:.1f} s; first search (assembles the matrix and BM25)")
    first_s, _ = timed(lambda: index.search(IndexQuery(queries[0], qvecs[0], K)))
    rss_assembled = current_rss_mb()
    asm = getattr(index, "_assembled", None)  # private: the assembled matrix, shared with the other engines
    matrix: Vectors = asm.matrix if asm is not None else np.zeros((0, DIM), np.float32)
    log(f"{n} chunks: FAISS and usearch")
    faiss_index, faiss_info = build_faiss(matrix)
    us_index, us_info = build_usearch(matrix, usearch_budget_s)
    variants: dict[str, Callable[[int], object]] = {
        "hybrid": lambda i: index.search(IndexQuery(queries[i], qvecs[i], K)),
        "vector_only": lambda i: index.search(IndexQuery("", qvecs[i], K)),
        "keyword_only": lambda i: index.search(IndexQuery(queries[i], None, K)),
        "numpy": lambda i: numpy_topk(matrix, qvecs[i], K),
    }
    if faiss_index is not None:
        variants["faiss_flat"] = lambda i: faiss_index.search(qvecs[i : i + 1], K)
    if us_index is not None:
        variants["usearch_hnsw"] = lambda i: us_index.search(qvecs[i], K)
    log(f"{n} chunks: {queries_n} queries x {len(variants)} variants")
    ms = latencies_ms(variants, queries_n)
    exact = [numpy_topk(matrix, qvecs[i], K).tolist() for i in range(queries_n)]
    if faiss_index is not None:
        faiss_info["top10_overlap_with_exact"] = r(
            float(
                np.mean(
                    [
                        overlap(faiss_index.search(qvecs[i : i + 1], K)[1][0].tolist(), exact[i])
                        for i in range(queries_n)
                    ]
                )
            )
        )
    if us_index is not None:
        us_info["recall_at_10_vs_exact"] = r(
            float(np.mean([overlap(us_index.search(qvecs[i], K).keys.tolist(), exact[i]) for i in range(queries_n)]))
        )
    # Correctness: with no query words the ranking is by cosine alone and must equal the baseline's.
    agree = all(
        [(h.path, h.start_line) for h in index.search(IndexQuery("", qvecs[i], K))]
        == [(note_path(row // CHUNKS_PER_NOTE), 3 * (row % CHUNKS_PER_NOTE)) for row in exact[i]]
        for i in range(min(20, queries_n))
    )
    hybrid, baseline = ms["hybrid"], ms["numpy"]
    # Any upsert drops the assembled matrix and BM25: the next search rebuilds both (the same work as the first
    # search, so it is timed only up to 100k chunks: ~1 min at 1M).
    reassemble: float | str = f"skipped above {REASSEMBLE_MAX:,} chunks: the same full rebuild as the first search"
    if n <= REASSEMBLE_MAX:
        index.upsert(note_doc(0, first_note, texts))
        reassemble = r(timed(lambda: index.search(IndexQuery(queries[1], qvecs[1], K)))[0])
    token_bytes = token_lists_bytes(index)
    botbin_rss = rss_built - rss0 + rss_assembled - rss_freed
    out = {
        "chunks": len(index),
        "notes": index.note_count,
        "chunks_per_note": CHUNKS_PER_NOTE,
        "words_per_chunk": list(WORDS_PER_CHUNK),
        "words_per_query": list(WORDS_PER_QUERY),
        "queries": queries_n,
        "k": K,
        "build_upsert_s": r(build_s),
        "first_search_assemble_s": r(first_s),
        "hybrid": summary(hybrid),
        "vector_only_empty_query_text": summary(ms["vector_only"]),
        "keyword_only_no_vector": summary(ms["keyword_only"]),
        "numpy_matmul_argpartition_baseline": summary(baseline),
        "faiss_flat_ip": {**faiss_info, **({"latency": summary(ms["faiss_flat"])} if "faiss_flat" in ms else {})},
        "usearch_hnsw": {**us_info, **({"latency": summary(ms["usearch_hnsw"])} if "usearch_hnsw" in ms else {})},
        "hybrid_p95_over_numpy_p95": r(percentile(hybrid, 95) / percentile(baseline, 95), 2),
        "vector_only_topk_matches_numpy": agree,
        "matrix_bytes": int(matrix.nbytes),
        "matrix_bytes_per_chunk": DIM * 4,
        "search_after_one_note_upsert_s": reassemble,
        "bm25_token_lists_bytes_estimate": token_bytes,
        "rss_mb_growth_build": r(rss_built - rss0, 1),
        "rss_mb_growth_assemble": r(rss_assembled - rss_freed, 1),
        "botbin_rss_bytes_per_chunk": r(botbin_rss * MIB / n, 1),
        "botbin_matrix_and_tokens_bytes_per_chunk": r((matrix.nbytes + token_bytes) / n, 1),
        "load_average_1_5_15": {"before_build": load_start, "after_queries": load_average()},
    }
    return out


def thread_limits(threads: int) -> dict[str, Any]:
    """Limit BLAS and OpenMP (numpy, FAISS) to ``threads`` (0: library defaults) for the whole run; usearch
    searches one query on the calling thread. Returns what is in force."""
    out: dict[str, Any] = {"query_threads": threads or "library defaults"}
    try:
        import faiss  # type: ignore[import-untyped,import-not-found,unused-ignore]  # (its OpenMP, for threadpoolctl)

        if threads > 0:
            faiss.omp_set_num_threads(threads)
    except ImportError:
        pass
    try:
        from threadpoolctl import threadpool_info, threadpool_limits  # type: ignore[import-untyped]

        if threads > 0:
            threadpool_limits(limits=threads)
        out["threadpools"] = [
            {k: p.get(k) for k in ("internal_api", "num_threads", "version")} for p in threadpool_info()
        ]
    except ImportError:
        out["threadpools"] = "threadpoolctl not installed: library defaults"
    return out


def run(
    sizes: tuple[int, ...] = SIZES,
    queries: int | None = None,
    uniform: bool = False,
    threads: int = 1,
    usearch_budget_s: float = 150.0,
) -> dict[str, Any]:
    started, load_start = time.perf_counter(), load_average()
    limits = thread_limits(threads)
    results: dict[str, Any] = {}
    for n in sizes:
        # p99 needs >= 100 queries; 1M chunks costs ~0.5 s per query round, so fewer there.
        results[f"{n}_chunks"] = bench_size(n, queries or (200 if n <= 100_000 else 100), uniform, usearch_budget_s)
        gc.collect()
    big = results.get("100000_chunks")
    return {
        "what": "MemoryIndex.search latency vs numpy / FAISS flat / usearch HNSW, query embedding excluded "
        "(synthetic 384-d unit vectors, Zipf-like text)",
        "vectors": "uniform random unit vectors"
        if uniform
        else f"clustered: {POINTS_PER_CLUSTER} per random unit centroid, noise {CLUSTER_NOISE}/sqrt(384)",
        "cpu_count": os.cpu_count(),
        **limits,
        **results,
        "target": f"hybrid p95 < {TARGET_P95_MS_100K} ms at 100k chunks",
        "target_met": None if big is None else big["hybrid"]["p95_ms"] < TARGET_P95_MS_100K,
        "peak_rss_mb": r(peak_rss_mb(), 1),
        "total_s": r(time.perf_counter() - started, 1),
        "load_average_1_5_15": {"start": load_start, "end": load_average()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated chunk counts")
    parser.add_argument("--queries", type=int, help="queries per size (default 200; 100 above 100k chunks)")
    parser.add_argument("--uniform", action="store_true", help="unstructured random vectors instead of clusters")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS/OpenMP threads (default 1, as the language server runs; 0: library defaults)",
    )
    parser.add_argument("--usearch-budget-s", type=float, default=150.0, help="give up a usearch build past this")
    args = parser.parse_args()
    sizes = tuple(int(x) for x in args.sizes.split(","))
    print(json.dumps(run(sizes, args.queries, args.uniform, args.threads, args.usearch_budget_s), indent=2))


if __name__ == "__main__":
    main()
