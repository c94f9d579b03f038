"""Retrieval quality on BEIR SciFact: botbin's real sync and search over 5,183 abstracts, nDCG@10 and recall.

Run from the repo root with the venv active: ``python bench/bench_scifact.py [--split test|train] [--quick]``.
Each abstract becomes one note ``abstracts/<doc id>.md`` (frontmatter ``title``, then ``# title`` and the abstract) in
``bench/out/scifact/ws`` (git-ignored), synced once with ``MemoryService(ws, QUALITY_SETTINGS)`` and the
bundled all-MiniLM-L6-v2; later runs reuse the synced store (a no-op sync). The data is read from
``../shared/data/scifact`` (BEIR layout: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/{split}.tsv``) and never
copied into the repo.

Three rankings per query, through ``MemoryService.search`` with ``best_per_note=True`` (a note's best chunk
is its score, so the ranking is per document, as BEIR scores it): ``bm25`` (alpha 0), ``vector`` (alpha 1)
and ``hybrid`` (botbin's default settings). Metrics follow BEIR (Thakur et al., 2021): nDCG@10 with graded
gains and recall@10 (also nDCG@100 and recall@100), averaged over the split's queries, computed by ``pytrec_eval``
(``pytrec-eval-terrier``, optional: ``bench/requirements-optional.txt``) or else by the same formulas in
``ndcg_recall``. Query vectors are cached too (``query_vectors``).
``--quick``: 200 test queries (``random.Random(0)``) on the cached store; skipped when there is no cache.
``--tiny`` (CI, so the harness never rots): 40 test queries (``random.Random(0)``) over a small corpus, their
judged abstracts plus 400 others (``random.Random(0)``), synced from nothing in a temp folder with the real model
(about a minute on 2 cores); its scores are far above the full corpus's (fewer distractors) and only say that
the pipeline works.
Prints one JSON object on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import QUALITY_SETTINGS, load_average, log, r, timed

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO / ".." / "shared" / "data" / "scifact").resolve()
CACHE = REPO / "bench" / "out" / "scifact"
CUTOFFS = (10, 100)
QUICK_QUERIES = 200
TINY_QUERIES = 40
TINY_DISTRACTORS = 400
BOOTSTRAP_RESAMPLES = 2000
MODES: dict[str, float | None] = {"bm25": 0.0, "vector": 1.0, "hybrid": None}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: grade}}`` from a BEIR qrels TSV (header ``query-id corpus-id score``)."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return qrels


def note_text(doc: dict[str, Any]) -> str:
    """The note for one abstract: its title as frontmatter (the note's title) and as the H1, then the text."""
    title = " ".join(str(doc["title"]).split())
    # A JSON string is a valid YAML double-quoted scalar.
    return f"---\ntitle: {json.dumps(title, ensure_ascii=False)}\n---\n\n# {title}\n\n{doc['text']}\n"


def write_notes(ws: Path, corpus: list[dict[str, Any]]) -> int:
    """Write each abstract as a note unless the same bytes are already there (so a re-run syncs nothing)."""
    folder = ws / "abstracts"
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for doc in corpus:
        path = folder / f"{doc['_id']}.md"
        data = note_text(doc).encode("utf-8")
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
            written += 1
    return written


def ndcg_recall(run: dict[str, list[str]], qrels: dict[str, dict[str, int]], k: int) -> dict[str, dict[str, float]]:
    """Per query: ``ndcg@k`` and ``recall@k`` of the ranked doc ids in ``run`` against graded ``qrels``.

    nDCG (Järvelin and Kekäläinen, 2002, ACM TOIS 20(4)) as trec_eval's ``ndcg_cut`` computes it and BEIR
    reports it: gain = grade, discount 1 / log2(rank + 1), divided by the DCG of the ideal ordering of the
    query's judged grades, cut at k. Recall@k: relevant (grade > 0) docs in the top k / all relevant docs.
    """
    out: dict[str, dict[str, float]] = {}
    for qid, rels in qrels.items():
        ranked = run.get(qid, [])[:k]
        dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked))
        ideal = sorted((g for g in rels.values() if g > 0), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        relevant = {d for d, g in rels.items() if g > 0}
        out[qid] = {
            f"ndcg@{k}": dcg / idcg if idcg else 0.0,
            f"recall@{k}": len(relevant & set(ranked)) / len(relevant) if relevant else 0.0,
        }
    return out


def evaluate(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> tuple[dict[str, Any], str, float]:
    """Mean nDCG@k and recall@k for k in CUTOFFS, and ``ndcg@10_ci95`` (``bootstrap_ci``); the backend used; the
    largest per-query difference between pytrec_eval and ``ndcg_recall`` (0 when pytrec_eval is not installed)."""
    own: dict[str, dict[str, float]] = {q: {} for q in qrels}
    for k in CUTOFFS:
        for qid, values in ndcg_recall(run, qrels, k).items():
            own[qid].update(values)
    per_query, backend, diff = own, "builtin", 0.0
    try:
        import pytrec_eval
    except ImportError:
        pass
    else:
        # Scores by rank, so trec_eval keeps botbin's order (it sorts by score, ties by doc id).
        scored = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in run.items() if q in qrels}
        measures = {f"ndcg_cut.{k}" for k in CUTOFFS} | {f"recall.{k}" for k in CUTOFFS}
        raw = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(scored)
        trec = {
            q: {
                f"{m.split('_')[0]}@{k}": raw.get(q, {}).get(f"{m}_{k}", 0.0)
                for m in ("ndcg_cut", "recall")
                for k in CUTOFFS
            }
            for q in qrels
        }
        diff = max(abs(trec[q][m] - own[q][m]) for q in qrels for m in own[q])
        per_query, backend = trec, "pytrec_eval"
    keys = sorted(next(iter(per_query.values())))
    means: dict[str, Any] = {m: r(float(np.mean([per_query[q][m] for q in qrels])), 5) for m in keys}
    means["ndcg@10_ci95"] = bootstrap_ci([per_query[q]["ndcg@10"] for q in qrels])
    return means, backend, diff


def bootstrap_ci(values: list[float], resamples: int = BOOTSTRAP_RESAMPLES) -> list[float]:
    """95 % percentile bootstrap interval of the mean of ``values`` (Efron and Tibshirani, 1993, ch. 13):
    ``resamples`` resamples of the queries with replacement, ``numpy.random.default_rng(0)``. It says how much
    of a difference between two settings the query sample alone could make."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return [0.0, 0.0]
    means = data[np.random.default_rng(0).integers(0, data.size, (resamples, data.size))].mean(axis=1)
    return [r(float(v), 4) for v in np.percentile(means, [2.5, 97.5])]


def tiny_corpus(corpus: list[dict[str, Any]], qrels: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """``--tiny``'s corpus: every abstract judged for a query of ``qrels``, plus TINY_DISTRACTORS others."""
    judged = {d for rels in qrels.values() for d in rels}
    others = [doc for doc in corpus if doc["_id"] not in judged]
    chosen = judged | {doc["_id"] for doc in random.Random(0).sample(others, min(TINY_DISTRACTORS, len(others)))}
    return [doc for doc in corpus if doc["_id"] in chosen]


def prepare(args: argparse.Namespace, qrels: dict[str, dict[str, int]]) -> tuple[MemoryService, dict[str, Any]] | None:
    """The synced workspace (built and synced on first use; with ``--tiny`` a fresh one under ``args.cache``);
    None with ``--quick`` when there is no cache."""
    ws = args.cache / "ws"
    state = ws / "memory" / "aifbin"
    if args.quick and not state.is_dir():
        return None
    corpus = read_jsonl(args.data / "corpus.jsonl")
    if args.tiny:
        corpus = tiny_corpus(corpus, qrels)
    written = write_notes(ws, corpus)
    service = MemoryService(ws, QUALITY_SETTINGS)
    log(f"{len(corpus)} abstracts, {written} notes written; syncing (the first sync embeds every chunk)")
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if time.monotonic() - last[0] > 30:
            last[0] = time.monotonic()
            log(f"  sync {done}/{total}")

    seconds, report = timed(lambda: service.sync(progress=progress))
    if report.failed:
        log(f"warning: {len(report.failed)} notes failed to sync; they are missing from the results")
    index_s, (index, _) = timed(service.index)
    info = {
        "seconds": r(seconds, 2),
        "notes_written": written,
        "chunks_embedded": report.chunks_embedded,
        "failed": len(report.failed),
        "index_load_s": r(index_s, 2),
        "notes": index.note_count,
        "chunks": len(index),
        "corpus_docs": len(corpus),
    }
    return service, info


def query_vectors(service: MemoryService, queries: dict[str, str]) -> dict[str, npt.NDArray[np.float32]]:
    """float32 (dim,) embedding of each query, by query id, from botbin's embedder (``ws.models.embedder``, the one
    ``embed_query`` calls), in batches of 64. Kept in ``query-vectors.npz`` beside the workspace, keyed by model id
    and query text, so a re-run (and ``--quick``) loads no model for its queries."""
    path = service.root.parent / "query-vectors.npz"
    model_id = service.ws.models.embedder.model_id
    known: dict[str, npt.NDArray[np.float32]] = {}
    if path.is_file():
        with np.load(path) as data:
            if str(data["model_id"]) == model_id:
                known = {str(t): v for t, v in zip(data["texts"], data["vectors"], strict=True)}
    missing = sorted({t for t in queries.values() if t not in known})
    if missing:
        log(f"embedding {len(missing)} queries")
        for start in range(0, len(missing), 64):
            batch = missing[start : start + 64]
            known.update(zip(batch, service.ws.models.embedder.embed(batch), strict=True))
        with path.open("wb") as handle:
            np.savez(
                handle,
                model_id=np.array(model_id),
                texts=np.array(list(known)),
                vectors=np.stack(list(known.values())).astype(np.float32),
            )
    return {q: known[t] for q, t in queries.items()}


def run_modes(
    service: MemoryService, queries: dict[str, str], k: int
) -> tuple[dict[str, dict[str, list[str]]], dict[str, float]]:
    """Doc ids ranked by each mode (top ``k``, one per note), and the search seconds per mode.

    Each query is embedded once (``query_vectors``) and its vector passed to all three searches. BLAS runs on
    one thread during the searches, as in the language server (``botbin.index.blas.single_threaded_blas``).
    """
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    vectors = query_vectors(service, queries)
    runs: dict[str, dict[str, list[str]]] = {m: {} for m in MODES}
    seconds = dict.fromkeys(MODES, 0.0)
    with threadpool_limits(limits=1, user_api="blas"):
        for qid, text in queries.items():
            for mode, alpha in MODES.items():
                start = time.perf_counter()
                hits = service.search(
                    SearchRequest(query=text, k=k, alpha=alpha, best_per_note=True, show_all=True),
                    query_vector=vectors[qid],
                ).hits
                seconds[mode] += time.perf_counter() - start
                runs[mode][qid] = [Path(h.path).stem for h in hits]
    return runs, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("test", "train"), default="test")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_QUERIES} queries on the cached store")
    parser.add_argument(
        "--tiny",
        action="store_true",
        help=f"{TINY_QUERIES} test queries, a small corpus synced from nothing in a temp folder (CI)",
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args()
    if args.tiny and (args.quick or args.split != "test"):
        parser.error("--tiny runs the test split on its own corpus; it takes no --quick or --split")
    started = time.perf_counter()
    qrels = read_qrels(args.data / "qrels" / f"{args.split}.tsv")
    texts = {q["_id"]: q["text"] for q in read_jsonl(args.data / "queries.jsonl")}
    ids = sorted(qrels, key=int)
    if args.quick or args.tiny:
        size = TINY_QUERIES if args.tiny else QUICK_QUERIES
        ids = sorted(random.Random(0).sample(ids, min(size, len(ids))), key=int)
    qrels = {q: qrels[q] for q in ids}
    tiny_folder = tempfile.TemporaryDirectory(prefix="botbin-scifact-tiny-") if args.tiny else None
    with tiny_folder or contextlib.nullcontext():
        if tiny_folder is not None:
            args.cache = Path(tiny_folder.name)
        prepared = prepare(args, qrels)
        if prepared is None:
            print(json.dumps({"skipped": f"--quick needs the synced store in {args.cache}; run without --quick"}))
            return
        service, sync_info = prepared
        try:
            report(args, service, sync_info, qrels, texts, ids, started)
        finally:
            service.lifecycle.close()  # its memo writer is done before the temp folder goes


def report(
    args: argparse.Namespace,
    service: MemoryService,
    sync_info: dict[str, Any],
    qrels: dict[str, dict[str, int]],
    texts: dict[str, str],
    ids: list[str],
    started: float,
) -> None:
    """Search ``ids`` in each mode, score them against ``qrels`` and print the JSON result."""
    log(f"{len(ids)} {args.split} queries, modes {list(MODES)}")
    embed_s, (runs, search_s) = timed(lambda: run_modes(service, {q: texts[q] for q in ids}, max(CUTOFFS)))
    results: dict[str, Any] = {}
    for mode, run in runs.items():
        metrics, backend, diff = evaluate(run, qrels)
        results[mode] = {**metrics, "search_ms_per_query": r(1000 * search_s[mode] / len(ids), 2)}
        log(f"  {mode:7s} " + "  ".join(f"{m} {v:.4f}" for m, v in metrics.items() if isinstance(v, float)))
    settings = service.settings
    print(
        json.dumps(
            {
                "split": args.split,
                "quick": args.quick,
                "tiny": args.tiny,
                "queries": len(ids),
                "judgments": sum(map(len, qrels.values())),
                "sync": sync_info,
                "alpha": settings.alpha,
                "results": results,
                "metrics_backend": backend,
                "metrics_max_abs_diff_vs_builtin": diff,
                "embed_and_search_s": r(embed_s, 2),
                "total_s": r(time.perf_counter() - started, 2),
                "load_average": load_average(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
