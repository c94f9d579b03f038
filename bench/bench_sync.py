"""Sync benchmark: cold sync vs the bare model, no-op and one-edit re-syncs, memory, disk, and a 10k-note vault.

Run from the repo root with the venv active: ``python bench/bench_sync.py [--quick]``.
Prints one JSON object on stdout; progress goes to stderr. Everything is written under a temp folder.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from botbin.chunking import ChunkerParams
from botbin.embedding import BUNDLED_MODEL_ID, bundled_model_path
from botbin.service import MemoryService
from botbin.sync.documents import prepare_note
from botbin.sync.engine import SyncReport
from common import (
    HashEmbedder,
    cli_probe,
    current_rss_mb,
    generate_vault,
    load_average,
    log,
    median,
    peak_rss_mb,
    r,
    run_cli,
    timed,
    timed_cpu,
)

REPO = Path(__file__).resolve().parents[1]
OBSIDIAN_HELP = (REPO / ".." / "shared" / "data" / "obsidian-help" / "en").resolve()
BATCH_SIZE = 32  # SentenceTransformer.encode's default batch size, and botbin's
REAL_10K_LIMIT_S = 180.0
VAULT = {"vault": True}


def aifbin_stats(ws: Path, svc: MemoryService) -> tuple[int, int]:
    """(bytes of all .aif-bin files, chunks recorded in the state file)."""
    size = sum(p.stat().st_size for p in svc.output_dir.rglob("*.aif-bin"))
    state, _ = svc.ws.state()
    return size, sum(e.chunks for e in state.files.values())


def prose_line(lines: list[bytes]) -> int | None:
    """Index of a middle paragraph line (starts a paragraph, begins with a letter, not in a fence)."""
    found: list[int] = []
    fence = front = False
    for i, raw in enumerate(lines):
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if i == 0 and line == "---":
            front = True
            continue
        if front:
            front = line != "---"
            continue
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence and len(line) >= 60 and line[0].isalpha() and (i == 0 or not lines[i - 1].strip()):
            found.append(i)
    return found[len(found) // 2] if found else None


def edit_resync(ws: Path, svc: MemoryService, rels: list[str], n: int) -> dict[str, Any]:
    """Append a sentence to one paragraph of ``n`` different notes, syncing after each."""
    candidates = [(rel, i) for rel in rels if (i := prose_line((ws / rel).read_bytes().split(b"\n"))) is not None]
    times, embedded, edited = [], [], []
    for k, (rel, i) in enumerate(random.Random(0).sample(candidates, n)):
        lines = (ws / rel).read_bytes().split(b"\n")
        cr = b"\r" if lines[i].endswith(b"\r") else b""
        lines[i] = lines[i].rstrip(b"\r") + f" Benchmark edit number {k}.".encode() + cr
        (ws / rel).write_bytes(b"\n".join(lines))
        seconds, report = timed(svc.sync)
        if report.modified != (rel,):
            raise RuntimeError(f"edit of {rel} synced as {report}")
        times.append(seconds)
        embedded.append(report.chunks_embedded)
        edited.append(rel)
    return {
        "runs_s": [r(t) for t in times],
        "median_s": r(median(times)),
        "chunks_embedded_per_edit": embedded,
        "notes_edited": edited,
    }


def embed_texts(svc: MemoryService, report: SyncReport) -> tuple[list[str], bool]:
    """The texts the model saw during ``report``'s sync (unique embed_text, first seen order), and whether
    re-chunking reproduced exactly the text_md5 recorded in the written files."""
    s = svc.settings
    params = ChunkerParams(min(s.target_tokens, svc.ws.models.meta.max_tokens), s.overlap_tokens, s.min_tokens)
    texts: dict[str, str] = {}
    match = True
    for rel in sorted(report.documents):
        prep = prepare_note(rel, (svc.root / rel).read_bytes(), svc.ws.models.counter, params)
        match &= [c.text_md5 for c in prep.chunks] == [c.text_md5 for c in report.documents[rel].chunks]
        for chunk in prep.chunks:
            texts.setdefault(chunk.text_md5, chunk.embed_text)
    return list(texts.values()), match


def obsidian(tmp: Path, runs: int = 5) -> dict[str, Any]:
    ws = tmp / "obsidian-help"
    shutil.copytree(OBSIDIAN_HELP, ws)
    svc = MemoryService(ws, VAULT)
    embedder = svc.ws.models.embedder
    inner = embedder.embed
    model_s: list[float] = []
    batches: list[int] = []

    def timed_embed(texts: list[str]) -> Any:
        seconds, out = timed(lambda: inner(texts))
        model_s.append(seconds)
        batches.append(len(texts))
        return out

    log("loading the model (warm-up embed)")
    load_s, _ = timed(lambda: embedder.embed(["warm up"]))
    rss_loaded = current_rss_mb()
    setattr(embedder, "embed", timed_embed)  # noqa: B010  (count the time spent in the model during sync)
    log(f"cold sync of {OBSIDIAN_HELP}")
    load_before = load_average()
    cold_s, cold_cpu, report = timed_cpu(lambda: svc.sync(keep_documents=True))
    load_after_cold = load_average()
    cold_model_s, cold_batches = sum(model_s), list(batches)
    size, chunks = aifbin_stats(ws, svc)
    notes = len(report.added)
    texts, texts_match = embed_texts(svc, report)  # before the edits below change the notes
    log(f"cold sync: {notes} notes, {chunks} chunks in {cold_s:.1f} s; no-op re-syncs")
    noop = [timed(svc.sync) for _ in range(runs)]
    if any(rep.changed or rep.chunks_embedded for _, rep in noop):
        raise RuntimeError("a no-op re-sync changed something")
    cli_version = [run_cli(["--version"]) for _ in range(runs)]
    cli_noop = [run_cli(["--workspace", str(ws), "--vault", "sync"]) for _ in range(runs)]
    probe = cli_probe(ws)
    log("one-paragraph edits")
    before = len(model_s)
    edits = edit_resync(ws, svc, sorted(report.documents), runs)
    edits["model_seconds_per_edit"] = [r(t) for t in model_s[before:]]
    rss_botbin = peak_rss_mb()

    log("baseline: plain SentenceTransformer.encode of the same texts")
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(bundled_model_path()), device="cpu", local_files_only=True)
    model.encode(["warm up"], batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False)
    base_s, base_cpu, vectors = timed_cpu(
        lambda: model.encode(
            texts, batch_size=BATCH_SIZE, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
    )
    stored = {c.text_md5: c.embedding for d in report.documents.values() for c in d.chunks}
    ours = np.stack(
        [
            stored[k]
            for k in dict.fromkeys(c.text_md5 for rel in sorted(report.documents) for c in report.documents[rel].chunks)
        ]
    )
    max_diff = float(np.abs(ours - np.asarray(vectors, dtype=np.float32)).max())
    return {
        "vault": str(OBSIDIAN_HELP),
        "notes": notes,
        "chunks": chunks,
        "torch_threads": _torch_threads(),
        "model_load_s": r(load_s),
        "cold_sync": {
            "seconds": r(cold_s),
            "cpu_seconds": r(cold_cpu),
            "chunks_per_s": r(chunks / cold_s, 2),
            "chunks_embedded": report.chunks_embedded,
            "model_seconds_inside_sync": r(cold_model_s),
            "non_model_seconds": r(cold_s - cold_model_s),
            "embed_calls": len(cold_batches),
            "embed_call_sizes": cold_batches,
        },
        "baseline_encode": {
            "seconds": r(base_s),
            "cpu_seconds": r(base_cpu),
            "texts": len(texts),
            "batch_size": BATCH_SIZE,
            "normalize_embeddings": True,
            "texts_match_written_files": texts_match,
            "max_abs_diff_vs_stored_vectors": max_diff,
            "chunks_per_s": r(len(texts) / base_s, 2),
        },
        "ratio_baseline_over_cold_sync": r(base_s / cold_s),
        "ratio_target": ">= 1.0",
        "ratio_cpu_time": r(base_cpu / cold_cpu),
        "load_average_1_5_15": {
            "before_cold_sync": load_before,
            "after_cold_sync": load_after_cold,
            "after_baseline": load_average(),
        },
        "noop_resync_inprocess": {
            "runs_s": [r(t) for t, _ in noop],
            "median_s": r(median([t for t, _ in noop])),
            "target_s": 0.3,
        },
        "noop_resync_cli": {
            "command": "botbin --workspace WS --vault sync",
            "runs_s": [r(t) for t in cli_noop],
            "median_s": r(median(cli_noop)),
            "cli_startup_floor_s": r(median(cli_version)),
            "startup_floor_command": f"botbin --version (median of {runs})",
            "probe": probe,
        },
        "edit_resync_warm_model": edits,
        "rss_mb_after_model_load": r(rss_loaded, 1),
        "peak_rss_mb_after_botbin_runs": r(rss_botbin, 1),
        "peak_rss_mb_incl_baseline_model": r(peak_rss_mb(), 1),
        "aifbin_bytes_total": size,
        "aifbin_bytes_per_chunk": r(size / chunks, 1),
        "embedding_bytes_per_chunk": svc.ws.models.meta.dim * 4,
    }


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


def big_vault(tmp: Path, n_notes: int, real_chunks_per_s: float | None, runs: int = 3) -> dict[str, Any]:
    ws = tmp / "vault-10k"
    log(f"generating {n_notes} synthetic notes")
    gen_s, (notes, nbytes) = timed(lambda: generate_vault(ws, n_notes))
    fake = HashEmbedder()
    svc = MemoryService(ws, VAULT, embedder=fake)
    log("cold sync with the hash embedder")
    cold_s, report = timed(svc.sync)
    size, chunks = aifbin_stats(ws, svc)
    log(f"{chunks} chunks in {cold_s:.1f} s; no-op re-syncs")
    noop = [timed(svc.sync) for _ in range(runs)]
    if any(rep.changed or rep.chunks_embedded for _, rep in noop):
        raise RuntimeError("a no-op re-sync changed something")
    est = chunks / real_chunks_per_s if real_chunks_per_s else None
    out: dict[str, Any] = {
        "notes": notes,
        "note_bytes": nbytes,
        "chunks": chunks,
        "generate_s": r(gen_s),
        "generator": "random.Random(0): title, 1-3 sections x 1-2 paragraphs of 25-90 Zipf-like words",
        "embedder": "FAKE HashEmbedder (bench/common.py): deterministic BLAKE2b-seeded 384-d unit vectors, "
        "no model; times botbin's own overhead only",
        "cold_sync_fake_embedder": {
            "seconds": r(cold_s),
            "chunks_per_s": r(chunks / cold_s, 1),
            "embed_calls": fake.calls,
            "chunks_embedded": report.chunks_embedded,
        },
        "noop_resync_inprocess": {
            "runs_s": [r(t) for t, _ in noop],
            "median_s": r(median([t for t, _ in noop])),
            "target_s": 1.0,
        },
        "aifbin_bytes_per_chunk": r(size / chunks, 1),
        "real_model_sync_estimate_s": r(est, 1) if est else None,
    }
    if est is not None and est < REAL_10K_LIMIT_S:
        log(f"real-model sync of the 10k vault (estimated {est:.0f} s)")
        resync_s, _ = timed(MemoryService(ws, VAULT).sync)
        out["real_model_sync_s"] = r(resync_s)
    else:
        # The CLI always embeds with the bundled model id; a vault synced under another id is fully
        # re-chunked and re-embedded. A real-model sync would take too long, so the workspace is re-synced
        # with the hash embedder claiming the bundled id: a no-op sync never embeds, so its cost is the same.
        out["real_model_sync_skipped"] = (
            f"estimated {est or float('nan'):.0f} s at the obsidian cold-sync rate, over the {REAL_10K_LIMIT_S:.0f} s "
            "limit; the vault was re-synced with the hash embedder reporting the bundled model id instead "
            "(vectors fake; only the no-op timings below use it)"
        )
        log("re-sync with the hash embedder under the bundled model id (full re-chunk)")
        resync_s, rep = timed(MemoryService(ws, VAULT, embedder=HashEmbedder(BUNDLED_MODEL_ID)).sync)
        out["model_change_full_resync_fake_s"] = r(resync_s)
    fresh = MemoryService(ws, VAULT)
    fresh_s, rep = timed(fresh.sync)
    out["noop_fresh_service_default_model"] = {
        "seconds": r(fresh_s),
        "changed": rep.changed,
        "embedder_created": fresh.ws.models._embedder is not None,
        "tokenizer_loaded": "counter" in fresh.ws.models.__dict__,
    }
    log("CLI no-op re-syncs of the 10k vault")
    cli = [run_cli(["--workspace", str(ws), "--vault", "sync"]) for _ in range(runs)]
    out["noop_resync_cli"] = {
        "runs_s": [r(t) for t in cli],
        "median_s": r(median(cli)),
        "target_s": 1.0,
        "probe": cli_probe(ws),
    }
    return out


def targets(result: dict[str, Any]) -> dict[str, bool]:
    o, big = result["obsidian_help"], result["vault_10k"]
    out = {
        "cold_sync_ratio_ge_1": o["ratio_baseline_over_cold_sync"] >= 1.0,
        "noop_173_inprocess_lt_0.3s": o["noop_resync_inprocess"]["median_s"] < 0.3,
        "noop_173_cli_lt_0.3s": o["noop_resync_cli"]["median_s"] < 0.3,
        "noop_never_loads_model": not o["noop_resync_cli"]["probe"]["model_loaded"],
    }
    if isinstance(big, dict):
        out["noop_10k_inprocess_lt_1s"] = big["noop_resync_inprocess"]["median_s"] < 1.0
        out["noop_10k_cli_lt_1s"] = big["noop_resync_cli"]["median_s"] < 1.0
        out["noop_never_loads_model"] &= not big["noop_resync_cli"]["probe"]["model_loaded"]
    return out


def run(quick: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="botbin-bench-") as name:
        tmp = Path(name)
        result: dict[str, Any] = {"obsidian_help": obsidian(tmp)}
        if quick:
            result["vault_10k"] = "skipped (--quick)"
        else:
            rate = result["obsidian_help"]["cold_sync"]["chunks_per_s"]
            result["vault_10k"] = big_vault(tmp, 10_000, rate)
        result["targets_met"] = targets(result)
        result["peak_rss_mb_process"] = r(peak_rss_mb(), 1)
        result["rss_mb_now"] = r(current_rss_mb(), 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="skip the 10,000-note vault")
    args = parser.parse_args()
    print(json.dumps(run(args.quick), indent=2))


if __name__ == "__main__":
    main()
