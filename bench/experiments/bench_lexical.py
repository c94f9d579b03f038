"""Incremental BM25 (index/lexical.py) against a full bm25s rebuild (index/bm25.py, what the store did before) at
10k and 100k chunks: per-note update cost, query cost, and the largest score difference, in the same run.

Synthetic corpus (numpy seed 0): term ids drawn from a Zipf-like distribution over 50,000 terms (s 1.07), 40-220
terms per chunk, 3 chunks per note. An update replaces one note (3 new chunks) or removes one; a full rebuild is
what any change cost before (``Bm25Index`` over every chunk). Updates are timed with the flush a search after
them pays (``put`` only queues), one update per search as in the language server; ``incremental_build_s`` is
the load path (every note queued, then one vectorized build). ``view_after_change_ms`` is the row gather a
search pays once after a change (``LexicalView``: one slot per row). Queries: 3-6 terms drawn from the same
distribution, timed against bm25s on an unchanged index (each term's posting scores are cached until the next
change, as bm25s precomputes them at build) and, ``query_after_change_ms``, right after an edit (those scores
recomputed).

Run from the repo root with the venv active: ``python bench/experiments/bench_lexical.py [--quick]`` (``--quick``: 10k
chunks only, fewer repeats). Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import _bench  # noqa: F401  (bench/ on the import path)
import numpy as np
import numpy.typing as npt

from botbin.index.bm25 import Bm25Index
from botbin.index.lexical import LexicalIndex, LexicalView
from common import load_average, log, median, peak_rss_mb, percentile, r

TERMS = 50_000
CHUNKS_PER_NOTE = 3
Note = tuple[npt.NDArray[np.int32], ...]


def make_notes(rng: np.random.Generator, n_notes: int, weights: npt.NDArray[np.float64]) -> list[Note]:
    lengths = rng.integers(40, 221, size=(n_notes, CHUNKS_PER_NOTE))
    flat = rng.choice(TERMS, size=int(lengths.sum()), p=weights).astype(np.int32)
    out, pos = [], 0
    for row in lengths.tolist():
        chunks = []
        for n in row:
            chunks.append(flat[pos : pos + n])
            pos += n
        out.append(tuple(chunks))
    return out


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def scale(n_chunks: int, updates: int, queries: int, rebuilds: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    weights = 1.0 / np.arange(1, TERMS + 1) ** 1.07
    weights /= weights.sum()
    n_notes = n_chunks // CHUNKS_PER_NOTE
    notes = make_notes(rng, n_notes, weights)
    vocab = {f"t{i}": i for i in range(TERMS)}
    paths = [f"n{i:07d}.md" for i in range(n_notes)]
    lex = LexicalIndex(vocab)
    build_s = timed(lambda: ([lex.put(p, t) for p, t in zip(paths, notes, strict=True)], lex.flush()))
    corpus = [c.tolist() for t in notes for c in t]
    rebuild = [timed(lambda: Bm25Index(corpus, vocab)) for _ in range(rebuilds)]
    log(f"{n_chunks} chunks: incremental build {build_s:.1f} s, bm25s rebuild {median(rebuild):.2f} s")
    fresh = make_notes(rng, updates, weights)
    replace_s, remove_s, view_s = [], [], []
    for i in range(updates):
        target = paths[int(rng.integers(n_notes))]
        replace_s.append(timed(lambda t=target, n=fresh[i]: (lex.put(t, n), lex.flush())))
        view_s.append(timed(lambda: LexicalView(lex, paths)))
    for i in range(updates):  # remove then restore: the corpus size stays put
        target = paths[int(rng.integers(n_notes))]
        remove_s.append(timed(lambda t=target: (lex.remove(t), lex.flush())))
        lex.put(target, fresh[i])
        lex.flush()
    view = LexicalView(lex, paths)
    qs = [[f"t{int(x)}" for x in rng.choice(TERMS, size=int(rng.integers(3, 7)), p=weights)] for _ in range(queries)]
    ref = Bm25Index(snapshot(lex, paths), vocab)
    lex_q, ref_q, diffs = [], [], []
    for q in qs:
        t0 = time.perf_counter()
        got = view.scores(q)
        t1 = time.perf_counter()
        want = ref.scores(q)
        t2 = time.perf_counter()
        lex_q.append(t1 - t0)
        ref_q.append(t2 - t1)
        diffs.append(float(np.abs(got - want).max()))
    after_change = []  # the first query after an edit: its terms' posting scores are recomputed
    for i, q in enumerate(qs[:20]):
        lex.put(paths[i], fresh[i])
        changed = LexicalView(lex, paths)
        t0 = time.perf_counter()
        changed.scores(q)
        after_change.append(time.perf_counter() - t0)
    update_p50 = median(replace_s)
    return {
        "chunks": lex.chunk_count,
        "incremental_build_s": r(build_s, 3),
        "full_rebuild_bm25s_s": r(median(rebuild), 4),
        "replace_note_ms": {"p50": r(1000 * update_p50, 3), "p95": r(1000 * percentile(replace_s, 95), 3)},
        "remove_note_ms": {"p50": r(1000 * median(remove_s), 3), "p95": r(1000 * percentile(remove_s, 95), 3)},
        "view_after_change_ms": {"p50": r(1000 * median(view_s), 3)},
        "ratio_replace_over_full_rebuild": r(update_p50 / median(rebuild), 6),
        "query_ms": {
            "incremental_p50": r(1000 * median(lex_q), 3),
            "bm25s_p50": r(1000 * median(ref_q), 3),
            "incremental_p95": r(1000 * percentile(lex_q, 95), 3),
            "bm25s_p95": r(1000 * percentile(ref_q, 95), 3),
        },
        "ratio_query_incremental_over_bm25s": r(median(lex_q) / median(ref_q), 3),
        "query_after_change_ms": {
            "p50": r(1000 * median(after_change), 3),
            "p95": r(1000 * percentile(after_change, 95), 3),
        },
        "max_abs_score_diff_vs_bm25s": max(diffs),
        "slots_after_updates": lex.slot_count,
    }


def snapshot(lex: LexicalIndex, paths: list[str]) -> list[list[int]]:
    """The current corpus in row order, rebuilt from the index's own per-note record (for the reference)."""
    out: list[list[int]] = []
    for p in paths:
        entry = lex._notes[p]  # benchmark only: the reference needs the raw token lists
        out.extend(chunk.tolist() for chunk in entry.tokens)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10k chunks only")
    args = parser.parse_args()
    sizes = [10_000] if args.quick else [10_000, 100_000]
    out: dict[str, Any] = {"scales": {}}
    for n in sizes:
        out["scales"][str(n)] = scale(n, updates=50 if args.quick else 100, queries=50, rebuilds=2 if n > 10_000 else 3)
    out["peak_rss_mb"] = r(peak_rss_mb(), 1)
    out["load_average_1_5_15"] = load_average()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
