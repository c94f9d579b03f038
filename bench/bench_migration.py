"""Model migration on the Obsidian help vault (issue 33): search latency while the index moves to another model,
no note lost at the switch, 0 chunks embedded switching back, and a SIGKILLed migration that resumes.

The second model is the bundled all-MiniLM-L6-v2 cut to its first 3 transformer layers, saved as a
sentence-transformers folder (the same tokenizer, another vector space), made here in the temp folder. A process
like a server (this one) keeps the index loaded and searches it while the migration runs in the background
(paced: ``BACKGROUND_DUTY``, ONNX Runtime on half the cores after the model's one-time ONNX export, which a child
process makes first); the idle p95 is measured in the same run, just before. Each search asks a query never asked
before (the query-vector cache would otherwise answer it). Then ``botbin sync`` migrates back (the bundled model's
tree was kept) and, with the second model's tree deleted, a ``botbin sync --model`` child is SIGKILLed mid-way
and run again.

A plain full re-embed with the second model (a ``botbin sync --model`` of a fresh copy of the same notes) is timed
in the same run, so the migration's wall time is given as a ratio to it.

Run from the repo root with the venv active: ``python bench/bench_migration.py [--notes 60] [--gap-ms 20]``
(``--notes 0``: the whole vault, several minutes on 2 cores). Prints one JSON
object on stdout; progress goes to stderr. Everything is written under a temp folder (the vault is copied there,
never into the repo).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from botbin.embedding import bundled_model_path
from botbin.service import MemoryService
from botbin.sync.model_trees import MODELS_DIR, read_record, tree_name
from botbin.wire.requests import SearchRequest
from botbin.workspace.migration import BACKGROUND_DUTY
from common import botbin_exe, load_average, log, percentile, r

REPO = Path(__file__).resolve().parents[1]
OBSIDIAN_HELP = (REPO / ".." / "shared" / "data" / "obsidian-help" / "en").resolve()
SETTINGS: dict[str, Any] = {"vault": True, "decay_weight": 0.0}
IDLE_SEARCHES = 150
TARGET_RATIO = 2.0


def copy_notes(dest: Path, notes: int) -> int:
    """The vault's first ``notes`` notes (sorted by path; 0: all) copied under ``dest``; returns how many."""
    chosen = sorted(OBSIDIAN_HELP.rglob("*.md"))
    chosen = chosen[:notes] if notes > 0 else chosen
    for note in chosen:
        target = dest / note.relative_to(OBSIDIAN_HELP)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, target)
    return len(chosen)


def plain_reembed(tmp: Path, notes: int, model: Path) -> dict[str, Any]:
    """Wall time of a plain full sync of a fresh copy with ``model`` (what a migration is compared with)."""
    fresh = Path(tmp) / "fresh"
    copy_notes(fresh, notes)
    began = time.perf_counter()
    report = cli_sync(fresh, "--model", str(model))
    return {"s": r(time.perf_counter() - began, 1), "chunks_embedded": report["chunksEmbedded"]}


def second_model(folder: Path) -> Path:
    """all-MiniLM-L6-v2 with its last 3 transformer layers dropped, saved as a sentence-transformers folder."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(bundled_model_path()), device="cpu", local_files_only=True)
    transformer: Any = model[0].auto_model
    transformer.encoder.layer = transformer.encoder.layer[:3]
    transformer.config.num_hidden_layers = 3
    model.save(str(folder))
    return folder


def queries(root: Path) -> list[str]:
    """Distinct questions made from the vault's headings, so no search is answered from the query cache."""
    seen: dict[str, None] = {}
    for note in sorted(root.rglob("*.md")):
        for line in note.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("#") and len(line) > 4:
                heading = line.lstrip("#").strip()
                for form in ("how do I {}", "what is {}", "where is {} explained", "{} settings"):
                    seen.setdefault(form.format(heading.lower()), None)
    return list(seen)


def timed_searches(
    svc: MemoryService, asked: list[str], until: Any, gap_s: float, limit: int = 10**9
) -> list[tuple[float, str]]:
    """(latency in s, migration phase) of searches asked one after the other while ``until()`` is False (at most
    ``limit``); the phase is ``export`` before the migration's progress record exists."""
    out: list[tuple[float, str]] = []
    models = svc.output_dir / MODELS_DIR
    while asked and len(out) < limit and not until():
        query = asked.pop()
        record = read_record(models)
        phase = record.phase if record is not None else "export"
        began = time.perf_counter()
        result = svc.search(SearchRequest(query=query, k=10, show_all=True), reinforce=False)
        out.append((time.perf_counter() - began, phase))
        assert result.hits, query
        time.sleep(gap_s)
    return out


def p95_ms(samples: list[float]) -> float | None:
    return r(percentile(samples, 95) * 1000, 1) if samples else None


def migrate_in_background(root: Path, model: Path, asked: list[str], gap_s: float) -> dict[str, Any]:
    """Idle p95, then searches during a background migration to ``model``; the switch's bookkeeping."""
    svc = MemoryService(root, {**SETTINGS, "model": str(model)})
    before = svc.status()
    svc.index()
    svc.search(SearchRequest(query="warm up the ranking"), reinforce=False)
    idle = [t for t, _ in timed_searches(svc, asked, lambda: False, gap_s, IDLE_SEARCHES)]
    log(f"idle: {len(idle)} searches, p95 {p95_ms(idle)} ms; migrating {before.files} notes in the background")
    began = time.perf_counter()
    assert svc.ws.migration.start_background()
    during = timed_searches(svc, asked, lambda: svc.ws.migration.wait(0.0), gap_s)
    svc.ws.migration.wait()
    elapsed = time.perf_counter() - began
    report = svc.ws.migration.last
    assert report is not None and report.switched, report
    after = svc.status()
    state, _ = svc.ws.state()
    by_phase: dict[str, list[float]] = {}
    for latency, phase in during:
        by_phase.setdefault(phase, []).append(latency)
    all_during = [t for t, _ in during]
    return {
        "notes_before": before.files,
        "notes_after": after.files,
        "tracked_on_disk": after.tracked,
        "notes_lost": before.files - len(state.files),
        "chunks_embedded": report.chunks_embedded,
        "migration_s": r(elapsed, 1),
        "model_after": after.model,
        "idle_searches": len(idle),
        "idle_p50_ms": r(percentile(idle, 50) * 1000, 1),
        "idle_p95_ms": p95_ms(idle),
        "during_searches": len(all_during),
        "during_p50_ms": r(percentile(all_during, 50) * 1000, 1) if all_during else None,
        "during_p95_ms": p95_ms(all_during),
        "during_p95_by_phase_ms": {phase: p95_ms(v) for phase, v in by_phase.items()},
        "searches_by_phase": {phase: len(v) for phase, v in by_phase.items()},
        "p95_ratio": r(percentile(all_during, 95) / percentile(idle, 95), 2) if all_during else None,
    }


def cli_sync(root: Path, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [botbin_exe(), "--workspace", str(root), "--vault", "sync", "--json", *args], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"botbin sync {' '.join(args)} exited {proc.returncode}: {proc.stderr[-800:]}")
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def killed_and_resumed(root: Path, model: Path) -> dict[str, Any]:
    """Delete ``model``'s kept tree, SIGKILL a ``botbin sync --model`` once a third of the notes are in the new
    tree, then run it again."""
    tree = root / "memory" / "aifbin" / MODELS_DIR / tree_name(f"local:{model.resolve()}")
    shutil.rmtree(tree, ignore_errors=True)
    notes = len(list(root.rglob("*.md")))
    args = [botbin_exe(), "--workspace", str(root), "--vault", "sync", "--json", "--model", str(model)]
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 900
    while child.poll() is None and time.monotonic() < deadline:
        if len(list(tree.rglob("*.aif-bin"))) >= notes // 3:
            break
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    code = child.wait()
    written = len(list(tree.rglob("*.aif-bin")))
    log(f"killed the migration (exit {code}) with {written} of {notes} notes in the new tree; resuming")
    resumed = cli_sync(root, "--model", str(model))["migration"]
    return {
        "killed_exit": code,
        "notes_written_before_kill": written,
        "resumed_switched": resumed["switched"],
        "resumed_chunks_embedded": resumed["chunksEmbedded"],
        "resumed_chunks_reused": resumed["chunksReused"],
        "resumed_notes": resumed["notes"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=60, help="notes of the vault to use (0: all 173)")
    parser.add_argument("--gap-ms", type=float, default=20.0, help="pause between two searches (ms)")
    args = parser.parse_args()
    gap_s = args.gap_ms / 1000
    out: dict[str, Any] = {"load_average_start": load_average(), "cpus": os.cpu_count(), "duty": BACKGROUND_DUTY}
    with tempfile.TemporaryDirectory(prefix="botbin-bench-migration-") as tmp:
        root = Path(tmp) / "vault"
        out["notes"] = copy_notes(root, args.notes)
        model = second_model(Path(tmp) / "minilm-l3")
        log("a plain full re-embed with the second model, for comparison")
        out["plain_reembed"] = plain_reembed(Path(tmp), args.notes, model)
        log("cold sync with the bundled model")
        cold = cli_sync(root)
        out["cold_sync"] = {"notes": len(cold["added"]), "chunks_embedded": cold["chunksEmbedded"]}
        asked = queries(root)
        out["forward"] = migrate_in_background(root, model, asked, gap_s)
        log(f"forward: {out['forward']}")
        back = cli_sync(root)["migration"]
        out["back"] = {k: back[k] for k in ("switched", "notes", "chunksEmbedded", "elapsedMs")}
        log(f"back: {out['back']}")
        out["kill"] = killed_and_resumed(root, model)
        log(f"kill: {out['kill']}")
    forward = out["forward"]
    out["ratios"] = {
        "migration_vs_plain_reembed_wall": r(forward["migration_s"] / max(out["plain_reembed"]["s"], 1e-9), 2),
        "search_p95_during_vs_idle": forward["p95_ratio"],
        "search_p50_during_vs_idle": r(forward["during_p50_ms"] / forward["idle_p50_ms"], 2)
        if forward["during_p50_ms"]
        else None,
        "back_chunks_embedded_vs_forward": r(out["back"]["chunksEmbedded"] / max(forward["chunks_embedded"], 1), 3),
    }
    out["targets"] = {
        "p95_during_le_2x_idle": forward["p95_ratio"] is not None and forward["p95_ratio"] <= TARGET_RATIO,
        "no_note_lost": forward["notes_lost"] == 0 and forward["notes_after"] == forward["notes_before"],
        "back_embeds_0": out["back"]["switched"] and out["back"]["chunksEmbedded"] == 0,
        "kill_resumes": out["kill"]["resumed_switched"]
        and out["kill"]["resumed_chunks_embedded"] < forward["chunks_embedded"],
    }
    out["load_average_end"] = load_average()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
