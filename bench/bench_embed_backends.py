"""Sync-side encode throughput of botbin's two embedding backends on the Obsidian help vault's real chunks: torch
(``SentenceTransformerEmbedder``) against ONNX Runtime (``OnnxEmbedder`` on botbin's own verified export), both in
botbin's batches (``--batch``, default the ``batch_size`` setting's) sorted by token count, interleaved rounds so
that other load hits both alike.

Run from the repo root with the venv active: ``python bench/bench_embed_backends.py [--quick] [--rounds N]``.
``--quick`` embeds the chunks of the first 40 notes. The export is made (once) in a temp copy of the model folder
(symlinks), never in the installed package. Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench_embed import vault_chunks
from botbin.embedding import AutoEmbedder, bundled_model_path, resolve_model
from botbin.embedding.model import BATCH_SIZE
from botbin.embedding.onnx_backend import OnnxEmbedder
from common import load_average, log, peak_rss_mb, r


def linked_model(tmp: Path) -> Path:
    """A writable folder of symlinks to the packaged model's files (the export lands beside them)."""
    dst = tmp / "model"
    dst.mkdir()
    for src in (p for p in bundled_model_path().iterdir() if p.name != ".botbin-onnx"):  # not its export
        (dst / src.name).symlink_to(src)
    return dst


def cpu_wall(fn: Any) -> tuple[float, float, Any]:
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def run(quick: bool, rounds: int, batch: int = BATCH_SIZE) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        texts, _ = vault_chunks(tmp, 40 if quick else None)
        spec = resolve_model(str(linked_model(tmp)))
        auto = AutoEmbedder(spec, batch, env={"XDG_CACHE_HOME": str(tmp / "cache")})
        load_s, _, _ = cpu_wall(lambda: auto.torch.embed(["warm up"]))
        outcome = auto.ensure_export()
        assert outcome is not None and outcome.path is not None, outcome
        variants = {
            "torch": auto.torch.embed,
            "onnx": OnnxEmbedder(spec, outcome.path, batch).embed,
            "onnx_no_spin": OnnxEmbedder(spec, outcome.path, batch, spin=False).embed,
        }
        for embed in variants.values():
            embed(texts[:batch])  # warm up: sessions, thread pools
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
        vectors: dict[str, Any] = {}
        for _ in range(rounds):
            for name, embed in variants.items():
                wall, cpu, vectors[name] = cpu_wall(lambda e=embed: e(texts))
                times[name].append((wall, cpu))
                log(f"{name}: {wall:.1f} s wall, {cpu:.1f} s CPU")
        best = {k: min(w for w, _ in v) for k, v in times.items()}
        out: dict[str, Any] = {
            "chunks": len(texts),
            "batch": batch,
            "rounds": rounds,
            "threads_available": os.cpu_count(),
            "torch_model_load_s": r(load_s, 2),
            "export": {
                "seconds": r(outcome.seconds, 2),
                "min_cosine": outcome.min_cosine,
                "size_mb": r(outcome.path.stat().st_size / 2**20, 1),
            },
            "variants": {
                k: {
                    "best_wall_s": r(best[k], 3),
                    "walls_s": [r(w, 3) for w, _ in v],
                    "cpus_s": [r(c, 3) for _, c in v],
                    "chunks_per_s": r(len(texts) / best[k], 1),
                    "speedup_vs_torch": r(best["torch"] / best[k], 3),
                    "min_cosine_vs_torch": r(float((vectors[k] * vectors["torch"]).sum(axis=1).min()), 7),
                    "max_abs_diff_vs_torch": float(np.abs(vectors[k] - vectors["torch"]).max()),
                }
                for k, v in times.items()
            },
            "peak_rss_mb": r(peak_rss_mb(), 1),
            "load_average_1_5_15": load_average(),
        }
        shutil.rmtree(tmp, ignore_errors=True)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the first 40 notes' chunks")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds per backend (best is kept)")
    parser.add_argument("--batch", type=int, default=BATCH_SIZE, help="texts per model call (default: botbin's)")
    args = parser.parse_args()
    print(json.dumps(run(args.quick, args.rounds, args.batch), indent=1))


if __name__ == "__main__":
    main()
