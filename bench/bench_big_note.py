"""One big note synced alone: seconds per MB of a 100 KB, 1 MB and 5 MB note (realistic markdown: headings,
lists, paragraphs, tables, code fences, wiki links), in the same run, and peak RSS of each in a child process.

The embedder is bench/common.py's HashEmbedder (a FAKE: vectors from hashes), so the figure is botbin's own
work (parse, directives, chunk, tokenize, write, index patch), the part that must be linear in the note size.
Target: seconds per MB of the 5 MB note <= 2x those of the 100 KB note. CPU seconds (process time) are
reported beside wall seconds: on a shared machine the wall figure follows the load more than the note.

Run from the repo root with the venv active: ``python bench/bench_big_note.py [--sizes 100,1000,5000]
[--profile KB]`` (sizes in KB; ``--profile`` prints a cProfile of that size to stderr). Prints one JSON
object on stdout.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import HashEmbedder, load_average, log, peak_rss_mb, r, timed

WORDS = [
    "memory",
    "note",
    "vault",
    "search",
    "index",
    "chunk",
    "sync",
    "model",
    "vector",
    "query",
    "editor",
    "server",
    "client",
    "link",
    "heading",
    "table",
    "list",
    "paragraph",
    "code",
    "block",
    "embedding",
    "cosine",
    "token",
    "budget",
    "context",
    "agent",
    "decision",
    "rule",
    "project",
    "meeting",
    "design",
    "review",
    "release",
    "bug",
    "fix",
    "test",
    "bench",
    "profile",
    "parse",
    "lexer",
    "window",
    "graph",
    "node",
    "edge",
    "cache",
    "file",
    "folder",
    "path",
]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(8, 20))).capitalize() + "."


def _section(rng: random.Random, n: int) -> str:
    parts = [f"## Section {n}: {' '.join(rng.choices(WORDS, k=3))}\n"]
    for _ in range(rng.randint(1, 3)):
        parts.append(" ".join(_sentence(rng) for _ in range(rng.randint(2, 6))) + f" See [[note {n % 97}]].\n")
    parts.append("\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 6))) + "\n")
    if n % 3 == 0:
        rows = [f"| {rng.choice(WORDS)} | {rng.randint(0, 999)} | {_sentence(rng)} |" for _ in range(5)]
        parts.append("| name | count | note |\n|---|---|---|\n" + "\n".join(rows) + "\n")
    if n % 4 == 0:
        body = "\n".join(f"    x_{i} = compute({i}, '{rng.choice(WORDS)}')" for i in range(rng.randint(3, 10)))
        parts.append(f"```python\ndef step_{n}():\n{body}\n```\n")
    if n % 5 == 0:
        parts.append(f"### Details {n}\n\n1. {_sentence(rng)}\n2. {_sentence(rng)}\n")
    return "\n".join(parts)


def big_note(size: int, seed: int = 0) -> str:
    """Deterministic markdown of about ``size`` bytes."""
    rng = random.Random(seed)
    parts, total, n = ["---\ntags: [big, bench]\n---\n# A big note\n"], 0, 0
    while total < size:
        n += 1
        parts.append(_section(rng, n))
        total += len(parts[-1])
    return "\n".join(parts)


def sync_one(kb: int, profile: bool) -> dict[str, Any]:
    """Sync a workspace holding one ``kb`` KB note with the hash embedder; seconds and chunks."""
    from botbin.service import MemoryService

    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm"  # imports and the tokenizer load are paid here, not in the timed sync
        warm.mkdir()
        (warm / "small.md").write_text(big_note(3000, seed=1), encoding="utf-8")
        MemoryService(warm, {"vault": True}, embedder=HashEmbedder()).sync()
        ws = Path(tmp) / "ws"
        ws.mkdir()
        text = big_note(kb * 1000)
        (ws / "big.md").write_text(text, encoding="utf-8")
        svc = MemoryService(ws, {"vault": True, "max_note_bytes": 50_000_000}, embedder=HashEmbedder())
        prof = cProfile.Profile() if profile else None
        if prof:
            prof.enable()
        cpu0 = time.process_time()
        seconds, report = timed(svc.sync)
        cpu_s = time.process_time() - cpu0
        if not report.chunks_embedded:
            raise RuntimeError(f"the {kb} KB note was not indexed: {report}")
        if prof:
            prof.disable()
            pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(30)
        mb = len(text.encode()) / 1e6
        return {
            "mb": r(mb, 3),
            "sync_s": r(seconds, 3),
            "s_per_mb": r(seconds / mb, 3),
            "cpu_s": r(cpu_s, 3),
            "cpu_s_per_mb": r(cpu_s / mb, 3),
            "chunks": report.chunks_embedded,
            "peak_rss_mb": r(peak_rss_mb(), 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--profile", type=int, default=0)
    parser.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child or args.profile:
        print(json.dumps(sync_one(args.child or args.profile, bool(args.profile))))
        return
    sizes: dict[str, Any] = {}
    for kb in (int(s) for s in args.sizes.split(",")):
        log(f"syncing a {kb} KB note")
        out = subprocess.run([sys.executable, __file__, "--child", str(kb)], capture_output=True, text=True, check=True)
        sizes[f"{kb}KB"] = json.loads(out.stdout)
    per_mb = [v["s_per_mb"] for v in sizes.values()]
    cpu_per_mb = [v["cpu_s_per_mb"] for v in sizes.values()]
    result = {
        "embedder": "HashEmbedder (fake; botbin's own work only)",
        "sizes": sizes,
        "ratio_s_per_mb_largest_over_smallest": r(per_mb[-1] / per_mb[0], 3),
        "ratio_cpu_s_per_mb_largest_over_smallest": r(cpu_per_mb[-1] / cpu_per_mb[0], 3),
        "load_average_1_5_15": load_average(),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
