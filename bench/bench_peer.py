"""Peer benchmark: botbin against memsearch (PyPI ``memsearch[local]``) on the Obsidian help vault, same model.

Run from the repo root with the venv active: ``python bench/bench_peer.py [--reinstall] [--runs 3]``.
memsearch is installed by this script into its own venv, ``bench/out/peer-venv`` (``torch==2.13.0`` first, the
CPU build on this disk, then ``memsearch[local]``), so it never becomes a botbin dependency; the venv is reused
by later runs. Both tools embed with the packaged all-MiniLM-L6-v2 folder (``bundled_model_path()``; memsearch
``-p local -m DIR``), memsearch stores into a Milvus Lite file. Indexing runs through each tool's CLI in a child
process (peak RSS of the whole process tree, sampled); queries run in one child per tool with the model loaded
once. Prints one JSON object on stdout; about 3 min on an idle 2-core machine (plus ~2 min for a first install).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from botbin.embedding import bundled_model_path
from botbin.service import MemoryService
from common import botbin_exe, load_average, log, median, percentile, r

REPO = Path(__file__).resolve().parents[1]
OBSIDIAN_HELP = (REPO / ".." / "shared" / "data" / "obsidian-help" / "en").resolve()
QUERIES = REPO / "bench" / "data" / "obsidian_queries.jsonl"
PEER_VENV = REPO / "bench" / "out" / "peer-venv"
PEER_PACKAGES = (["torch==2.13.0"], ["memsearch[local]"])  # torch first: the CPU build on this disk, no CUDA
K = 10
FETCH = 30  # chunks asked of each tool per query; their notes, first occurrence first, are ranked for hit@k
KNOWN_MEMSEARCH = {
    "index_s": 50,
    "chunks": 1643,
    "noop_reindex_s": 7,
    "peak_rss_mb": 1290,
    "query_ms": 110,
    "source": "figures quoted in the issue for this vault (another machine)",
}
COLLECTION = "bench_obsidian"
MIB = 1024 * 1024


def tail(text: str, n: int = 1500) -> str:
    return text.strip()[-n:]


def ensure_peer(reinstall: bool) -> dict[str, Any]:
    """Create (or reuse) the memsearch venv. Returns its versions, or ``error`` with why it failed."""
    py, exe = PEER_VENV / "bin" / "python", PEER_VENV / "bin" / "memsearch"
    info: dict[str, Any] = {"venv": str(PEER_VENV.relative_to(REPO)), "packages": [" ".join(p) for p in PEER_PACKAGES]}
    if reinstall or not exe.exists():
        start = time.perf_counter()
        steps = [[sys.executable, "-m", "venv", "--clear", str(PEER_VENV)]]
        steps += [[str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", *p] for p in PEER_PACKAGES]
        for cmd in steps:
            log(f"peer install: {' '.join(cmd[-2:])}")
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            except subprocess.TimeoutExpired:
                return {**info, "error": f"timed out after 1800 s: {' '.join(cmd)}"}
            if proc.returncode != 0:
                return {**info, "error": f"exit {proc.returncode}: {' '.join(cmd)}: {tail(proc.stderr + proc.stdout)}"}
        info["install_s"] = r(time.perf_counter() - start, 1)
    else:
        info["reused"] = True
    probe = (
        "import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in "
        "('memsearch', 'torch', 'sentence-transformers', 'transformers', 'pymilvus', 'milvus-lite')}))"
    )
    proc = subprocess.run([str(py), "-c", probe], capture_output=True, text=True)
    if proc.returncode != 0:
        return {**info, "error": f"version probe failed: {tail(proc.stderr)}"}
    info["versions"] = json.loads(proc.stdout)
    return info


def tree_rss_mb(pid: int) -> float:
    """Resident MiB of ``pid`` and all its descendants (Linux /proc)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status", encoding="ascii", errors="replace") as fh:
                total += next((int(x.split()[1]) for x in fh if x.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return total / 1024


def measured(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 900) -> dict[str, Any]:
    """Run ``cmd``: wall seconds, exit code, stdout/stderr, peak RSS of its process tree (sampled every 50 ms)
    and the child's own ru_maxrss."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd, text=True)
        peak, done = [0.0], threading.Event()

        def sample() -> None:
            while not done.wait(0.05):
                peak[0] = max(peak[0], tree_rss_mb(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        deadline = threading.Timer(timeout, proc.kill)
        deadline.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        deadline.cancel()
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {
            "seconds": seconds,
            "rc": proc.returncode,
            "stdout": out.read(),
            "stderr": err.read(),
            "peak_tree_rss_mb": peak[0],
            "maxrss_mb": usage.ru_maxrss / 1024,
        }


def checked(res: dict[str, Any], what: str) -> dict[str, Any]:
    if res["rc"] != 0:
        raise RuntimeError(f"{what} exited {res['rc']}: {tail(res['stderr'] + res['stdout'])}")
    return res


def copy_vault(dst: Path, max_notes: int | None) -> None:
    """The Obsidian help vault, or only its first ``max_notes`` notes (sorted paths; a quick smoke test)."""
    if max_notes is None:
        shutil.copytree(OBSIDIAN_HELP, dst)
        return
    for src in sorted(OBSIDIAN_HELP.rglob("*.md"))[:max_notes]:
        (dst / src.relative_to(OBSIDIAN_HELP)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst / src.relative_to(OBSIDIAN_HELP))


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


BOTBIN_QUERY = """import json, resource, sys, time
from pathlib import Path
from botbin.index.blas import single_threaded_blas
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
cfg = json.loads(sys.argv[1])
single_threaded_blas()  # as botbin's MCP and language servers run: OpenBLAS threads would spin against the model's
svc = MemoryService(Path(cfg["ws"]), {"vault": True})
warm = SearchRequest(query="warm up: load the model and the index", k=cfg["k"], show_all=True)
t = time.perf_counter(); svc.search(warm); load = time.perf_counter() - t
out = []
for q in cfg["queries"]:
    t = time.perf_counter(); hits = svc.search(SearchRequest(query=q, k=cfg["fetch"], show_all=True)).hits
    ms = (time.perf_counter() - t) * 1000
    # not timed: the query vector is cached by now
    best = svc.search(SearchRequest(query=q, k=cfg["k"], best_per_note=True, show_all=True)).hits
    out.append({"ms": ms, "paths": [h.path for h in hits], "best_per_note": [h.path for h in best]})
print(json.dumps({"load_and_first_search_s": load, "results": out,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

MEMSEARCH_QUERY = """import asyncio, json, os, resource, sys, time
cfg = json.loads(sys.argv[1])
from memsearch import MemSearch
t = time.perf_counter()
ms = MemSearch([cfg["vault"]], embedding_provider="local", embedding_model=cfg["model"], milvus_uri=cfg["db"],
               collection=cfg["collection"])
async def main():
    await ms.search("warm up: load the model and the index", top_k=cfg["fetch"])
    load = time.perf_counter() - t
    out = []
    for q in cfg["queries"]:
        t0 = time.perf_counter(); hits = await ms.search(q, top_k=cfg["fetch"])
        out.append({"ms": (time.perf_counter() - t0) * 1000,
                    "paths": [os.path.relpath(h["source"], cfg["vault"]) for h in hits]})
    return load, out
load, out = asyncio.run(main())
ms.close()
print(json.dumps({"load_and_first_search_s": load, "results": out,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def quality(rows: list[dict[str, Any]], ranked: list[list[str]]) -> dict[str, Any]:
    """hit@5, hit@10 and MRR@10 of the target note, by its rank among the distinct notes of the chunks returned
    (first occurrence first), and the same with any of target + ``also`` counted relevant; overall and per
    ``kind``."""

    def scores(pairs: list[tuple[dict[str, Any], list[str]]], relevant: bool) -> dict[str, float]:
        ranks = []
        for row, paths in pairs:
            good = {row["target"], *row.get("also", [])} if relevant else {row["target"]}
            notes = list(dict.fromkeys(paths))[:K]
            ranks.append(next((i + 1 for i, p in enumerate(notes) if p in good), None))
        n = max(1, len(ranks))
        return {
            "hit_at_5": r(sum(1 for x in ranks if x and x <= 5) / n),
            "hit_at_10": r(sum(1 for x in ranks if x and x <= 10) / n),
            "mrr_at_10": r(sum(1 / x for x in ranks if x and x <= 10) / n),
        }

    pairs = list(zip(rows, ranked, strict=True))
    kinds = sorted({row.get("kind", "") for row in rows})
    return {
        "queries": len(rows),
        "target": scores(pairs, False),
        "target_or_also": scores(pairs, True),
        "by_kind": {
            k: {
                "queries": sum(1 for row, _ in pairs if row.get("kind", "") == k),
                **scores([p for p in pairs if p[0].get("kind", "") == k], False),
            }
            for k in kinds
        },
    }


def query_child(cmd: list[str], cfg: dict[str, Any], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    res = checked(measured([*cmd, json.dumps(cfg)], env, cwd), "query child")
    data: dict[str, Any] = json.loads(res["stdout"].strip().splitlines()[-1])
    ms = [x["ms"] for x in data["results"]]
    best = {k: [x[k] for x in data["results"]] for k in ("best_per_note",) if k in data["results"][0]}
    return {
        "paths": [x["paths"] for x in data["results"]],
        **best,
        "load_and_first_search_s": r(data["load_and_first_search_s"]),
        "p50_ms": r(percentile(ms, 50), 2),
        "p95_ms": r(percentile(ms, 95), 2),
        "mean_ms": r(sum(ms) / len(ms), 2),
        "max_ms": r(max(ms), 2),
        "process_peak_rss_mb": r(res["peak_tree_rss_mb"], 1),
    }


def bench_memsearch(
    tmp: Path, model: Path, rows: list[dict[str, Any]], runs: int, max_notes: int | None
) -> dict[str, Any]:
    vault, db, home = tmp / "ms-vault", tmp / "milvus.db", tmp / "ms-home"
    copy_vault(vault, max_notes)
    home.mkdir()
    # HOME keeps memsearch's ~/.memsearch config out of the user's home; the hub stays off.
    env = {**os.environ, "HOME": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    exe = str(PEER_VENV / "bin" / "memsearch")
    cmd = [exe, "index", str(vault), "-p", "local", "-m", str(model), "--milvus-uri", str(db), "-c", COLLECTION]
    log("memsearch: cold index")
    cold = checked(measured(cmd, env, tmp), "memsearch index")
    found = re.search(r"Indexed (\d+) chunks", cold["stdout"])
    log(f"memsearch: cold index {cold['seconds']:.1f} s; no-op re-index x{runs}")
    noop = [checked(measured(cmd, env, tmp), "memsearch index (no-op)") for _ in range(runs)]
    stats = checked(measured([exe, "stats", "--milvus-uri", str(db), "-c", COLLECTION], env, tmp), "memsearch stats")
    total = re.search(r"Total indexed chunks: (\d+)", stats["stdout"])
    log(f"memsearch: {len(rows)} queries")
    cfg = {
        "vault": str(vault.resolve()),
        "model": str(model),
        "db": str(db),
        "collection": COLLECTION,
        "fetch": FETCH,
        "queries": [row["q"] for row in rows],
    }
    q = query_child([str(PEER_VENV / "bin" / "python"), "-c", MEMSEARCH_QUERY], cfg, env, tmp)
    return {
        "command": "memsearch index VAULT -p local -m MODEL_DIR --milvus-uri DB -c " + COLLECTION,
        "cold_index": {
            "seconds": r(cold["seconds"]),
            "chunks_reported": int(found.group(1)) if found else None,
            "peak_tree_rss_mb": r(cold["peak_tree_rss_mb"], 1),
            "child_maxrss_mb": r(cold["maxrss_mb"], 1),
        },
        "chunks": int(total.group(1)) if total else None,
        "noop_reindex": {
            "runs_s": [r(x["seconds"]) for x in noop],
            "median_s": r(median([x["seconds"] for x in noop])),
            "output": tail(noop[-1]["stdout"], 200),
        },
        "index_bytes_on_disk": dir_bytes(db),
        "query": q,
    }


def bench_botbin(tmp: Path, rows: list[dict[str, Any]], runs: int, max_notes: int | None) -> dict[str, Any]:
    ws = tmp / "bb-vault"
    copy_vault(ws, max_notes)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [botbin_exe(), "--workspace", str(ws), "--vault", "sync", "--json"]
    log("botbin: cold sync")
    cold = checked(measured(cmd, env, tmp), "botbin sync")
    log(f"botbin: cold sync {cold['seconds']:.1f} s; no-op re-sync x{runs}")
    noop = [checked(measured(cmd, env, tmp), "botbin sync (no-op)") for _ in range(runs)]
    status = json.loads(
        checked(
            measured([botbin_exe(), "--workspace", str(ws), "--vault", "status", "--json"], env, tmp), "botbin status"
        )["stdout"]
    )
    log(f"botbin: {len(rows)} queries")
    cfg = {"ws": str(ws), "k": K, "fetch": FETCH, "queries": [row["q"] for row in rows]}
    q = query_child([sys.executable, "-c", BOTBIN_QUERY], cfg, env, tmp)
    report = json.loads(cold["stdout"]) if cold["stdout"].strip() else {}
    store = MemoryService(ws, {"vault": True}).output_dir  # AIF-BIN files and the state file, not the notes
    return {
        "command": "botbin --workspace VAULT --vault sync --json",
        "cold_index": {
            "seconds": r(cold["seconds"]),
            "chunks_reported": report.get("chunksEmbedded"),
            "peak_tree_rss_mb": r(cold["peak_tree_rss_mb"], 1),
            "child_maxrss_mb": r(cold["maxrss_mb"], 1),
        },
        "chunks": status.get("chunks"),
        "noop_reindex": {
            "runs_s": [r(x["seconds"]) for x in noop],
            "median_s": r(median([x["seconds"] for x in noop])),
        },
        "index_bytes_on_disk": dir_bytes(store),
        "query": q,
    }


def ratio(a: float | None, b: float | None) -> float | None:
    return r(a / b, 3) if a is not None and b else None


def run(reinstall: bool, runs: int, limit: int | None, max_notes: int | None = None) -> dict[str, Any]:
    rows = [json.loads(x) for x in QUERIES.read_text(encoding="utf-8").splitlines() if x.strip()]
    if max_notes is not None:  # keep the queries whose target note was copied
        kept = {str(p.relative_to(OBSIDIAN_HELP)) for p in sorted(OBSIDIAN_HELP.rglob("*.md"))[:max_notes]}
        rows = [row for row in rows if row["target"] in kept]
    rows = rows[:limit]
    if not rows:
        raise SystemExit(f"no queries in {QUERIES} (for these notes)")
    model = bundled_model_path()
    out: dict[str, Any] = {
        "vault": str(OBSIDIAN_HELP),
        "queries_file": str(QUERIES.relative_to(REPO)),
        "model_dir": str(model),
        "k": K,
        "chunks_fetched_per_query": FETCH,
        "max_notes": max_notes,
        "load_average_1_5_15": {"start": load_average()},
        "known_memsearch_figures": KNOWN_MEMSEARCH,
    }
    peer = ensure_peer(reinstall)
    out["memsearch_install"] = peer
    with tempfile.TemporaryDirectory(prefix="botbin-peer-") as name:
        tmp = Path(name)
        bb = bench_botbin(tmp, rows, runs, max_notes)
        out["load_average_1_5_15"]["after_botbin"] = load_average()
        ms: dict[str, Any] | None = None
        if "error" not in peer:
            try:
                ms = bench_memsearch(tmp, model, rows, runs, max_notes)
            except (RuntimeError, OSError, ValueError) as exc:
                out["memsearch_error"] = str(exc)
        out["load_average_1_5_15"]["end"] = load_average()
    for side in (bb, ms):
        if side is not None:
            side["quality"] = quality(rows, side["query"].pop("paths"))
    bb["quality_best_per_note_k10"] = quality(rows, bb["query"].pop("best_per_note"))
    out["botbin"], out["memsearch"] = bb, ms
    if ms is not None:
        out["ratios_botbin_over_memsearch"] = {
            "cold_index_s": ratio(bb["cold_index"]["seconds"], ms["cold_index"]["seconds"]),
            "noop_reindex_s": ratio(bb["noop_reindex"]["median_s"], ms["noop_reindex"]["median_s"]),
            "peak_rss_index": ratio(bb["cold_index"]["peak_tree_rss_mb"], ms["cold_index"]["peak_tree_rss_mb"]),
            "peak_rss_query_process": ratio(bb["query"]["process_peak_rss_mb"], ms["query"]["process_peak_rss_mb"]),
            "query_p50_ms": ratio(bb["query"]["p50_ms"], ms["query"]["p50_ms"]),
            "query_p95_ms": ratio(bb["query"]["p95_ms"], ms["query"]["p95_ms"]),
            "index_bytes_on_disk": ratio(bb["index_bytes_on_disk"], ms["index_bytes_on_disk"]),
            "chunks": ratio(bb["chunks"], ms["chunks"]),
            "mrr_at_10_target": ratio(bb["quality"]["target"]["mrr_at_10"], ms["quality"]["target"]["mrr_at_10"]),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reinstall", action="store_true", help="recreate bench/out/peer-venv")
    parser.add_argument("--runs", type=int, default=3, help="no-op re-index runs per tool (median)")
    parser.add_argument("--limit", type=int, help="use only the first N queries")
    parser.add_argument("--max-notes", type=int, help="index only the first N notes (smoke test)")
    args = parser.parse_args()
    print(json.dumps(run(args.reinstall, args.runs, args.limit, args.max_notes), indent=2))


if __name__ == "__main__":
    main()
