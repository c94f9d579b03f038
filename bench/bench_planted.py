"""Planted facts: 10 specific facts stated in the first turns, then N turns of unrelated chatter, then the 10
questions. Conversation memory must still find every fact (recall@5, target 100 %).

Run from the repo root with the venv active: ``python bench/bench_planted.py [--quick]``.
Prints one JSON object on stdout (progress on stderr); ``--out FILE`` also writes it there.

Each size gets a fresh workspace. Every turn goes through ``TurnObserver.observe`` one at a time (as the MCP
tool does, embedding included) with the real all-MiniLM-L6-v2; the buffer is flushed and the workspace synced
once at the end (``botbin ingest``'s way). A fact is recalled when one of the top 5 hits of
``MemoryService.search(question)`` holds its answer word. Chatter is generated deterministically
(random.Random(0)) from templates over 24 topics; it never mentions a fact's answer word.
Reported: recall@5, per-turn write latency (observe, ms p50/p95), read latency (ms per search, p50),
sync seconds, storage (bytes of the soul files and of the .aif-bin store), and the gate's admission rate.
``--quick`` runs 300 turns of chatter only (well under a minute once the model is cached).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from botbin.memory.conversation.observer import TurnObserver
from botbin.memory.conversation.turns import Turn
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import load_average, log, median, percentile, r

#: (fact as the user says it, question, answer word that must appear in a top-5 hit)
FACTS = (
    ("My sister's dog is called Pretzel.", "What is my sister's dog called?", "Pretzel"),
    ("My blood type is AB negative.", "What is my blood type?", "AB negative"),
    ("I was born in Tromsø, in northern Norway.", "Where was I born?", "Tromsø"),
    ("My locker code at the gym is 4471.", "What is my gym locker code?", "4471"),
    ("My favourite dessert is pistachio baklava.", "What is my favourite dessert?", "baklava"),
    ("My landlord's name is Mr. Okonkwo.", "What is my landlord's name?", "Okonkwo"),
    ("I am allergic to penicillin.", "Which medicine am I allergic to?", "penicillin"),
    ("My first car was a green 1998 Volvo estate.", "What was my first car?", "Volvo"),
    ("My daughter's violin teacher is called Ingrid.", "Who is my daughter's violin teacher?", "Ingrid"),
    ("Our wedding anniversary is on the 14th of October.", "When is our wedding anniversary?", "October"),
)
TOPICS = (
    "the weather",
    "football",
    "a new recipe",
    "the traffic",
    "a TV series",
    "gardening",
    "a video game",
    "the news",
    "coffee",
    "a podcast",
    "running",
    "a board game",
    "the neighbours' cat",
    "a concert",
    "the office printer",
    "a hiking trail",
    "houseplants",
    "a museum visit",
    "a birthday party",
    "the bus timetable",
    "a crossword",
    "yoga class",
    "a bakery",
    "the laundry",
)
_OPENERS = ("Honestly,", "You know,", "By the way,", "So,", "Funny thing:", "Anyway,", "Well,", "Guess what:")
_TEMPLATES = (
    "{o} I was thinking about {t} again today and it made me smile.",
    "{o} did you hear anything new about {t}? I keep meaning to look it up.",
    "{o} {t} was the main thing we talked about at lunch, for {n} minutes at least.",
    "{o} I spent {n} minutes reading about {t} last night instead of sleeping.",
    "{o} my friend has strong opinions about {t}, which I find hilarious.",
    "{o} I'm not sure what to make of {t} lately, it changes every week.",
    "{o} we should plan something around {t} next weekend, maybe with {n} people.",
    "{o} {t} reminded me of something from years ago, I can't quite place it.",
)
_REPLIES = (
    "That sounds nice!",
    "Ha, I know what you mean.",
    "Tell me more about it sometime.",
    "Interesting, I had no idea.",
    "Same here, honestly.",
    "Oh really? Fun.",
)


def chatter(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` (role, content) turns of small talk, alternating user and assistant, deterministic."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for i in range(n):
        if i % 2:
            out.append(("assistant", rng.choice(_REPLIES) + f" What else about {rng.choice(TOPICS)}?"))
        else:
            text = rng.choice(_TEMPLATES).format(o=rng.choice(_OPENERS), t=rng.choice(TOPICS), n=rng.randint(2, 90))
            out.append(("user", text))
    return out


def run_size(n_chatter: int, root: Path) -> dict[str, Any]:
    service = MemoryService(root, env={})
    observer = TurnObserver(service.ws)
    observer.embed(["warm up"])  # the model loads outside the timings
    turns = [("user", fact) for fact, _, _ in FACTS] + chatter(n_chatter)
    write_ms: list[float] = []
    for i, (role, content) in enumerate(turns):
        turn = Turn(role, content, "planted", str(1 + i // 50))
        start = time.perf_counter()
        observer.observe(turn)
        write_ms.append((time.perf_counter() - start) * 1000)
        if i and i % 1000 == 0:
            log(f"{n_chatter}: {i} turns observed")
    observer.flush()
    started = time.perf_counter()
    report = service.sync()
    sync_s = time.perf_counter() - started
    read_ms: list[float] = []
    found: list[bool] = []
    shown: list[bool] = []
    for _, question, answer in FACTS:
        start = time.perf_counter()
        hits = service.search(SearchRequest(query=question, k=5, show_all=True)).hits
        read_ms.append((time.perf_counter() - start) * 1000)
        found.append(any(answer.casefold() in h.text.casefold() for h in hits))
        shown.append(any(answer.casefold() in h.snippet.casefold() for h in hits))
    soul_bytes = sum(p.stat().st_size for p in (root / service.settings.soul_dir).glob("*.md"))
    store_bytes = sum(p.stat().st_size for p in service.output_dir.rglob("*") if p.is_file())
    stats = observer.stats
    return {
        "turns": len(turns),
        "chatter_turns": n_chatter,
        "recall_at_5": r(sum(found) / len(found), 3),
        "missed": [q for (_, q, _), ok in zip(FACTS, found, strict=True) if not ok],
        "snippet_recall_at_5": r(sum(shown) / len(shown), 3),
        "write_ms_p50": r(median(write_ms), 2),
        "write_ms_p95": r(percentile(write_ms, 95), 2),
        "read_ms_p50": r(median(read_ms), 2),
        "read_ms_max": r(max(read_ms), 2),
        "sync_s": r(sync_s, 2),
        "soul_bytes": soul_bytes,
        "store_bytes": store_bytes,
        "chunks_embedded": report.chunks_embedded,
        "admitted": stats.admitted,
        "admission_rate": r(stats.admitted / max(stats.turns, 1), 3),
        "blocks_written": stats.blocks_written,
        "duplicates_skipped": stats.duplicates_skipped,
        "empty_buffers": stats.empty_buffers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="300 turns of chatter only")
    parser.add_argument("--sizes", default=None, help="comma-separated chatter sizes (default 1000,10000)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON result here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [300] if args.quick else [1000, 10000]
    started = time.perf_counter()
    results = []
    for size in sizes:
        log(f"planted facts + {size} turns of chatter")
        with tempfile.TemporaryDirectory(prefix="botbin-planted-") as tmp:
            results.append(run_size(size, Path(tmp) / "ws"))
        log(f"{size}: recall@5 {results[-1]['recall_at_5']}, write p50 {results[-1]['write_ms_p50']} ms")
    result = {
        "quick": args.quick,
        "sizes": results,
        "target_recall_at_5": 1.0,
        "targets_met": all(x["recall_at_5"] >= 1.0 for x in results),
        "seconds": r(time.perf_counter() - started, 1),
        "load_average": load_average(),
    }
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
