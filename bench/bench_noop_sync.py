"""No-op re-sync of a synthetic vault: this checkout against a baseline git revision, in the same run.

Run from the repo root with the venv active:
``python bench/bench_noop_sync.py --baseline-ref REV [--notes 10000] [--runs 5]``.
The vault (bench/common.py generate_vault) is cold-synced once by the baseline with the FAKE HashEmbedder
(so only botbin's own overhead is timed) and copied for this checkout, whose first sync upgrades the copy's
state file (untimed); then each side's no-op re-sync is timed in fresh processes, alternating the sides so
that machine load hits both alike. Wall and CPU (process) times are both kept: on a shared machine the CPU
time is the steadier figure. Prints one JSON object on stdout with the medians and their ratios (this
checkout / baseline); progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import generate_vault, load_average, log, median, r

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent

#: One process: time ``runs`` syncs (wall and CPU seconds) of one workspace with one side's code.
CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[2])
from common import HashEmbedder
from botbin.service import MemoryService
ws, runs = sys.argv[1], int(sys.argv[3])
svc = MemoryService(__import__("pathlib").Path(ws), {"vault": True}, embedder=HashEmbedder(), env={})
times, cpu = [], []
for _ in range(runs):
    start, start_cpu = time.perf_counter(), time.process_time()
    report = svc.sync()
    times.append(time.perf_counter() - start)
    cpu.append(time.process_time() - start_cpu)
print(json.dumps({"times": times, "cpu": cpu, "changed": report.changed}))
"""


def child(server: Path, ws: Path, runs: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(server)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(ws), str(BENCH), str(runs)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def summary(values: dict[str, list[float]]) -> dict[str, Any]:
    """Runs, median and minimum per side, and the ratios of the medians and minimums (current / baseline)."""
    out: dict[str, Any] = {
        name: {"runs": [r(t) for t in ts], "median": r(median(ts)), "min": r(min(ts))} for name, ts in values.items()
    }
    out["ratio_current_over_baseline"] = r(median(values["current"]) / median(values["baseline"]))
    out["min_ratio_current_over_baseline"] = r(min(values["current"]) / min(values["baseline"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline-ref", required=True, help="git revision to compare with (e.g. main)")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5, help="no-op syncs timed per side and round (1 process)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each side once per round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="botbin-noop-") as tmp_name:
        tmp = Path(tmp_name)
        base = tmp / "code-baseline"
        base.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.baseline_ref, "server"], cwd=REPO, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        sides = {"baseline": base / "server", "current": REPO / "server"}
        spaces = {"baseline": tmp / "vault", "current": tmp / "current"}
        log(f"generating {args.notes} notes")
        notes, nbytes = generate_vault(spaces["baseline"], args.notes)
        log("baseline: cold sync")
        child(sides["baseline"], spaces["baseline"], 1)
        shutil.copytree(spaces["baseline"], spaces["current"], symlinks=True)
        log("current: first sync of the copy (state file upgrade, untimed)")
        child(sides["current"], spaces["current"], 1)
        wall: dict[str, list[float]] = {name: [] for name in sides}
        cpu: dict[str, list[float]] = {name: [] for name in sides}
        for round_ in range(args.rounds):
            for name, server in sides.items():
                log(f"{name}: no-op syncs, round {round_ + 1}")
                out = child(server, spaces[name], args.runs)
                if out["changed"]:
                    raise RuntimeError(f"{name}: a no-op sync changed something")
                wall[name] += out["times"]
                cpu[name] += out["cpu"]
        print(
            json.dumps(
                {
                    "notes": notes,
                    "note_bytes": nbytes,
                    "baseline_ref": args.baseline_ref,
                    "embedder": "FAKE HashEmbedder (only botbin's own overhead)",
                    "load_average": load_average(),
                    "noop_wall_s": summary(wall),
                    "noop_cpu_s": summary(cpu),
                    "target_ratio_max": 1.1,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
