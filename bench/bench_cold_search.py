"""Cold `botbin search` against `python -c "import torch"` in the same run, and warm query latency, with the real
all-MiniLM-L6-v2 through botbin's verified ONNX export (issue 21: a cold search must beat the torch import).

A copy of the Obsidian help vault is synced once in-process (a temp model folder of symlinks to the packaged
model receives the export, so the installed package is never written). Then, alternating so that other load
hits all alike, ``--runs`` times each: ``python -c "import torch"``, a cold ``botbin search`` subprocess (ONNX),
and a cold ``botbin search`` with ``BOTBIN_EMBED_BACKEND=torch`` (today's path; ``--torch-runs``). One more
search runs in a probe child that reports whether torch / sentence-transformers were imported. Then
``botbin serve`` starts on the same workspace and ``--runs`` searches are timed with the server running
(warm answers over its socket: the target is <= 0.3 s on an idle machine) beside a bare ``python -c pass``
(the floor under today's load), with a probe of the modules such a search imports.

Run from the repo root with the venv active: ``python bench/bench_cold_search.py [--quick]`` (``--quick``: the
first 30 notes, 3 runs, 1 torch run). Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from botbin.embedding import bundled_model_path, resolve_model, shared_embedder
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import botbin_exe, load_average, log, median, percentile, r

REPO = Path(__file__).resolve().parents[1]
OBSIDIAN_HELP = (REPO / ".." / "shared" / "data" / "obsidian-help" / "en").resolve()
QUERIES = REPO / "bench" / "data" / "obsidian_queries.jsonl"
HEAVY = ("torch", "sentence_transformers", "transformers", "onnxruntime", "numpy", "tokenizers")
PROBE = """import json, sys
from botbin.cli import main
rc = main(sys.argv[1:])
heavy = ("torch", "sentence_transformers", "transformers", "onnxruntime", "numpy", "tokenizers")
mods = sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in heavy})
print("PROBE " + json.dumps({"rc": rc, "heavy_modules": mods}), file=sys.stderr)
"""


def copy_vault(dst: Path, max_notes: int | None) -> None:
    for src in sorted(OBSIDIAN_HELP.rglob("*.md"))[:max_notes]:
        (dst / src.relative_to(OBSIDIAN_HELP)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst / src.relative_to(OBSIDIAN_HELP))


def wall(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return seconds


def with_server(
    search: list[str], queries: list[str], runs: int, env: dict[str, str]
) -> tuple[list[float], list[float], Any]:
    """Wall times of ``search`` while ``botbin serve`` runs on the same workspace and settings (warm answers over
    its socket), and a probe of one such search (the modules it imported; the server's -v line)."""
    serve = subprocess.Popen([*search[:1], "serve", *search[2:-2]], stderr=subprocess.PIPE, text=True, env=env)
    assert serve.stderr is not None
    try:
        for line in serve.stderr:
            if line.startswith("botbin: serving"):
                break
        else:
            raise RuntimeError(f"botbin serve exited {serve.wait()}")
        times, floor = [], []
        for i in range(runs):
            floor.append(wall([sys.executable, "-c", "pass"], env))  # the floor: a bare Python start
            times.append(wall([*search, queries[(i + 7) % len(queries)]], env))
        log("search with a server: " + " ".join(f"{t:.3f}" for t in times))
        log("python -c pass: " + " ".join(f"{t:.3f}" for t in floor))
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, *search[1:], "-v", queries[0]], capture_output=True, text=True, env=env
        )
        probe = json.loads([x for x in proc.stderr.splitlines() if x.startswith("PROBE ")][-1][6:])
        probe["answered_by_server"] = "answered by the server" in proc.stderr
        return times, floor, probe
    finally:
        serve.terminate()
        serve.wait(30)


def run(max_notes: int | None, runs: int, torch_runs: int) -> dict[str, Any]:
    queries = [json.loads(x)["q"] for x in QUERIES.read_text(encoding="utf-8").splitlines() if x.strip()]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        model = tmp / "model"
        model.mkdir()
        for src in (p for p in bundled_model_path().iterdir() if p.name != ".botbin-onnx"):  # not its export
            (model / src.name).symlink_to(src)
        ws = tmp / "vault"
        copy_vault(ws, max_notes)
        settings = {"vault": True, "model": str(model)}
        env = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache"), "XDG_RUNTIME_DIR": str(tmp)}
        env.pop("BOTBIN_EMBED_BACKEND", None)
        outcome = shared_embedder(resolve_model(str(model))).ensure_export()
        assert outcome is not None and outcome.path is not None, outcome
        svc = MemoryService(ws, settings, env={})
        sync_start = time.perf_counter()
        report = svc.sync()
        sync_s = time.perf_counter() - sync_start
        log(f"synced {report.chunks_embedded} chunks in {sync_s:.1f} s (ONNX)")
        warm = []
        svc.search(SearchRequest(query=queries[0], show_all=True))
        for q in queries[1:41]:
            start = time.perf_counter()
            svc.search(SearchRequest(query=q, show_all=True))
            warm.append(time.perf_counter() - start)
        search = [botbin_exe(), "search", "--workspace", str(ws), "--vault", "--model", str(model), "-k", "5"]
        times: dict[str, list[float]] = {"import_torch": [], "cold_search_onnx": [], "cold_search_torch": []}
        for i in range(runs):
            times["import_torch"].append(wall([sys.executable, "-c", "import torch"], env))
            times["cold_search_onnx"].append(wall([*search, queries[i % len(queries)]], env))
            if i < torch_runs:
                times["cold_search_torch"].append(
                    wall([*search, queries[i % len(queries)]], {**env, "BOTBIN_EMBED_BACKEND": "torch"})
                )
            log(" ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if len(v) > i))
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, *search[1:], queries[0]], capture_output=True, text=True, env=env
        )
        probe = json.loads([x for x in proc.stderr.splitlines() if x.startswith("PROBE ")][-1][6:])
        times["search_with_server"], times["python_startup"], warm_probe = with_server(search, queries, runs, env)
        med = {k: median(v) for k, v in times.items() if v}
        return {
            "notes": len(report.added),
            "chunks": report.chunks_embedded,
            "sync_onnx_s": r(sync_s, 2),
            "export": {"seconds": r(outcome.seconds, 2), "min_cosine": outcome.min_cosine},
            "runs": {k: [r(x, 3) for x in v] for k, v in times.items()},
            "median_s": {k: r(v, 3) for k, v in med.items()},
            "ratio_cold_search_onnx_over_import_torch": r(med["cold_search_onnx"] / med["import_torch"], 3),
            "ratio_cold_search_onnx_over_torch_path": (
                r(med["cold_search_onnx"] / med["cold_search_torch"], 3) if "cold_search_torch" in med else None
            ),
            "target_met": med["cold_search_onnx"] < med["import_torch"],
            "ratio_search_with_server_over_import_torch": r(med["search_with_server"] / med["import_torch"], 3),
            "target_with_server_met": med["search_with_server"] <= 0.3,
            "probe": probe,
            "probe_with_server": warm_probe,
            "warm_query_ms": {
                "p50": r(1000 * median(warm), 2),
                "p95": r(1000 * percentile(warm, 95), 2),
                "n": len(warm),
            },
            "load_average_1_5_15": load_average(),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 notes, 3 runs, 1 torch run")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--torch-runs", type=int, default=None)
    args = parser.parse_args()
    runs = args.runs or (3 if args.quick else 7)
    torch_runs = args.torch_runs if args.torch_runs is not None else (1 if args.quick else 3)
    print(json.dumps(run(30 if args.quick else None, runs, torch_runs), indent=1))


if __name__ == "__main__":
    main()
