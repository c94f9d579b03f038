"""Query benchmark: hybrid search latency of botbin.index.store.MemoryIndex at 10k and 100k synthetic chunks.

Run from the repo root with the venv active: ``python bench/bench_query.py [--sizes 10000,100000]``.
Latencies exclude the query embedding (query vectors are precomputed). Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
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
from botbin.index.store import MemoryIndex
from common import DIM, current_rss_mb, log, percentile, r, timed, vocabulary, zipf_weights

SIZES = (10_000, 100_000)
CHUNKS_PER_NOTE = 10
QUERIES = 200
K = 10
WORDS_PER_CHUNK = (40, 120)
WORDS_PER_QUERY = (2, 5)
TARGET_P95_MS_100K = 10.0

Vectors = npt.NDArray[np.float32]


def unit_rows(rng: np.random.Generator, n: int) -> Vectors:
    """``n`` random float32 unit vectors of size DIM."""
    m = rng.standard_normal((n, DIM), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def zipf_texts(rng: np.random.Generator, vocab: list[str], n: int, lo: int, hi: int) -> list[str]:
    """``n`` texts of ``lo``..``hi`` words drawn from ``vocab`` with Zipf-like frequencies."""
    lengths = rng.integers(lo, hi + 1, size=n)
    ids = rng.choice(len(vocab), size=int(lengths.sum()), p=zipf_weights(len(vocab)))
    words = np.asarray(vocab, dtype=object)[ids]
    ends = np.cumsum(lengths)
    return [" ".join(words[e - k:e]) for e, k in zip(ends.tolist(), lengths.tolist(), strict=True)]


def note_doc(note: int, vectors: Vectors, texts: list[str]) -> AifBinDocument:
    """The document of synthetic note ``note``: CHUNKS_PER_NOTE consecutive rows of ``vectors``/``texts``."""
    model = {"name": "bench/random-vectors", "dim": DIM, "normalized": True, "max_tokens": 256}
    chunks = tuple(
        ChunkRecord(id=i, text=texts[row], start_line=3 * i, end_line=3 * i + 2,
                    heading_path=(f"Note {note}", f"Section {i}"), kind="lore", tokens=0, text_md5="",
                    embedding=vectors[row])
        for i in range(CHUNKS_PER_NOTE) if (row := note * CHUNKS_PER_NOTE + i) < len(texts)
    )
    meta = {"source": f"notes/{note // 1000:03d}/note-{note:07d}.md", "model": model,
            "note": {"title": f"Note {note}", "tags": [], "aliases": [], "date": None}}
    return AifBinDocument(meta, chunks)


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
    return {"p50_ms": r(percentile(ms, 50), 3), "p95_ms": r(percentile(ms, 95), 3), "max_ms": r(max(ms), 3),
            "mean_ms": r(sum(ms) / len(ms), 3)}


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


def bench_size(n: int) -> dict[str, Any]:
    rng = np.random.default_rng(n)
    vocab = vocabulary(random.Random(0))
    log(f"{n} chunks: generating vectors and texts")
    vectors = unit_rows(rng, n)
    texts = zipf_texts(rng, vocab, n, *WORDS_PER_CHUNK)
    queries = zipf_texts(rng, vocab, QUERIES, *WORDS_PER_QUERY)
    qvecs = unit_rows(rng, QUERIES)
    rss0 = current_rss_mb()
    build_s, index = timed(lambda: build_index(vectors, texts))
    rss_built = current_rss_mb()
    log(f"{n} chunks: built in {build_s:.1f} s; first search (assembles the matrix and BM25)")
    first_s, _ = timed(lambda: index.search(queries[0], qvecs[0], K))
    rss_assembled = current_rss_mb()
    asm = getattr(index, "_assembled", None)  # private: only to report the assembled matrix's size
    matrix_bytes = int(asm.matrix.nbytes) if asm is not None else n * DIM * 4
    per_note = sum(int(nt.matrix.nbytes) for nt in getattr(index, "_notes", {}).values() if nt.matrix.base is None)
    log(f"{n} chunks: {QUERIES} hybrid queries")
    matrix = np.ascontiguousarray(vectors)
    ms = latencies_ms({
        "hybrid": lambda i: index.search(queries[i], qvecs[i], K),
        "vector_only": lambda i: index.search("", qvecs[i], K),
        "keyword_only": lambda i: index.search(queries[i], None, K),
        "numpy": lambda i: numpy_topk(matrix, qvecs[i], K),
    }, QUERIES)
    hybrid, baseline = ms["hybrid"], ms["numpy"]
    # Any upsert drops the assembled matrix and BM25: the next search rebuilds both.
    index.upsert(note_doc(0, vectors, texts))
    reassemble_s, _ = timed(lambda: index.search(queries[1], qvecs[1], K))
    token_bytes = token_lists_bytes(index)
    # Correctness: with no query words the ranking is by cosine alone and must equal the baseline's.
    agree = all(
        [(h.path, h.start_line) for h in index.search("", qvecs[i], K)]
        == [(f"notes/{(row // CHUNKS_PER_NOTE) // 1000:03d}/note-{row // CHUNKS_PER_NOTE:07d}.md",
             3 * (row % CHUNKS_PER_NOTE)) for row in numpy_topk(matrix, qvecs[i], K).tolist()]
        for i in range(20)
    )
    return {
        "chunks": len(index), "notes": index.note_count, "chunks_per_note": CHUNKS_PER_NOTE,
        "words_per_chunk": list(WORDS_PER_CHUNK), "words_per_query": list(WORDS_PER_QUERY), "queries": QUERIES,
        "k": K, "build_upsert_s": r(build_s), "first_search_assemble_s": r(first_s),
        "hybrid": summary(hybrid), "vector_only_empty_query_text": summary(ms["vector_only"]),
        "keyword_only_no_vector": summary(ms["keyword_only"]), "numpy_matmul_argpartition_baseline": summary(baseline),
        "hybrid_p95_over_numpy_p95": r(percentile(hybrid, 95) / percentile(baseline, 95), 2),
        "vector_only_topk_matches_numpy": agree,
        "matrix_bytes": matrix_bytes, "per_note_matrix_bytes_not_shared": per_note,
        "search_after_one_note_upsert_s": r(reassemble_s),
        "bm25_token_lists_bytes_estimate": token_bytes,
        "rss_mb_growth_build": r(rss_built - rss0, 1), "rss_mb_growth_assemble": r(rss_assembled - rss_built, 1),
    }


def run(sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    results: dict[str, Any] = {f"{n}_chunks": bench_size(n) for n in sizes}
    big = results.get("100000_chunks")
    return {
        "what": "MemoryIndex.search latency, query embedding excluded (random unit vectors, Zipf-like text)",
        "cpu_count": os.cpu_count(),
        **results,
        "target": f"hybrid p95 < {TARGET_P95_MS_100K} ms at 100k chunks",
        "target_met": None if big is None else big["hybrid"]["p95_ms"] < TARGET_P95_MS_100K,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated chunk counts")
    args = parser.parse_args()
    print(json.dumps(run(tuple(int(x) for x in args.sizes.split(","))), indent=2))


if __name__ == "__main__":
    main()
