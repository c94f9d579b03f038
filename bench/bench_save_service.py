"""Save-to-searchable through the service, step by step, at two vault sizes in the same run: what the language
server does on ``didSave`` (sync of that note only, then the directive conflicts it publishes) and the search
that then finds the new sentence (with the memo lifecycle: archived memos hidden, decay, reinforcement).

A synthetic vault (common.generate_vault, ~3 chunks per note: 334 notes ~1k chunks, 10,000 ~30k) synced with
the HashEmbedder (fake vectors, no model: the model's cost per save is the same at any vault size and is left
out; the language server's transport is left out too, see bench_lsp.py for that). Each save appends a sentence
with a new word to a random note and times each step. Prints one JSON object: p50/p95 per step and of their
sum, and the ratios of the big vault over the small one.

Run from the repo root with the venv active: ``python bench/bench_save_service.py [--sizes 334,10000]
[--saves 20]``.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from botbin.index.blas import single_threaded_blas
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest, SyncRequest
from common import HashEmbedder, generate_vault, load_average, log, median, percentile, r

STEPS = ("sync", "conflicts", "search", "total")


def one_size(n_notes: int, saves: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="botbin-bench-save-") as tmp:
        ws = Path(tmp) / "vault"
        generate_vault(ws, n_notes)
        service = MemoryService(ws, {"vault": True}, embedder=HashEmbedder(), env={})
        log(f"syncing {n_notes} synthetic notes")
        service.sync()
        index, _ = service.index()
        service.search(SearchRequest(query="warm up", show_all=True))
        notes = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*.md"))
        rng = random.Random(2)
        samples: dict[str, list[float]] = {s: [] for s in STEPS}
        for i in range(saves):
            rel = rng.choice(notes)
            word = f"zqmarker{i}x"
            with (ws / rel).open("a", encoding="utf-8") as fh:
                fh.write(f"\nThe {word} was written at save {i}.\n")
            t0 = time.perf_counter()
            service.sync(SyncRequest(only=frozenset([rel])))
            t1 = time.perf_counter()
            service.directives()
            t2 = time.perf_counter()
            hits = service.search(SearchRequest(query=word, show_all=True)).hits
            t3 = time.perf_counter()
            if not any(h.path == rel and word in h.text for h in hits):
                raise RuntimeError(f"save {i}: {word} not found in {rel}")
            for name, seconds in zip(STEPS, (t1 - t0, t2 - t1, t3 - t2, t3 - t0), strict=True):
                samples[name].append(seconds)
        out: dict[str, Any] = {"notes": n_notes, "chunks": len(index)}
        for name, values in samples.items():
            out[f"{name}_ms_p50"] = r(1000 * median(values), 2)
            out[f"{name}_ms_p95"] = r(1000 * percentile(values, 95), 2)
        log(f"{n_notes} notes: {out}")
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="334,10000")
    parser.add_argument("--saves", type=int, default=20)
    args = parser.parse_args()
    single_threaded_blas()  # as the language and MCP servers run searches
    sizes = [one_size(int(s), args.saves) for s in args.sizes.split(",")]
    small = sizes[0]
    keys = [k for k in small if k.endswith(("_p50", "_p95"))]
    out = {
        "sizes": sizes,
        "ratio_over_smallest": {str(s["chunks"]): {k: r(s[k] / small[k], 3) for k in keys} for s in sizes[1:]},
        "load_average_1_5_15": load_average(),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
