"""Same answers from the team database and the embedded index, for bench/bench_postgres.py: the Obsidian help
queries (both query files) and the SciFact --tiny subset.

The Obsidian help vault is synced once in vault mode with the real model (the AIF-BIN files, cached under
``common.CACHE_ROOT``); the postgres service publishes those files (no re-embedding) and the embedded service
reads them. Each query is embedded once and both backends get that vector. Per query file and backend: hit@1/5/10
and nDCG@10 (binary gain: the target and its ``also`` notes), one best chunk per note, top 10; the same for BM25
alone (alpha 0: the lexical side), and the top-10 overlap of the two backends' chunk rankings (hybrid and BM25)."""

from __future__ import annotations

import json
import math
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from botbin.index.hits import Hit
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import CACHE_ROOT, QUALITY_SETTINGS, log, r

REPO = Path(__file__).resolve().parents[1]
OBSIDIAN = (REPO / ".." / "shared" / "data" / "obsidian-help" / "en").resolve()
QUERY_FILES = (
    REPO / "bench" / "data" / "obsidian_queries.jsonl",
    REPO / "bench" / "data" / "obsidian_questions_2.jsonl",
)
MODES: dict[str, float | None] = {"hybrid": None, "bm25": 0.0}
"""The rankings compared: botbin's default (the configured alpha) and BM25 alone."""


def overlap(a: list[Hit], b: list[Hit]) -> float:
    """Share of ``b``'s chunks (path, first line) that ``a`` also returns."""
    ka, kb = {(h.path, h.start_line) for h in a}, {(h.path, h.start_line) for h in b}
    return len(ka & kb) / max(1, len(kb))


def ndcg(paths: list[str], wanted: set[str], k: int = 10) -> float:
    """nDCG@k with binary gain (a wanted note), as bench_scifact.ndcg_recall with grade 1."""
    dcg = sum(1 / math.log2(i + 2) for i, p in enumerate(paths[:k]) if p in wanted)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(k, len(wanted))))
    return dcg / idcg if idcg else 0.0


def judge(runs: list[list[str]], rows: list[dict[str, Any]]) -> dict[str, float]:
    """Mean hit@1/5/10 and nDCG@10 of ranked note paths against the rows' target and ``also`` notes."""
    ranks, gains = [], []
    for paths, row in zip(runs, rows, strict=True):
        wanted = {row["target"], *row.get("also", [])}
        ranks.append(next((i for i, p in enumerate(paths, 1) if p in wanted), None))
        gains.append(ndcg(paths, wanted))
    out = {f"hit@{k}": r(sum(1 for x in ranks if x and x <= k) / len(rows)) for k in (1, 5, 10)}
    out["ndcg@10"] = r(float(np.mean(gains)))
    return out


def compare(services: dict[str, MemoryService], rows: list[dict[str, Any]], embedder: Any) -> dict[str, Any]:
    """Both backends on one query file, hybrid and BM25 alone."""
    vectors = embedder.embed([row["q"] for row in rows])
    out: dict[str, Any] = {"queries": len(rows)}
    for mode, alpha in MODES.items():
        notes: dict[str, list[list[str]]] = {name: [] for name in services}
        chunks: dict[str, list[list[Hit]]] = {name: [] for name in services}
        for row, vec in zip(rows, vectors, strict=True):
            for name, svc in services.items():
                best = svc.search(
                    SearchRequest(query=row["q"], k=10, alpha=alpha, best_per_note=True, show_all=True),
                    query_vector=vec,
                ).hits
                notes[name].append([h.path for h in best])
                chunks[name].append(
                    svc.search(SearchRequest(query=row["q"], k=10, alpha=alpha, show_all=True), query_vector=vec).hits
                )
        part: dict[str, Any] = {name: judge(runs, rows) for name, runs in notes.items()}
        pairs = zip(chunks["postgres"], chunks["embedded"], strict=True)
        pairs = list(pairs)
        part["top10_overlap"] = r(float(np.mean([overlap(a, b) for a, b in pairs])))
        scored = [overlap([h for h in a if h.score > 0], [h for h in b if h.score > 0]) for a, b in pairs]
        part["top10_overlap_scored"] = r(float(np.mean(scored)))  # ties at score 0 have no order to agree on
        note_pairs = zip(notes["postgres"], notes["embedded"], strict=True)
        part["same_top10_notes"] = r(float(np.mean([a == b for a, b in note_pairs])))
        part["max_metric_diff"] = r(max(abs(part["postgres"][m] - part["embedded"][m]) for m in part["embedded"]))
        out[mode] = part
    return out


def obsidian(url: str, embedder: Any) -> dict[str, Any]:
    """Both query files on the Obsidian help vault, embedded against postgres."""
    ws = CACHE_ROOT / "pg-obsidian-help" / "obsidian-help"
    if not ws.is_dir():
        shutil.copytree(OBSIDIAN, ws)
    settings = {**QUALITY_SETTINGS, "backend": "postgres", "postgres_url": url}
    remote = MemoryService(ws, settings, embedder=embedder, env={})
    remote.team.init()
    log("obsidian: sync (cached after the first run) and publish the AIF-BIN files")
    remote.sync()
    local = MemoryService(ws, QUALITY_SETTINGS, embedder=embedder, env={})
    services = {"embedded": local, "postgres": remote}
    out: dict[str, Any] = {}
    for path in QUERY_FILES:
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        out[path.stem] = compare(services, rows, embedder)
        log(f"{path.stem}: {out[path.stem]}")
    return out


def scifact(url: str, embedder: Any) -> dict[str, Any]:
    """The SciFact --tiny subset (bench_scifact.py): nDCG@10 and recall@10 on both backends."""
    sys.argv = ["bench_scifact.py"]
    import bench_scifact as sf

    data = sf.DATA
    if not data.is_dir():
        return {"skipped": f"no {data}"}
    qrels = sf.read_qrels(data / "qrels" / "test.tsv")
    queries = {q["_id"]: q["text"] for q in sf.read_jsonl(data / "queries.jsonl") if q["_id"] in qrels}
    chosen = sorted(random.Random(0).sample(sorted(queries), sf.TINY_QUERIES))
    corpus = sf.tiny_corpus(sf.read_jsonl(data / "corpus.jsonl"), {q: qrels[q] for q in chosen})
    ws = Path(tempfile.mkdtemp()) / "scifact"
    sf.write_notes(ws, corpus)
    settings = {**QUALITY_SETTINGS, "backend": "postgres", "postgres_url": url, "namespace": "scifact"}
    remote = MemoryService(ws, settings, embedder=embedder, env={})
    remote.team.init()
    log(f"scifact: sync {len(corpus)} abstracts and publish")
    remote.sync()
    local = MemoryService(ws, QUALITY_SETTINGS, embedder=embedder, env={})
    out: dict[str, Any] = {"queries": len(chosen), "abstracts": len(corpus)}
    runs: dict[str, dict[str, list[str]]] = {"embedded": {}, "postgres": {}}
    overlaps = []
    for qid in chosen:
        vec = embedder.embed([queries[qid]])[0]
        a = remote.search(
            SearchRequest(query=queries[qid], k=10, best_per_note=True, show_all=True), query_vector=vec
        ).hits
        b = local.search(
            SearchRequest(query=queries[qid], k=10, best_per_note=True, show_all=True), query_vector=vec
        ).hits
        runs["postgres"][qid] = [Path(h.path).stem for h in a]
        runs["embedded"][qid] = [Path(h.path).stem for h in b]
        overlaps.append(overlap(a, b))
    sub = {q: qrels[q] for q in chosen}
    for name, run in runs.items():
        scores = sf.ndcg_recall(run, sub, 10)
        out[name] = {
            "ndcg@10": r(float(np.mean([s["ndcg@10"] for s in scores.values()]))),
            "recall@10": r(float(np.mean([s["recall@10"] for s in scores.values()]))),
        }
    out["top10_overlap"] = r(float(np.mean(overlaps)))
    shutil.rmtree(ws.parent, ignore_errors=True)
    return out
