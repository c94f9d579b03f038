"""How often sync progress moves while a cold sync of the Obsidian help vault embeds (issue 22: never still
for more than 10 s). Progress counts chunks embedded out of chunks to embed; the baseline, measured in the same
sync, is the longest gap between two notes' outputs being written: what a note-counting bar shows at best.

Run from the repo root with the venv active: ``python bench/experiments/bench_progress.py [--quick]``. ``--quick`` syncs
the first 40 notes (sorted by path) rather than all 173. The vault is copied to a temp folder (../shared is
never written); the real bundled model embeds, with the backend the CLI would pick. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import _bench  # noqa: F401  (bench/ on the import path)

from botbin.aifbin import AifBinDocument
from botbin.service import MemoryService
from common import load_average, log, r

VAULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "obsidian-help" / "en"
TARGET_S = 10.0


def copy_vault(dst: Path, limit: int | None) -> int:
    notes = sorted(p for p in VAULT.rglob("*.md") if ".obsidian" not in p.parts)[:limit]
    for src in notes:
        out = dst / src.relative_to(VAULT)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out)
    return len(notes)


def longest_gap(times: list[float]) -> float:
    return max((b - a for a, b in itertools.pairwise(times)), default=0.0)


def run(quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp_name:
        root = Path(tmp_name) / "vault"
        n_notes = copy_vault(root, 40 if quick else None)
        service = MemoryService(root, {"vault": True})
        service.ws.models.embedder.embed(["warm up"])  # model load is not embedding
        reports: list[tuple[float, int, int]] = []
        written: list[float] = []
        patch = service.ws.index.patch

        def on_written(rel: str, doc: AifBinDocument) -> None:
            written.append(time.perf_counter())
            patch(rel, doc)

        service.ws.index.patch = on_written  # type: ignore[method-assign]
        started = time.perf_counter()
        report = service.sync(progress=lambda done, total: reports.append((time.perf_counter(), done, total)))
        elapsed = time.perf_counter() - started
    moving = [t for t, done, _ in reports if done > 0]
    first_embed = next((i for i, (_, done, _) in enumerate(reports) if done > 0), len(reports))
    embedding = [reports[first_embed - 1][0], *moving] if first_embed else moving
    gap = longest_gap(embedding)
    gaps = sorted(b - a for a, b in itertools.pairwise(embedding))
    note_gap = longest_gap([started, *written])
    totals = {total for _, _, total in reports[max(first_embed - 1, 0) :]}
    return {
        "bench": "progress",
        "quick": quick,
        "notes": n_notes,
        "chunks_embedded": report.chunks_embedded,
        "sync_s": r(elapsed, 2),
        "reports": len(reports),
        "reports_while_embedding": len(moving),
        "total_fixed_before_embedding": len(totals) == 1,
        "max_gap_s": r(gap, 2),
        "first_gap_s": r(embedding[1] - embedding[0], 2) if len(embedding) > 1 else None,
        "median_gap_s": r(gaps[len(gaps) // 2], 2) if gaps else None,
        "gaps_over_target": sum(g > TARGET_S for g in gaps),
        "baseline_note_writes_max_gap_s": r(note_gap, 2),
        "ratio_max_gap_vs_note_writes": r(gap / note_gap, 3) if note_gap else None,
        "target_max_gap_s": TARGET_S,
        "meets_target": gap <= TARGET_S,
        "load_average": load_average(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the first 40 notes only")
    args = parser.parse_args()
    log(f"bench_progress: syncing {'40' if args.quick else 'all'} help notes")
    print(json.dumps(run(args.quick), indent=2))


if __name__ == "__main__":
    main()
