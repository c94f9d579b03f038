"""Index-side cost of one save at 1k and 10k notes, in the same run: the patch of one note (``upsert``: BM25 terms,
postings, the HNSW patch when one is live), the first search after it (which re-assembles the index) and a search
with nothing changed. Synthetic notes of 3 chunks with random unit 384-d vectors and a few words per chunk (no
model: only the index's own work). Ratios 10k / 1k show which steps grow with the vault.

Run from the repo root with the venv active: ``python bench/bench_save_steps.py [--sizes 1000,10000]
[--rounds 10]``. Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index.store import MemoryIndex
from common import load_average, log, median, r

DIM = 384
WORDS = [f"w{i}" for i in range(3000)]


def note(n: int, rng: np.random.Generator, version: int = 0) -> AifBinDocument:
    vectors = rng.standard_normal((3, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = tuple(
        ChunkRecord(i, " ".join(rng.choice(WORDS, 40)), 3 * i, 3 * i + 2, ("H",), "lore", 50, f"{n}-{i}-{version}", v)
        for i, v in enumerate(vectors)
    )
    return AifBinDocument({"source": f"f{n % 50}/n{n:06d}.md", "model": {"name": "bench", "dim": DIM}}, chunks)


def one_size(n_notes: int, rounds: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    index = MemoryIndex(DIM)
    for n in range(n_notes):
        index.upsert(note(n, rng))
    query = rng.standard_normal(DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    index.search("w1 w2", query, k=10)
    patch, first, again = [], [], []
    for k in range(rounds):
        doc = note(int(rng.integers(n_notes)), rng, version=k + 1)
        t0 = time.perf_counter()
        index.upsert(doc)
        t1 = time.perf_counter()
        index.search("w1 w2", query, k=10)
        t2 = time.perf_counter()
        index.search("w3 w4", query, k=10)
        t3 = time.perf_counter()
        patch.append(t1 - t0)
        first.append(t2 - t1)
        again.append(t3 - t2)
    log(f"{n_notes} notes: patch {1000 * median(patch):.2f} ms, first search {1000 * median(first):.1f} ms")
    return {
        "notes": n_notes,
        "chunks": len(index),
        "patch_ms_p50": r(1000 * median(patch), 3),
        "first_search_after_patch_ms_p50": r(1000 * median(first), 3),
        "search_unchanged_ms_p50": r(1000 * median(again), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    sizes = [one_size(int(s), args.rounds) for s in args.sizes.split(",")]
    small, big = sizes[0], sizes[-1]
    out = {
        "sizes": sizes,
        "ratio_big_over_small": {
            key: r(big[key] / small[key], 3)
            for key in ("patch_ms_p50", "first_search_after_patch_ms_p50", "search_unchanged_ms_p50")
        },
        "load_average_1_5_15": load_average(),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
