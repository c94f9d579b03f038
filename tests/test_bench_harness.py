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
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "report.py"), "--ci", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        check=False,
    )
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
    assert "_Quick run" in report and "## Memo lifecycle" in report and "Seeding the memos" in report
    assert "| query p95 < 10 ms at 100,000 chunks (1 BLAS thread) | – | no figure |" in report  # --ci: 10k only
    assert "query_latency.png" in report and (tmp_path / "benchmarks" / "query_latency.png").stat().st_size > 1000
    assert not (REPO / "docs" / "benchmarks.md").read_text().startswith("# botbin benchmarks\n\n_Quick run")


def test_render_tolerates_missing_partial_and_failed_results(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from report_render import SECTIONS, render
    finally:
        sys.path.remove(str(REPO / "bench"))
    results = tmp_path / "results"
    results.mkdir()
    (results / "embed.json").write_text(json.dumps({"variants": {"plain": {"seconds": 2.0}, "botbin": {}}}))
    (results / "peer.json").write_text(json.dumps({"failed": "exit code 1; see peer.log"}))
    (results / "sync.json").write_text("{not json")
    (results / "lsp.json").write_bytes(b"\xff\xfe")
    (results / "query.json").write_text("[1, 2]")
    (results / "locomo.json").write_text(json.dumps({"layouts": ["best"], "targets_met": "yes"}))
    (results / "planted.json").write_text(json.dumps({"sizes": 5}))
    (results / "scifact.json").write_text(json.dumps({"results": {"hybrid": {"ndcg@10": "0.7"}}}))
    render(results, tmp_path / "benchmarks.md")
    report = (tmp_path / "benchmarks.md").read_text()
    assert "| SciFact test: default hybrid nDCG@10 ≥ 0.74 | – | no figure |" in report
    assert "| Obsidian help queries: MRR@10 botbin / memsearch > 1 | – | failed |" in report
    assert "| hover p95 < 50 ms (language server) | – | failed |" in report  # lsp.json is not UTF-8
    assert "| LoCoMo best layout: recall@5 ≥ 0.60 | – | no figure |" in report
    assert "| one-paragraph edit re-sync < 0.5 s | – | failed |" in report
    assert "_Not run: no `lifecycle.json`._" in report
    assert "_`peer` failed: exit code 1; see peer.log._" in report
    assert "sync.json is unreadable (JSONDecodeError" in report
    assert "query.json holds a list, not an object" in report and "_`planted.json` could not be rendered" in report
    assert "| plain | – | 1.000 |" in report and report.count("\n## ") == len(SECTIONS) + 1


def test_hand_written_sections_survive_a_re_render() -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from report import hand_written
    finally:
        sys.path.remove(str(REPO / "bench"))
    text = "# t\n\n## Rendered\n\nx\n\n## Mine (hand-written)\n\n| a |\n\n## Also rendered\n\ny\n"
    assert hand_written(text) == ["## Mine (hand-written)\n\n| a |\n"]
    assert [b.splitlines()[0] for b in hand_written((REPO / "docs" / "benchmarks.md").read_text())] == [
        line
        for line in (REPO / "docs" / "benchmarks.md").read_text().splitlines()
        if line.startswith("## ") and "hand-written" in line
    ]
