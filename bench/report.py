"""One command for the benchmark report: run the benchmarks, keep their JSON, write docs/benchmarks.md + plots.

Run from the repo root with the venv active::

    python bench/report.py                 # every benchmark, full size (~1 h on 2 idle cores), then the report
    python bench/report.py --quick         # the small variants (CI: the harness never rots); report in bench/out
    python bench/report.py --render-only   # re-render docs/benchmarks.md from bench/out/results/*.json
    python bench/report.py --only scifact,locomo
    python bench/report.py --ci --out DIR  # CI: small runs from nothing (query, lifecycle, SciFact), < 2 min

Each benchmark runs in its own Python process (its peak memory is its own); its JSON goes to
``bench/out/results/NAME.json`` (``bench/out/quick/`` with --quick) and its progress to ``NAME.log``. A
benchmark that fails is reported as failed in the report; the others still run. Rendering is
``report_render.py``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from common import log
from registry import BY_NAME, REPORTED

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
#: What ``--ci`` runs: small variants that need no cache and no network (about a minute on 2 idle cores), so that the
#: harness and the renderer never rot; tests/test_bench_harness.py runs it in CI (registry.py: ``ci``).
CI = tuple(b.name for b in REPORTED if b.ci is not None)


def run_one(name: str, args: list[str], out: Path) -> None:
    """Run benchmark ``name`` with ``args``; write NAME.json (or a {"failed": ...} record) and NAME.log under
    ``out``."""
    script = BY_NAME[name].script
    started = time.perf_counter()
    with (out / f"{name}.log").open("w") as err:
        proc = subprocess.run(
            [sys.executable, str(BENCH / script), *args], stdout=subprocess.PIPE, stderr=err, text=True, cwd=REPO
        )
    seconds = round(time.perf_counter() - started, 1)
    try:
        result = json.loads(proc.stdout) if proc.returncode == 0 else None
    except json.JSONDecodeError:
        result = None
    if result is None:
        result = {"failed": f"exit code {proc.returncode}; see {name}.log", "stdout_tail": proc.stdout[-2000:]}
    result.setdefault("wall_s_total", seconds)
    (out / f"{name}.json").write_text(json.dumps(result, indent=1))
    log(f"{name}: {'failed' if 'failed' in result else 'done'} in {seconds} s")


def hand_written(markdown: str) -> list[str]:
    """The ``## `` sections of ``markdown`` whose heading says "hand-written", each as one block of text."""
    blocks, current = [], None
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = [] if "hand-written" in line else None
            if current is not None:
                blocks.append(current)
        if current is not None:
            current.append(line)
    return ["\n".join(b).rstrip("\n") + "\n" for b in blocks]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small variants only; the report goes to bench/out")
    parser.add_argument("--render-only", action="store_true", help="render from the saved JSON, run nothing")
    parser.add_argument("--ci", action="store_true", help=f"quick variants of {', '.join(CI)} only (CI)")
    parser.add_argument("--only", default="", help="comma-separated benchmark names (default: all)")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default bench/out/results)")
    args = parser.parse_args()
    args.quick = args.quick or args.ci
    out = args.out or BENCH / "out" / ("quick" if args.quick else "results")
    out.mkdir(parents=True, exist_ok=True)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(
        CI if args.ci else (b.name for b in REPORTED)
    )
    unknown = sorted(set(names) - {b.name for b in REPORTED})
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; known: {[b.name for b in REPORTED]}")
    if not args.render_only:
        for name in names:
            benchmark = BY_NAME[name]
            run_args = benchmark.ci if args.ci else benchmark.quick if args.quick else benchmark.full
            if run_args is None:  # no small variant (too slow even when small, or it installs a second venv)
                continue
            log(f"running {name}")
            run_one(name, list(run_args), out)
    from report_render import render

    target = out / "benchmarks.md" if args.quick else REPO / "docs" / "benchmarks.md"
    kept = hand_written(target.read_text(encoding="utf-8")) if target.is_file() else []
    render(out, target, quick=args.quick)
    if kept:  # sections a person wrote (their heading says "hand-written") survive a re-render, after the rest
        target.write_text(target.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + "\n".join(kept) + "\n")
    log(f"wrote {target}")


if __name__ == "__main__":
    main()
