"""The benchmark harness never rots: ``bench/report.py --ci`` runs its small variants from nothing (query latency
at 10k chunks and the memo lifecycle, both model-free; SciFact on a tiny corpus with the real model, when
``../shared/data`` is there) and renders the report with its plots (issue 10)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_report_ci_runs_and_renders(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(REPO / "bench" / "report.py"), "--ci", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    shared = (REPO.parent / "shared" / "data" / "scifact").is_dir()
    for name in ("query", "lifecycle", "scifact") if shared else ("query", "lifecycle"):
        result = json.loads((tmp_path / f"{name}.json").read_text())
        assert "failed" not in result, (name, result, (tmp_path / f"{name}.log").read_text()[-2000:])
    lifecycle = json.loads((tmp_path / "lifecycle.json").read_text())
    assert lifecycle["chunks"] > 1000 and lifecycle["search_ranked_reinforced"]["p50_ms"] > 0
    report = (tmp_path / "benchmarks.md").read_text()
    if shared:
        scifact = json.loads((tmp_path / "scifact.json").read_text())
        assert scifact["tiny"] and scifact["queries"] == 40 and scifact["sync"]["chunks_embedded"] > 500
        assert scifact["results"]["hybrid"]["ndcg@10"] > 0.5  # 40 queries over ~500 abstracts: far above chance
        assert "tiny corpus" in report and "scifact_recall_at_k.png" in report
    assert "_Quick run" in report and "## Memo lifecycle" in report and "`seed_memos_s`" in report
    assert "query_latency.png" in report and (tmp_path / "benchmarks" / "query_latency.png").stat().st_size > 1000
    assert not (REPO / "docs" / "benchmarks.md").read_text().startswith("# botbin benchmarks\n\n_Quick run")
