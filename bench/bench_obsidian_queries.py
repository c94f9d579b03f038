"""Retrieval quality on the Obsidian help vault: 60 hand-written queries, each with the note that answers it.

Run from the repo root with the venv active: ``python bench/bench_obsidian_queries.py [--quick] [--fresh]``.
The queries (``bench/data/obsidian_queries.jsonl``) were written for this benchmark: paraphrases and questions
as a user would type them, 20 ``easy`` (the note's key words), 25 ``paraphrase`` (few shared words), 15 ``hard``
(conceptual, or answered by one section of a long note). A hit is the target note or one of its ``also`` notes.

The vault is copied to ``~/.cache/botbin-bench/obsidian-help-ws`` (``common.CACHE_ROOT``, outside the repo) and
synced with botbin's real sync (``MemoryService(ws, QUALITY_SETTINGS)``, the bundled all-MiniLM-L6-v2); later runs
reuse that copy while the source notes are unchanged (``--fresh`` starts over). Three rankings, one best chunk per
note, top 10: botbin's default (hybrid, the configured alpha), BM25 only (alpha 0) and vector only (alpha 1); for
each, hit@1, hit@5, hit@10 and MRR@10 overall and per kind, plus the five worst misses of the default ranking. Each
query is embedded once, by ``service.ws.models.embed_query`` (what a search does), and its vector is saved beside the
workspace; ``--quick`` reuses those vectors (no model load when the query file has not changed: a few seconds) and
leaves out the per-query table. A full run always embeds the queries again. Prints one JSON object on stdout;
progress goes to stderr."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import CACHE_ROOT, QUALITY_SETTINGS, load_average, log, r, timed

REPO = Path(__file__).resolve().parents[1]
#: The help vault; BOTBIN_OBSIDIAN_HELP names another copy (a git worktree has no ../shared beside it).
OBSIDIAN_HELP = Path(
    os.environ.get("BOTBIN_OBSIDIAN_HELP") or REPO / ".." / "shared" / "data" / "obsidian-help" / "en"
).resolve()
QUERIES = REPO / "bench" / "data" / "obsidian_queries.jsonl"
CACHE = CACHE_ROOT / "obsidian-help-ws"
STAMP = CACHE.with_name(CACHE.name + ".source.json")
VECTORS = CACHE.with_name("obsidian-queries-vectors.npz")
KINDS = ("easy", "paraphrase", "hard")
K = 10
MODES: dict[str, float | None] = {"default": None, "bm25": 0.0, "vector": 1.0}


def load_queries(path: Path = QUERIES) -> list[dict[str, Any]]:
    """The query file: one ``{"q", "target", "also", "kind"}`` object per line."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        row.setdefault("also", [])
        if row["kind"] not in KINDS:
            raise ValueError(f"unknown kind {row['kind']!r} in {row}")
    return rows


def source_digest(src: Path) -> str:
    """SHA-256 over every file of the source vault (relative path and bytes)."""
    h = hashlib.sha256()
    for p in sorted(x for x in src.rglob("*") if x.is_file()):
        h.update(p.relative_to(src).as_posix().encode("utf-8") + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def prepare_workspace(fresh: bool) -> tuple[Path, bool]:
    """The cached vault copy (re-copied when the source changed or ``fresh``); (path, reused)."""
    digest = source_digest(OBSIDIAN_HELP)
    stamp = json.loads(STAMP.read_text(encoding="utf-8")) if STAMP.is_file() else {}
    if not fresh and CACHE.is_dir() and stamp.get("source_sha256") == digest:
        return CACHE, True
    log(f"copying {OBSIDIAN_HELP} to {CACHE}")
    if CACHE.exists():
        shutil.rmtree(CACHE)
    STAMP.unlink(missing_ok=True)
    VECTORS.unlink(missing_ok=True)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(OBSIDIAN_HELP, CACHE)
    STAMP.write_text(json.dumps({"source_sha256": digest}), encoding="utf-8")
    return CACHE, False


def rank_of(hits: list[Any], wanted: set[str], keyword_only: bool) -> int | None:
    """1-based rank of the first hit in ``wanted`` (a BM25 hit with no keyword match does not count)."""
    for i, hit in enumerate(hits, 1):
        if keyword_only and hit.score <= 0:
            return None
        if hit.path in wanted:
            return i
    return None


def metrics(ranks: list[int | None]) -> dict[str, float | int]:
    """hit@1, hit@5, hit@10 and MRR@10 of 1-based ranks (None: not in the top 10)."""
    n = len(ranks)
    if not n:
        return {"n": 0}

    def hit(k: int) -> float:
        return r(sum(1 for x in ranks if x is not None and x <= k) / n)

    return {
        "n": n,
        "hit@1": hit(1),
        "hit@5": hit(5),
        "hit@10": hit(10),
        "mrr@10": r(sum(1.0 / x for x in ranks if x is not None and x <= K) / n),
    }


def load_query_vectors(model_id: str) -> dict[str, npt.NDArray[np.float32]]:
    """Query vectors saved by an earlier run with the same model ({} if none)."""
    try:
        with np.load(VECTORS) as data:
            if str(data["model_id"]) != model_id:
                return {}
            return {str(q): v.astype(np.float32) for q, v in zip(data["queries"], data["vectors"], strict=True)}
    except (OSError, KeyError, ValueError):
        return {}


def save_query_vectors(model_id: str, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
    VECTORS.parent.mkdir(parents=True, exist_ok=True)
    with VECTORS.open("wb") as handle:
        np.savez(
            handle,
            model_id=np.array(model_id),
            queries=np.array(list(vectors)),
            vectors=np.stack(list(vectors.values())),
        )


def evaluate(
    service: MemoryService, queries: list[dict[str, Any]], vectors: dict[str, npt.NDArray[np.float32]]
) -> dict[str, Any]:
    """Per mode: metrics overall and per kind (acceptable notes, and the target alone), and each query's rank."""
    out: dict[str, Any] = {}
    for mode, alpha in MODES.items():
        ranks: list[int | None] = []
        strict: list[int | None] = []
        firsts: list[str | None] = []
        for row in queries:
            hits = service.search(
                SearchRequest(query=row["q"], k=K, alpha=alpha, best_per_note=True, show_all=True),
                query_vector=vectors[row["q"]],
            ).hits
            ranks.append(rank_of(hits, {row["target"], *row["also"]}, alpha == 0.0))
            strict.append(rank_of(hits, {row["target"]}, alpha == 0.0))
            firsts.append(hits[0].path if hits else None)
        out[mode] = {
            "alpha": service.settings.alpha if alpha is None else alpha,
            "overall": metrics(ranks),
            **{
                kind: metrics([x for x, row in zip(ranks, queries, strict=True) if row["kind"] == kind])
                for kind in KINDS
            },
            "overall_target_only": metrics(strict),
            "_ranks": ranks,
            "_firsts": firsts,
        }
    return out


def git_commit() -> str | None:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "server"], cwd=REPO, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return head.stdout.strip() + ("+dirty(server)" if dirty.stdout.strip() else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="summary only; reuse the query vectors of the last run")
    parser.add_argument("--fresh", action="store_true", help="copy and sync the vault again from scratch")
    parser.add_argument(
        "--queries",
        type=Path,
        default=QUERIES,
        help="query file (default: the 60 queries; bench/data/obsidian_questions_2.jsonl: 38 more)",
    )
    args = parser.parse_args()

    queries = load_queries(args.queries)
    log(f"{len(queries)} queries from {args.queries}")
    ws, reused = prepare_workspace(args.fresh)
    service = MemoryService(ws, QUALITY_SETTINGS)
    log(f"syncing {ws} ({'cached copy' if reused else 'fresh copy'}; a cold sync embeds ~1,400 chunks: minutes)")
    sync_s, report = timed(service.sync)
    if report.failed:
        raise SystemExit(f"sync failed for {len(report.failed)} notes: {report.failed[:5]}")
    notes = {p.relative_to(ws).as_posix() for p in ws.rglob("*.md") if "aifbin" not in p.parts}
    missing = sorted({p for row in queries for p in (row["target"], *row["also"])} - notes)
    if missing:
        raise SystemExit(f"query targets not in the vault: {missing}")
    index, _ = service.index()
    vectors = load_query_vectors(service.ws.models.meta.name) if args.quick else {}
    todo = [row["q"] for row in queries if row["q"] not in vectors]
    model_s = embed_s = 0.0
    if todo:
        log("loading the model")
        model_s, _ = timed(lambda: service.ws.models.embed_query("warm-up"))
        log(f"embedding {len(todo)} queries, one at a time as botbin's search does")
        embed_s, fresh = timed(lambda: {q: service.ws.models.embed_query(q) for q in todo})
        vectors.update(fresh)
        save_query_vectors(service.ws.models.meta.name, {**load_query_vectors(service.ws.models.meta.name), **vectors})
    log(f"searching: {len(queries)} queries x {len(MODES)} rankings ({len(queries) - len(todo)} query vectors cached)")
    search_s, results = timed(lambda: evaluate(service, queries, vectors))

    result: dict[str, Any] = {
        "benchmark": "obsidian_queries",
        "git_commit": git_commit(),
        "date": time.strftime("%Y-%m-%d"),
        "query_file": args.queries.name,
        "queries": len(queries),
        "per_kind": {kind: sum(row["kind"] == kind for row in queries) for kind in KINDS},
        "notes": len(notes),
        "chunks": len(index),
        "workspace_reused": reused,
        "sync": {"seconds": r(sync_s, 2), "chunks_embedded": report.chunks_embedded},
        "seconds": {"model_load": r(model_s, 2), "embed_queries": r(embed_s, 2), "search_all_rankings": r(search_s, 2)},
        "load_average": load_average(),
    }
    for mode, res in results.items():
        result[mode] = {k: v for k, v in res.items() if not k.startswith("_")}
    default_ranks = results["default"]["_ranks"]
    misses = sorted(range(len(queries)), key=lambda i: -(default_ranks[i] or K + 1))
    result["default_worst"] = [
        {
            "q": queries[i]["q"],
            "kind": queries[i]["kind"],
            "target": queries[i]["target"],
            "rank": default_ranks[i],
            "first": results["default"]["_firsts"][i],
        }
        for i in misses[:5]
        if default_ranks[i] != 1
    ]
    if not args.quick:
        result["per_query"] = [
            {
                "q": row["q"],
                "kind": row["kind"],
                "target": row["target"],
                **{f"rank_{mode}": results[mode]["_ranks"][i] for mode in MODES},
                "first_default": results["default"]["_firsts"][i],
            }
            for i, row in enumerate(queries)
        ]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
