"""The relevance floor (search/pipeline.py ``relevant``) measured: right answers it would hide, junk it lets through.

Issue 18/19: the floor's keyword arm read ``hit.bm25``, the BM25 score normalized by the query's best chunk, so the
best lexical hit of any query passed (1.0) however weak its match. The new arm reads ``hit.bm25_share``: the raw
score as a share of the most the query could score (the sum of its terms' IDF). This bench searches, top 10 (the
CLI's default search), with the real model:

- the Obsidian help vault (``common.CACHE_ROOT``/obsidian-help-ws, vault mode, as bench_obsidian_queries.py) with
  ``bench/data/obsidian_queries.jsonl`` and ``obsidian_questions_2.jsonl``: hits of each query's target or
  ``also`` notes in the top 10, and how many of them each floor hides;
- a temporary copy of ``examples/workspace`` with ``examples/queries.jsonl`` (expected note per query), and
  ``bench/data/workspace_queries.jsonl`` (on-topic, no expected note: top-3 hits hidden);
- ``bench/data/offtopic_queries.jsonl`` (40 queries the notes cannot answer) on both: the share of top-10 hits
  each floor hides, and the queries left with any hit shown.

Floors: ``old`` (cosine >= 0.2 or bm25 >= 0.5), ``cosine_only``, and ``share_T`` (cosine >= 0.2 or bm25_share
>= T) for a few T, the shipped one marked. Run from the repo root with the venv active:
``python bench/experiments/bench_relevance_floor.py``; about a minute on two cores with a cached vault. JSON on stdout.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _bench  # noqa: F401  (bench/ on the import path)

from bench_obsidian_queries import OBSIDIAN_HELP, load_queries, prepare_workspace
from botbin.index.hits import Hit
from botbin.search.pipeline import RELEVANCE_MIN_BM25_SHARE, RELEVANCE_MIN_COSINE
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import NO_REINFORCEMENT, QUALITY_SETTINGS, load_average, log, r

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "bench" / "data"
K = 10
SHARES = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
Floor = Callable[[Hit], bool]


def share_floor(least: float) -> Floor:
    """The new floor with ``least`` as its share threshold."""
    return lambda h: h.cosine >= RELEVANCE_MIN_COSINE or h.bm25_share >= least


FLOORS: dict[str, Floor] = {
    "old": lambda h: h.cosine >= RELEVANCE_MIN_COSINE or h.bm25 >= 0.5,
    "cosine_only": lambda h: h.cosine >= RELEVANCE_MIN_COSINE,
    **{f"share_{t}": share_floor(t) for t in SHARES},
}


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def top(service: MemoryService, queries: list[str]) -> list[list[Hit]]:
    return [service.search(SearchRequest(query=q, k=K, show_all=True), reinforce=False).hits for q in queries]


def expected(results: list[list[Hit]], wanted: list[set[str]]) -> dict[str, Any]:
    """Per floor: hits of the wanted notes in the top 10 it hides, and queries left with none of them shown."""
    hits = [[h for h in res if h.path in want] for res, want in zip(results, wanted, strict=True)]
    out: dict[str, Any] = {"queries": len(results), "expected_hits": sum(map(len, hits))}
    for name, keep in FLOORS.items():
        out[name] = {
            "expected_hidden": sum(1 for hs in hits for h in hs if not keep(h)),
            "queries_losing_answer": sum(1 for hs in hits if hs and not any(keep(h) for h in hs)),
        }
    return out


def hidden_share(results: list[list[Hit]], depth: int = K) -> dict[str, Any]:
    """Per floor: the share of the top-``depth`` hits it hides, and the queries left with any hit shown."""
    cut = [res[:depth] for res in results]
    total = sum(map(len, cut))
    out: dict[str, Any] = {"queries": len(results), "hits": total}
    for name, keep in FLOORS.items():
        hidden = sum(1 for res in cut for h in res if not keep(h))
        out[name] = {
            "hidden_share": r(hidden / total) if total else 0.0,
            "queries_with_hits_shown": sum(1 for res in cut if any(keep(h) for h in res)),
        }
    return out


def vault() -> dict[str, Any]:
    ws, _ = prepare_workspace(False)
    service = MemoryService(ws, QUALITY_SETTINGS)
    log(f"syncing {ws} (from {OBSIDIAN_HELP})")
    service.sync()
    out: dict[str, Any] = {}
    for name in ("obsidian_queries", "obsidian_questions_2"):
        qs = load_queries(DATA / f"{name}.jsonl")
        out[name] = expected(top(service, [q["q"] for q in qs]), [{q["target"], *q["also"]} for q in qs])
    out["offtopic"] = hidden_share(top(service, [q["q"] for q in rows(DATA / "offtopic_queries.jsonl")]))
    return out


def workspace() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="botbin-floor-") as tmp:
        ws = Path(tmp) / "workspace"
        shutil.copytree(REPO / "examples" / "workspace", ws)
        service = MemoryService(ws, NO_REINFORCEMENT)
        log(f"syncing a copy of examples/workspace in {tmp}")
        service.sync()
        ex = rows(REPO / "examples" / "queries.jsonl")
        return {
            "examples_queries": expected(top(service, [q["q"] for q in ex]), [{q["expect"]} for q in ex]),
            "workspace_queries_top3": hidden_share(
                top(service, [q["q"] for q in rows(DATA / "workspace_queries.jsonl")]), depth=3
            ),
            "offtopic": hidden_share(top(service, [q["q"] for q in rows(DATA / "offtopic_queries.jsonl")])),
        }


def main() -> None:
    start = time.perf_counter()
    result = {
        "benchmark": "relevance_floor",
        "date": time.strftime("%Y-%m-%d"),
        "shipped": f"share_{RELEVANCE_MIN_BM25_SHARE}",
        "k": K,
        "examples_workspace": workspace(),
        "obsidian_vault": vault(),
        "seconds": r(time.perf_counter() - start, 1),
        "load_average": load_average(),
    }
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
