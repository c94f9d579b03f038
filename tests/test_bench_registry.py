"""bench/registry.py is the one list of benchmarks: every benchmark script of bench/ is in it once, every script it
names exists, and each one-off experiment of bench/experiments/ keeps its recorded results in that folder's
README.md (bench/README.md's command list is generated from the registry: tests/test_generated.py)."""

from __future__ import annotations

import sys

from conftest import REPO

BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

import registry  # noqa: E402


def test_every_benchmark_script_is_registered_once_and_exists() -> None:
    scripts = [b.script for b in registry.BENCHMARKS]
    assert len(scripts) == len(set(scripts)) and len(registry.BY_NAME) == len(scripts)
    on_disk = {p.name for p in BENCH.glob("*.py") if p.name.startswith(("bench_", "fuzz_"))}
    assert set(scripts) == on_disk


def test_the_report_and_run_all_runs_are_registered_benchmarks() -> None:
    assert [b.name for b in registry.REPORTED][:2] == ["scifact", "locomo"]
    assert {b.name for b in registry.BENCHMARKS if b.ci is not None} == {"query", "lifecycle", "scifact"}
    assert {b.name for b in registry.BENCHMARKS if b.run_all is not None} == {
        "sync",
        "query",
        "directives",
        "lsp",
        "lsp_load",
    }


def test_each_experiment_keeps_its_results_beside_it() -> None:
    readme = (BENCH / "experiments" / "README.md").read_text(encoding="utf-8")
    experiments = [p.name for p in (BENCH / "experiments").glob("*.py") if not p.name.startswith("_")]
    assert experiments
    for name in experiments:
        assert f"## `{name}`" in readme, name
        assert name not in {b.script for b in registry.BENCHMARKS}
