"""Retrieval on small agent memories: a few workspaces of an instruction note, a MEMORY.md and daily notes, each
with questions written for it, answered through botbin's search the way ``botbin search`` answers them.

Run from the repo root with the venv active: ``python bench/bench_small_memory.py [--split tune|heldout|all]``.
The sets are listed in ``bench/data/small_memory/sets.json``: each names its notes (a folder of the repo) and its
questions (one ``{"q", "target", "lines", "anchor", "also", "kind"}`` object per line: the note that answers, the
1-based inclusive line range of the answering paragraph, a phrase of that paragraph that must lie in the range,
acceptable other notes, and how the question was written: ``direct`` (the note's own key words), ``paraphrase``
(few or no shared words), ``vague`` (colloquial or a fragment), ``when``/``who``/``which``). Half the sets are
``heldout``: written with the others, before any tuning, and never looked at while tuning.

Each set's notes are copied to ``<cache>/small-memory/<name>`` (``common.CACHE_ROOT``) and synced with botbin's
real sync and the bundled all-MiniLM-L6-v2 (default include: MEMORY.md, AGENTS.md, CLAUDE.md, memory/**), again
only when the notes changed. Each question is embedded once (vectors cached beside the copies) and searched with
``MemoryService.search`` (k 10, the default per-note cap, daily notes exempt), its hits under the relevance floor
dropped as the CLI drops them. Per set: ``top1`` (the first hit is in the target note or an ``also`` note),
``top3``, ``top5``, ``span1`` (the first hit is the target note and overlaps the labelled lines), ``mrr``, and
each miss with the note that came first. Prints one JSON object on stdout; progress goes to stderr."""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.search.pipeline import relevant
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import CACHE_ROOT, NO_REINFORCEMENT, load_average, log, r

REPO = Path(__file__).resolve().parents[1]
SETS = REPO / "bench" / "data" / "small_memory" / "sets.json"
CACHE = CACHE_ROOT / "small-memory"
VECTORS = CACHE / "query-vectors.npz"
K = 10


def load_sets(path: Path = SETS) -> list[dict[str, Any]]:
    """The manifest's sets, each with its ``questions`` read and their labels checked against the notes."""
    sets = json.loads(path.read_text(encoding="utf-8"))["sets"]
    for s in sets:
        notes = REPO / s["notes"]
        s["questions"] = [
            json.loads(line) for line in (REPO / s["questions"]).read_text(encoding="utf-8").splitlines() if line
        ]
        for q in s["questions"]:
            q.setdefault("also", [])
            check_label(notes, q)
    return sets


def check_label(notes: Path, q: dict[str, Any]) -> None:
    """Raise ValueError when a question's target is missing or its anchor lies outside its labelled lines."""
    for path in (q["target"], *q["also"]):
        if not (notes / path).is_file():
            raise ValueError(f"{notes}: {path} (named by {q['q']!r}) does not exist")
    if "lines" in q:
        start, end = q["lines"]
        text = (notes / q["target"]).read_text(encoding="utf-8").splitlines()[start - 1 : end]
        if q["anchor"] not in "\n".join(text):
            raise ValueError(f"{notes / q['target']}: {q['anchor']!r} is not in lines {start}-{end}")


def digest(notes: Path) -> str:
    """SHA-256 over the set's markdown notes (relative path and bytes)."""
    h = hashlib.sha256()
    for p in sorted(notes.rglob("*.md")):
        if "aifbin" not in p.parts:
            h.update(p.relative_to(notes).as_posix().encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def prepare(s: dict[str, Any]) -> MemoryService:
    """The synced copy of set ``s``'s notes (copied again when they changed)."""
    src, ws = REPO / s["notes"], CACHE / s["name"]
    stamp = ws.with_name(ws.name + ".source")
    want = digest(src)
    if not (ws.is_dir() and stamp.is_file() and stamp.read_text() == want):
        shutil.rmtree(ws, ignore_errors=True)
        for p in sorted(src.rglob("*.md")):
            if "aifbin" not in p.parts:
                (ws / p.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, ws / p.relative_to(src))
        stamp.write_text(want)
    service = MemoryService(ws, NO_REINFORCEMENT)
    report = service.sync()
    if report.failed:
        raise SystemExit(f"{s['name']}: sync failed for {report.failed}")
    return service


def query_vectors(service: MemoryService, texts: list[str]) -> dict[str, npt.NDArray[np.float32]]:
    """Each text's query vector, embedded as a search embeds it; cached in VECTORS by model and text."""
    model = service.ws.models.meta.name
    cached: dict[str, npt.NDArray[np.float32]] = {}
    try:
        with np.load(VECTORS) as data:
            if str(data["model_id"]) == model:
                cached = {str(q): v for q, v in zip(data["queries"], data["vectors"], strict=True)}
    except (OSError, KeyError, ValueError):
        pass
    todo = [t for t in texts if t not in cached]
    if todo:
        log(f"embedding {len(todo)} questions")
        cached.update({t: service.ws.models.embed_query(t) for t in todo})
        VECTORS.parent.mkdir(parents=True, exist_ok=True)
        with VECTORS.open("wb") as handle:
            np.savez(
                handle,
                model_id=np.array(model),
                queries=np.array(list(cached)),
                vectors=np.stack(list(cached.values())),
            )
    return {t: cached[t] for t in texts}


def evaluate(service: MemoryService, questions: list[dict[str, Any]], vectors: dict[str, Any]) -> dict[str, Any]:
    """top1 / top3 / top5 / span1 / mrr over ``questions``, and the misses at rank 1."""
    ranks: list[int | None] = []
    spans: list[bool] = []
    misses = []
    for q in questions:
        result = service.search(
            SearchRequest(query=q["q"], k=K, show_all=True), query_vector=vectors[q["q"]], reinforce=False
        )
        hits = [h for h in result.hits if relevant(h, result.degraded)]
        wanted = {q["target"], *q["also"]}
        rank = next((i for i, h in enumerate(hits, 1) if h.path in wanted), None)
        ranks.append(rank)
        first = hits[0] if hits else None
        lines = q.get("lines")
        spans.append(
            first is not None
            and first.path == q["target"]
            and (lines is None or (first.start_line < lines[1] and lines[0] - 1 < first.end_line))
        )
        if rank != 1:
            where = f"{first.path}:{first.start_line + 1}" if first else None
            misses.append({"q": q["q"], "kind": q["kind"], "target": q["target"], "rank": rank, "first": where})
    return {**metrics(ranks), "span1": r(sum(spans) / max(len(spans), 1)), "misses": misses}


def metrics(ranks: list[int | None]) -> dict[str, Any]:
    """n, top1, top3, top5 and mrr (at K) of 1-based ranks (None: not among the shown hits)."""
    n = max(len(ranks), 1)

    def top(k: int) -> float:
        return r(sum(1 for x in ranks if x is not None and x <= k) / n)

    mrr = sum(1.0 / x for x in ranks if x is not None) / n
    return {"n": len(ranks), "top1": top(1), "top3": top(3), "top5": top(5), "mrr": r(mrr)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("tune", "heldout", "all"), default="all")
    parser.add_argument("--sets", type=Path, default=SETS, help="the manifest (default: bench/data/small_memory)")
    args = parser.parse_args()
    start = time.perf_counter()
    out: dict[str, Any] = {"benchmark": "small_memory", "date": time.strftime("%Y-%m-%d"), "sets": {}}
    totals: dict[str, list[dict[str, Any]]] = {}
    for s in load_sets(args.sets):
        if args.split not in ("all", s["split"]):
            continue
        log(f"{s['name']}: syncing {s['notes']}")
        service = prepare(s)
        vectors = query_vectors(service, [q["q"] for q in s["questions"]])
        res = evaluate(service, s["questions"], vectors)
        out["sets"][s["name"]] = {"split": s["split"], "chunks": len(service.index()[0]), **res}
        totals.setdefault(s["split"], []).append(res)
    for split, results in totals.items():
        n = sum(x["n"] for x in results)
        out[split] = {
            "n": n,
            **{m: r(sum(x[m] * x["n"] for x in results) / n) for m in ("top1", "top3", "top5", "span1", "mrr")},
        }
    out["seconds"] = r(time.perf_counter() - start, 2)
    out["load_average"] = load_average()
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
