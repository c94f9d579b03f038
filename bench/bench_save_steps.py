"""Index-side cost of one save at several vault sizes, in the same run: the patch of one note (``upsert``: BM25
terms, postings, the patch of the assembled index, the HNSW patch when one is live), the first search after it,
a search with nothing changed, a removal and the search after it, a change of the hidden set (an archived memo)
and the search after it, and the indexed directives (what the conflict check reads). Synthetic notes of 3 chunks
with random unit 384-d vectors and a few words per chunk (no model: only the index's own work; the sync of the
note and the embedding are not in these figures). Ratios of each size over the smallest show which steps grow
with the vault; ``full_assembly_ms`` is what the first search after a save cost before index/assembled.py (a
re-assembly of every row), measured in the same run as the reference.

Run from the repo root with the venv active: ``python bench/bench_save_steps.py [--sizes 334,1000,10000,33334]
[--rounds 30]`` (334 notes: ~1k chunks, 33,334: ~100k). Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index.blas import single_threaded_blas
from botbin.index.hits import IndexQuery
from botbin.index.store import MemoryIndex
from common import load_average, log, median, percentile, r

DIM = 384
WORDS = [f"w{i}" for i in range(3000)]
STEPS = (
    "patch",
    "first_search_after_patch",
    "search_unchanged",
    "remove",
    "first_search_after_remove",
    "set_hidden",
    "first_search_after_set_hidden",
    "directives",
)


def note(n: int, rng: np.random.Generator, version: int = 0) -> AifBinDocument:
    vectors = rng.standard_normal((3, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = tuple(
        ChunkRecord(i, " ".join(rng.choice(WORDS, 40)), 3 * i, 3 * i + 2, ("H",), "lore", 50, f"{n}-{i}-{version}", v)
        for i, v in enumerate(vectors)
    )
    return AifBinDocument({"source": f"f{n % 50}/n{n:06d}.md", "model": {"name": "bench", "dim": DIM}}, chunks)


def one_round(index: MemoryIndex, n_notes: int, k: int, rng: np.random.Generator, query: Any) -> dict[str, float]:
    """Seconds of each step for one save (and one removal, one hidden-set change)."""
    times: dict[str, float] = {}

    def step(name: str, fn: Callable[[], object]) -> None:
        t = time.perf_counter()
        fn()
        times[name] = time.perf_counter() - t

    doc = note(int(rng.integers(n_notes)), rng, version=k + 1)
    step("patch", lambda: index.upsert(doc))
    step("first_search_after_patch", lambda: index.search(IndexQuery("w1 w2", query, k=10)))
    step("search_unchanged", lambda: index.search(IndexQuery("w3 w4", query, k=10)))
    gone = note(int(rng.integers(n_notes)), rng).source
    step("remove", lambda: index.remove(gone))
    step("first_search_after_remove", lambda: index.search(IndexQuery("w5 w6", query, k=10)))
    hidden = frozenset({(doc.source, doc.chunks[0].text_md5), (doc.source, f"x{k}")})
    step("set_hidden", lambda: index.set_hidden(hidden))
    step("first_search_after_set_hidden", lambda: index.search(IndexQuery("w7 w8", query, k=10)))
    step("directives", index.directives)
    index.upsert(note(int(gone.rsplit("n", 1)[1][:6]), rng, version=k + 1))  # put the removed note back
    return times


def one_size(n_notes: int, rounds: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    index = MemoryIndex(DIM)
    for n in range(n_notes):
        index.upsert(note(n, rng))
    query = rng.standard_normal(DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    index.search(IndexQuery("w1 w2", query, k=10))
    full = []
    for _ in range(3):
        index._assembled = None  # benchmark only: what every first search after a save cost before
        t = time.perf_counter()
        index.search(IndexQuery("w1 w2", query, k=10))
        full.append(time.perf_counter() - t)
    samples: dict[str, list[float]] = {s: [] for s in STEPS}
    assemblies = 0
    for k in range(rounds):
        before = index._assembled
        for name, seconds in one_round(index, n_notes, k, rng, query).items():
            samples[name].append(seconds)
        assemblies += index._assembled is not before
    out: dict[str, Any] = {"notes": n_notes, "chunks": len(index), "full_assembly_ms": r(1000 * median(full), 3)}
    for name, values in samples.items():
        out[f"{name}_ms_p50"] = r(1000 * median(values), 3)
        out[f"{name}_ms_p95"] = r(1000 * percentile(values, 95), 3)
    out["save_to_searchable_ms_p95"] = r(
        1000
        * percentile([a + b for a, b in zip(samples["patch"], samples["first_search_after_patch"], strict=True)], 95),
        3,
    )
    out["re_assemblies_in_rounds"] = assemblies
    log(
        f"{n_notes} notes: patch {out['patch_ms_p50']} ms, first search {out['first_search_after_patch_ms_p50']} ms, "
        f"full assembly {out['full_assembly_ms']} ms"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="334,1000,10000")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    single_threaded_blas()  # as the language and MCP servers run searches
    sizes = [one_size(int(s), args.rounds) for s in args.sizes.split(",")]
    small = sizes[0]
    keys = [k for k in small if k.endswith(("_p50", "_p95")) or k == "full_assembly_ms"]
    out = {
        "sizes": sizes,
        "ratio_over_smallest": {
            str(size["chunks"]): {k: r(size[k] / small[k], 3) if small[k] else None for k in keys} for size in sizes[1:]
        },
        "load_average_1_5_15": load_average(),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
