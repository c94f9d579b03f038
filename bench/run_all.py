"""Run every botbin benchmark and print one combined JSON object on stdout (progress on stderr).

Each benchmark runs in its own Python process, so that peak memory and memory growth are its own.

Run from the repo root with the venv active: ``python bench/run_all.py [--quick]``.
``--quick`` skips the 10,000-note synthetic vault of the sync benchmark and the 1M-chunk query size.
Which benchmarks, with which arguments: registry.py (``run_all``, ``quick_run_all``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from botbin import __version__
from common import load_average, log, r
from registry import BENCHMARKS


def environment() -> dict[str, Any]:
    import numpy
    import sentence_transformers
    import torch

    return {
        "botbin": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "numpy": numpy.__version__,
        "sentence_transformers": sentence_transformers.__version__,
    }


def run_script(name: str, *args: str) -> Any:
    """Run ``bench/NAME`` in a child Python (its stderr passes through) and return its JSON output."""
    script = Path(__file__).with_name(name)
    proc = subprocess.run([sys.executable, str(script), *args], stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed with exit code {proc.returncode}")
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="skip the 10,000-note vault and 1M chunks")
    args = parser.parse_args()
    started = time.perf_counter()
    result: dict[str, Any] = {
        "started_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "load_average_at_start": load_average(),
    }
    for benchmark in BENCHMARKS:
        if benchmark.run_all is None:
            continue
        log(f"{benchmark.name} benchmark")
        run_args = benchmark.quick_run_all if args.quick else benchmark.run_all
        result[benchmark.name] = run_script(benchmark.script, *run_args)
    result["environment"] = environment()
    result["total_seconds"] = r(time.perf_counter() - started, 1)
    result["load_average_at_end"] = load_average()
    log(f"done in {result['total_seconds']} s")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
