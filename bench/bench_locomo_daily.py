"""LoCoMo through the daily-note layout: evidence recall of ``botbin sync`` + ``botbin search`` on the memory an
agent keeps, one dated note per session, each turn a bullet with its speaker, default settings.

Run from the repo root with the venv active: ``python bench/bench_locomo_daily.py [--quick] [--layouts ...]``.
Prints one JSON object on stdout; progress goes to stderr.

Data: ``../shared/data/locomo/locomo10.json`` (Maharana et al., ACL 2024; CC BY-NC 4.0; read in place, never
copied into the repo). Each conversation is its own plain workspace (no ``botbin.toml``: the default settings,
which track ``memory/**/*.md``) under ``BOTBIN_BENCH_CACHE/locomo_daily/<layout>/<sample_id>/`` (outside the
repo), synced with the real all-MiniLM-L6-v2 model; a re-run embeds nothing.

Layouts (``daily_note_text``): the session's date names the note, ``memory/YYYY-MM-DD.md``, which opens with
``# YYYY-MM-DD`` as ``botbin remember`` writes it; two sessions of one day share the note. Each turn is one
bullet, ``- Speaker: text`` (an image the speaker shared is appended as ``[shares <BLIP caption>]``, the only
trace of it in the data). ``bullets``: nothing else (botbin packs a session's bullets into 256-token chunks).
``stamped``: each bullet starts with the session's time, ``- 13:56 Speaker: text``, the form of a ``botbin
remember`` entry, which botbin keeps as one chunk per entry.

Search: ``MemoryService.search(question, k=10)``, the call ``botbin search`` makes (cli/answers.py), with the
question's vector cached (the same model's embedding; ``QueryVectors``) and ``decay_weight`` 0 so that runs
never learn from their own queries. ``default_cap``: ``per_note`` left to the settings (``max_hits_per_note``
2, daily notes exempt since issue 18, index/daily.py, so in these all-daily workspaces the same as no cap;
before, at most 2 hits of one day); ``nocap``: ``per_note=0`` on the same index.

Metric (as bench_locomo.py): a hit holds every turn whose line lies in its line range; recall@k is the share
of a question's evidence turns held by the top k hits, averaged over the questions of categories 1-4 (1
multi-hop, 2 temporal, 3 open-domain, 4 single-hop); ``recall_turn_budget`` counts only the first k turns of
the ranked hits (a fair figure for layouts whose chunks hold many turns); splits ``tuned_0_4`` (what any
tuning looked at), ``heldout_5_9`` and ``all``. ``--quick``: conversations 0 and 5;
``--conversations 0 1 2 3 4``: the tuned half.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench_locomo import (
    CATEGORIES,
    DATA,
    QUICK,
    K,
    QueryVectors,
    QuestionResult,
    score,
    splits,
    summarize,
    turns_in,
    write_workspace,
)
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import CACHE_ROOT, NO_REINFORCEMENT, load_average, log, median, r
from locomo_layout import Conversation, Layout, Turn, iso_date, load_conversations, turn_line

OUT = CACHE_ROOT / "locomo_daily"
TARGET_AT10 = 0.80
LAYOUTS = ("bullets", "stamped")
#: How a turn is written after ``- `` (speaker and the shared image's caption; see turn_line).
_TURN = Layout("daily", speaker=True, captions=True)
_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\b", re.IGNORECASE)


@dataclass(frozen=True)
class DailyNotes:
    """A conversation written as daily notes."""

    notes: tuple[tuple[str, str], ...]
    """(relative POSIX path, markdown text) per note."""
    turn_lines: dict[str, tuple[str, int]]
    """dia_id -> (note path, 0-based line of its bullet)."""


def clock(date: str) -> str:
    """``1:56 pm on 8 May, 2023`` -> ``13:56``; ``00:00`` when the text has no time."""
    match = _CLOCK.match(date)
    if match is None:
        return "00:00"
    hour = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "pm" else 0)
    return f"{hour:02d}:{match.group(2)}"


def daily_note_text(conv: Conversation, layout: str) -> DailyNotes:
    """One ``memory/YYYY-MM-DD.md`` per session date (pure: the same input gives byte-identical notes)."""
    days: dict[str, list[Turn]] = {}
    for turn in conv.turns:
        day = iso_date(turn.date)
        if day is None:
            raise ValueError(f"{conv.sample_id}: session {turn.session} has no date ({turn.date!r})")
        days.setdefault(day, []).append(turn)
    notes: list[tuple[str, str]] = []
    turn_lines: dict[str, tuple[str, int]] = {}
    for day, turns in sorted(days.items()):
        path = f"memory/{day}.md"
        lines = [f"# {day}", ""]
        for turn in turns:
            stamp = f"{clock(turn.date)} " if layout == "stamped" else ""
            turn_lines[turn.dia_id] = (path, len(lines))
            lines.append(f"- {stamp}{turn_line(turn, _TURN)}")
        notes.append((path, "\n".join(lines) + "\n"))
    return DailyNotes(tuple(notes), turn_lines)


def evaluate(
    index: int, conv: Conversation, layout: str, out: Path, queries: QueryVectors, stats: dict[str, Any]
) -> dict[str, list[QuestionResult]]:
    """Sync one conversation's workspace and score its questions under each cap: {"cap": [...], "nocap": [...]}."""
    notes = daily_note_text(conv, layout)
    root = out / layout / conv.sample_id
    stats["files_written"] += write_workspace(root, notes.notes, "memory")
    service = MemoryService(root, NO_REINFORCEMENT)  # a cached store: its searches must not reinforce
    started = time.perf_counter()
    report = service.sync()
    stats["sync_s"] += time.perf_counter() - started
    stats["chunks_embedded"] += report.chunks_embedded
    if report.failed:
        raise RuntimeError(f"{root}: {len(report.failed)} notes failed to sync: {report.failed[0]}")
    stats["chunks"] += len(service.ws.index.get()[0])
    stats["notes"] += len(notes.notes)
    valid = set(notes.turn_lines)
    items = [q for q in conv.questions if q.category in CATEGORIES]
    evidence = [tuple(dict.fromkeys(e for e in q.evidence if e in valid)) for q in items]
    asked = [(q, ev) for q, ev in zip(items, evidence, strict=True) if ev]
    stats["questions_skipped_no_evidence"] += len(items) - len(asked)
    vectors = queries.get(service, [q.question for q, _ in asked])
    by_line = {v: k for k, v in notes.turn_lines.items()}
    out_rows: dict[str, list[QuestionResult]] = {"cap": [], "nocap": []}
    for (q, ev), vector in zip(asked, vectors, strict=True):
        for name, per_note in (("cap", None), ("nocap", 0)):
            started = time.perf_counter()
            hits = service.search(
                SearchRequest(query=q.question, k=max(K), per_note=per_note, show_all=True), query_vector=vector
            ).hits
            stats["search_ms"].append((time.perf_counter() - started) * 1000)
            ranked = [turns_in(by_line, h.path, h.start_line, h.end_line) for h in hits]
            out_rows[name].append(score(index, q.category, ev, ranked))
    return out_rows


def report(results: list[QuestionResult]) -> dict[str, Any]:
    parts = splits(results)
    return {
        "recall": {name: summarize(rows, "recall") for name, rows in parts.items()},
        "recall_turn_budget": {name: summarize(rows, "recall_turn_budget")["overall"] for name, rows in parts.items()},
        "hit_rate": {name: summarize(rows, "hit")["overall"] for name, rows in parts.items()},
        "turns_in_top": {f"@{k}": r(float(np.mean([x.turns_seen[i] for x in results])), 2) for i, k in enumerate(K)},
    }


def run_layout(layout: str, convs: Sequence[tuple[int, Conversation]], out: Path, queries: QueryVectors) -> Any:
    stats: dict[str, Any] = {"files_written": 0, "sync_s": 0.0, "chunks_embedded": 0, "chunks": 0, "notes": 0}
    stats |= {"questions_skipped_no_evidence": 0, "search_ms": []}
    rows: dict[str, list[QuestionResult]] = {"cap": [], "nocap": []}
    started = time.perf_counter()
    for index, conv in convs:
        log(f"{layout}: conversation {index} ({conv.sample_id}, {len(conv.turns)} turns)")
        for name, got in evaluate(index, conv, layout, out, queries, stats).items():
            rows[name] += got
    searches = stats.pop("search_ms")
    return {
        "default_cap": report(rows["cap"]),
        "nocap": report(rows["nocap"]),
        **{key: r(value, 2) if isinstance(value, float) else value for key, value in stats.items()},
        "search_ms_p50": r(median(searches), 2),
        "seconds": r(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help=f"conversations {QUICK} only")
    parser.add_argument("--conversations", type=int, nargs="+", help="these conversations (0-9) only")
    parser.add_argument("--layouts", nargs="+", choices=LAYOUTS, default=list(LAYOUTS))
    parser.add_argument("--data", type=Path, default=DATA, help="locomo10.json")
    parser.add_argument("--out", type=Path, default=OUT, help="workspace cache folder (outside the repo)")
    args = parser.parse_args()
    if not args.data.is_file():
        parser.error(f"{args.data} not found (LoCoMo is read from ../shared/data beside the repository)")
    started = time.perf_counter()
    conversations = load_conversations(args.data)
    wanted = set(args.conversations or (QUICK if args.quick else range(len(conversations))))
    chosen = [(i, c) for i, c in enumerate(conversations) if i in wanted]
    queries = QueryVectors(args.out)
    layouts = {name: run_layout(name, chosen, args.out, queries) for name in args.layouts}
    result = {
        "benchmark": "locomo_daily",
        "data": str(args.data),
        "conversations": [c.sample_id for _, c in chosen],
        "quick": args.quick,
        "started": datetime.now().isoformat(timespec="seconds"),
        "layouts": layouts,
        "target_recall_at10": TARGET_AT10,
        "targets_met": {
            name: got["default_cap"]["recall"]["all"]["overall"]["@10"] >= TARGET_AT10 for name, got in layouts.items()
        },
        "questions_embedded": queries.embedded,
        "seconds": r(time.perf_counter() - started, 1),
        "load_average": load_average(),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
