"""Save-to-searchable through the real ``botbin lsp`` at several vault sizes in the same run (issue 21: p95 <= 1 s
at ~30k chunks and at 100k, and <= 2x the figure at ~1k chunks).

Each vault is ``bench/common.generate_vault`` (``--notes``, default 334 and 10,000 notes: ~900 and ~27,000 chunks;
36,500 notes make ~100k), synced once in-process with the hash embedder under the bundled model's id, so the
server counts it up to date without the days the real model would take on 2 cores (bench_first_call.synthetic).
The server runs the real model: a saved note is embedded by it, and the query by it, so the model's per-save cost
is in the figure, and the vault's other vectors are index-side data only. Each save appends a sentence with a new
word to one note and sends ``didSave``; the time runs until ``botbin/search`` returns that sentence
(bench_lsp.save_to_searchable). The first save after start is a warm-up and is left out. Prints JSON: per size
p50/p95 and the ratio of each size's p95 over the smallest's.

Past the HNSW threshold (50k chunks) the vault's graph is built in-process before the server starts (``--ann
ready``, the default; ``ann_build_s``), so the saves are timed as a user sees them once the graph exists; ``--ann
cold`` deletes it instead, and the server builds it in the background while the saves are timed (both cores busy).

    python bench/bench_lsp_save.py [--notes 334,10000] [--saves 20] [--cache DIR] [--ann ready|cold]

``--cache DIR`` keeps the synced vaults there and reuses them (a 10k vault takes minutes to generate and sync).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_first_call import synthetic
from bench_lsp import save_to_searchable
from common import load_average, log, r
from lsp_client import running_server, stats


async def measure(root: Path, saves: int) -> dict[str, Any]:
    note = min(root.glob("folder-*/note-*.md"))
    async with running_server(root) as client:
        await client.protocol.send_request_async("botbin/search", {"query": "warm up the model", "k": 1})
        times = await save_to_searchable(client, root, saves + 1, note)
    return stats(times[1:])


def prepared(base: Path, notes: int) -> tuple[Path, dict[str, Any]]:
    root = base / f"synthetic-{notes}"
    if (root / ".done").exists():
        return root, {"notes": notes, "reused": True}
    log(f"generating and syncing {notes} notes (hash embedder)")
    info = synthetic(root, notes)
    (root / ".done").write_text("ok\n")
    return root, info


def hnsw(root: Path, mode: str) -> dict[str, Any]:
    """The vault's HNSW cache file as ``mode`` asks: "ready" (built in-process now unless whole already) or "cold"
    (deleted). Below the threshold neither does anything."""
    from botbin.embedding.model import BUNDLED_MODEL_ID
    from botbin.service import MemoryService
    from botbin.workspace.handle import ANN_FILE
    from common import HashEmbedder

    service = MemoryService(root, {"vault": True}, embedder=HashEmbedder(BUNDLED_MODEL_ID), env={})
    path = service.ws.state_path.with_name(ANN_FILE)
    if mode == "cold":  # before any load: a loaded index starts its own HNSW load, which would write the file again
        path.unlink(missing_ok=True)
        return {"ann": "cold"}
    index, _ = service.ws.index.get()
    start = time.perf_counter()
    index.prepare_ann()
    index.wait_ann(None)
    return {
        "chunks": len(index),
        "ann": "ready" if index.ann_active() else "exact scan (below the threshold)",
        "ann_build_s": r(time.perf_counter() - start, 1),
    }


async def run(args: argparse.Namespace, base: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"bench": "lsp_save", "saves": args.saves, "sizes": []}
    for notes in args.notes:
        root, info = prepared(base, notes)
        info |= hnsw(root, args.ann)
        log(f"{notes} notes ({info}): save-to-searchable through botbin lsp")
        entry = {**info, **await measure(root, args.saves)}
        log(json.dumps(entry))
        out["sizes"].append(entry)
    small = out["sizes"][0]["p95_ms"]
    out["p95_ratio_over_smallest"] = {str(e["notes"]): r(e["p95_ms"] / small, 2) for e in out["sizes"][1:]}
    out["load_average_1_5_15"] = load_average()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=lambda s: [int(x) for x in s.split(",")], default=[334, 10000])
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--cache", type=Path, default=None, help="keep the synced vaults here and reuse them")
    parser.add_argument("--ann", choices=("ready", "cold"), default="ready", help="HNSW graph built before, or not")
    args = parser.parse_args()
    if args.cache is not None:
        args.cache.mkdir(parents=True, exist_ok=True)
        print(json.dumps(asyncio.run(run(args, args.cache)), indent=2))
        return
    with tempfile.TemporaryDirectory(prefix="botbin-lsp-save-") as tmp:
        print(json.dumps(asyncio.run(run(args, Path(tmp))), indent=2))


if __name__ == "__main__":
    main()
