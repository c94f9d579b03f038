"""Memo lifecycle overhead (memory/): what reinforcement and decay ranking add to a search, the cost of
seeding memos for a vault, prune and consolidate, and the sidecar's size.

Run from the repo root with the venv active: ``python bench/bench_lifecycle.py [--quick]``. A synthetic vault
(common.generate_vault: 10,000 notes, 2,000 with ``--quick``) is synced with the HashEmbedder (fake vectors: this
measures botbin's own work, not the model), then each search is timed three ways over the same 200 queries:
plain (``decay_weight`` 0, no reinforcement: the search before the lifecycle), ranked (decay lookup and
re-sort) and ranked + reinforced (the default: one SQLite transaction per search). Prints one JSON object on
stdout; progress goes to stderr. Everything is written under a temp folder.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from botbin.memory.memos import MEMO_FILE
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import HashEmbedder, generate_vault, load_average, log, percentile, r, timed, vocabulary


def _latencies(service: MemoryService, queries: list[str], reinforce: bool) -> dict[str, float]:
    times = []
    for q in queries:
        start = time.perf_counter()
        service.search(SearchRequest(query=q, k=10, show_all=True), reinforce=reinforce)
        times.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": r(percentile(times, 50), 3), "p95_ms": r(percentile(times, 95), 3)}


def run(n_notes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="botbin-bench-lifecycle-") as tmp:
        ws = Path(tmp) / "vault"
        generate_vault(ws, n_notes)
        embedder = HashEmbedder()
        service = MemoryService(ws, {"vault": True}, embedder=embedder, env={})
        log(f"syncing {n_notes} synthetic notes")
        service.sync()
        index, _ = service.index()
        rng = random.Random(1)
        vocab = vocabulary(rng)[15:400]
        queries = [" ".join(rng.choices(vocab, k=3)) for _ in range(200)]
        for q in queries:  # embed once, so every pass below times search alone
            service.ws.models.embed_query(q)
        seed_s, _ = timed(lambda: service.lifecycle.ensure(index))
        noop_s, _ = timed(lambda: service.lifecycle.ensure(index))
        plain = MemoryService(ws, {"vault": True, "decay_weight": 0.0}, embedder=embedder, env={})
        plain.index()
        plain.lifecycle.hide_archived(plain.index()[0])
        log("timing searches")
        result: dict[str, Any] = {
            "notes": n_notes,
            "chunks": len(index),
            "load_average": load_average(),
            "seed_memos_s": r(seed_s, 3),
            "ensure_noop_ms": r(noop_s * 1000, 3),
            "search_plain": _latencies(plain, queries, reinforce=False),
            "search_ranked": _latencies(service, queries, reinforce=False),
            "search_ranked_reinforced": _latencies(service, queries, reinforce=True),
        }
        later = datetime.now().astimezone() + timedelta(days=365)
        prune_s, report = timed(lambda: service.prune(dry_run=True, now=later))
        consolidate_s, roots = timed(lambda: service.consolidate(dry_run=True))
        service.lifecycle.close()  # the last connection checkpoints the write-ahead log into the file
        size = (service.output_dir / MEMO_FILE).stat().st_size
        result.update(
            {
                "prune_dry_run_s": r(prune_s, 3),
                "prune_candidates": len(report.archived),
                "consolidate_dry_run_s": r(consolidate_s, 3),
                "roots_found": len(roots.roots),
                "sidecar_bytes": size,
                "sidecar_bytes_per_memo": r(size / max(1, len(index)), 1),
            }
        )
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 notes instead of 10,000")
    args = parser.parse_args()
    print(json.dumps(run(2000 if args.quick else 10_000), indent=2))


if __name__ == "__main__":
    main()
