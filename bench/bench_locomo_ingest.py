"""LoCoMo evidence recall through botbin's conversation pipeline (soul files) vs plain hybrid search over raw turns.

Run from the repo root with the venv active: ``python bench/bench_locomo_ingest.py [--quick]``.
Prints one JSON object on stdout; progress goes to stderr.

Data: ``../shared/data/locomo/locomo10.json`` (read in place, never copied; loaded by
``locomo_layout.load_conversations``). Each conversation is ingested into a fresh temporary workspace the way
``botbin ingest`` does it: every turn, in session and turn order, goes through ``TurnObserver.observe`` (embedded
EMBED_BATCH at a time) as ``Turn(role=<speaker>, content=<turn text>, user=<sample_id>, session=<N>,
timestamp=<session date>)``, the buffers are flushed, and the workspace is synced (real all-MiniLM-L6-v2, the
workspace's default settings unless ``--set key=value``). All turns of one conversation go to one user, so one
soul file (``memory/soul/<sample_id>.md``) holds the whole conversation. The observer numbers turns 1, 2, ... per
user across sessions (a new session only closes the buffer), so turn number n is the n-th turn observed; the bench
records n -> dia_id while ingesting.

Metric (the questions, categories and the recall@k/turn-budget/hit-rate arithmetic are bench_locomo's: its
``score`` and ``summarize`` are called): for each QA item of categories 1-4 the question is searched with
``MemoryService.search(question, k=10)`` (the question vector from bench_locomo's cache). Two ways of saying
which turns a hit holds:

* ``block`` (the headline figure): every turn of every ``## [Turns a-b]`` block the hit's line range overlaps,
  whether or not the turn was admitted (a block's range counts the turns the gate turned away too);
* ``bullet`` (strict): only the turns whose own bullet line lies inside the hit's line range (so the evidence's
  words are in the hit).

**Granularity caveat**: a block covers ``turn_buffer_size`` (5) turns or fewer, and the chunker may merge small
blocks, so one soul-file hit covers several turns where a ``raw_turns`` hit covers exactly one. Each method
therefore also reports ``turns_in_top`` (mean distinct turns in its top 5 / 10 hits), ``turns_per_hit``
(``turns_in_top`` / k), ``recall_per_turn`` (recall@k / turns_in_top@k) and ``recall_turn_budget`` (recall over
the ranked hits' turns cut after k turns: the same number of turns as k one-turn hits).

Baselines on the same run (same conversations, questions and question vectors): ``raw_turns`` (one chunk per raw
turn, plain hybrid search) and, unless ``--no-best``, bench_locomo's ``best`` layout; both through
``bench_locomo.run_layout``, whose synced workspaces are cached under ``bench/out/locomo/`` (``--cache``).
``--quick`` runs conversations 0 and 5 (bench_locomo's quick set).
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench_locomo import (
    BEST,
    CATEGORIES,
    DATA,
    OUT,
    QUICK,
    K,
    QueryVectors,
    QuestionResult,
    run_layout,
    score,
    splits,
    summarize,
)
from botbin.memory.conversation.distill import one_line, split_sentences
from botbin.memory.conversation.observer import TurnObserver
from botbin.memory.conversation.turns import Turn, TurnError, parse_timestamp
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import load_average, log, median, r
from locomo_layout import RAW, Conversation, load_conversations

#: The soul file's block header (memory/conversation/soul.py writes ``## [Turns a-b] session N · date``).
_HEADER = re.compile(r"^## \[Turns (\d+)-(\d+)\]")
#: Characters of a bullet's first sentence matched against its turn's text (a long turn keeps only its best
#: sentences, joined: the first one is a substring of the turn, the bullet as a whole may not be).
_MATCH_CHARS = 40


@dataclass
class SoulMap:
    """Which turns each line of a soul file holds."""

    block_turns: list[tuple[int, int, tuple[int, ...]]]
    """(first line, end line exclusive, turn numbers of the block's range), one per block, in file order."""
    bullet_line_turn: dict[int, int]
    """0-based line of a bullet -> the turn number it came from."""
    unmatched_bullets: int = 0


@dataclass
class IngestStats:
    turns: int = 0
    admitted: int = 0
    by_quarter: list[list[int]] = field(default_factory=lambda: [[0, 0] for _ in range(4)])
    """[admitted, turns] per quarter of each conversation (the gate compares a turn with all earlier ones)."""
    blocks_written: int = 0
    block_span: int = 0
    """Turns in the written blocks' ranges, summed."""
    bullets_written: int = 0
    duplicates_skipped: int = 0
    empty_buffers: int = 0
    soul_bytes: int = 0
    soul_chunks: int = 0
    ingest_s: float = 0.0
    sync_s: float = 0.0
    unmatched_bullets: int = 0
    evidence_turns: int = 0
    evidence_in_block: int = 0
    evidence_with_bullet: int = 0
    evidence_refs_unmatched: int = 0
    questions_skipped_no_evidence: int = 0
    query_embed_s: float = 0.0
    search_ms: list[float] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def conversation_turns(conv: Conversation, captions: bool) -> list[tuple[str, Turn]]:
    """(dia_id, observer Turn) for every turn of ``conv``, in order."""
    out = []
    for t in conv.turns:
        try:
            when = parse_timestamp(t.date)
        except TurnError:
            when = None
        text = t.text + (f" [shares {one_line(t.caption)}]" if captions and t.caption else "")
        out.append((t.dia_id, Turn(t.speaker, text, conv.sample_id, str(t.session), when)))
    return out


def soul_map(text: str, blocks: Sequence[Any], kept: dict[int, Turn]) -> SoulMap:
    """Map the soul file ``text``'s lines to turn numbers. ``blocks``: the written ``distill.Block``s in file
    order (their bullets are the block's bullet lines, in order); ``kept``: number -> Turn of the turns the
    gate admitted (or protected), whose bullets the blocks hold."""
    lines = text.split("\n")
    heads = [(i, int(m.group(1)), int(m.group(2))) for i, line in enumerate(lines) if (m := _HEADER.match(line))]
    if len(heads) != len(blocks):
        raise RuntimeError(f"soul file has {len(heads)} block headers, the observer wrote {len(blocks)} blocks")
    out = SoulMap([], {})
    for j, ((start, first, last), block) in enumerate(zip(heads, blocks, strict=True)):
        if (first, last) != (block.first_turn, block.last_turn):
            raise RuntimeError(
                f"block {j}: header says turns {first}-{last}, the observer wrote {block.first_turn}-{block.last_turn}"
            )
        end = heads[j + 1][0] if j + 1 < len(heads) else len(lines)
        out.block_turns.append((start, end, tuple(range(first, last + 1))))
        bullet_lines = [i for i in range(start + 1, end) if lines[i].startswith("- ")]
        candidates = [n for n in range(first, last + 1) if n in kept]
        pos = 0
        for line_no, bullet in zip(bullet_lines, block.bullets, strict=False):
            words = (split_sentences(bullet.split(": ", 1)[-1]) or [""])[0][:_MATCH_CHARS]
            for at in range(pos, len(candidates)):
                turn = kept[candidates[at]]
                if bullet.startswith(f"- {one_line(turn.speaker)}") and words in one_line(turn.content):
                    out.bullet_line_turn[line_no] = candidates[at]
                    pos = at + 1
                    break
            else:
                out.unmatched_bullets += 1
    return out


def hit_turns(smap: SoulMap, start: int, end: int) -> tuple[list[int], list[int]]:
    """(turns of the blocks overlapping lines [start, end), turns whose bullet line lies in them), in order."""
    block = [n for a, b, turns in smap.block_turns if a < end and start < b for n in turns]
    bullet = [smap.bullet_line_turn[i] for i in range(start, end) if i in smap.bullet_line_turn]
    return list(dict.fromkeys(block)), list(dict.fromkeys(bullet))


def evaluate_ingest(
    index: int,
    conv: Conversation,
    root: Path,
    overrides: dict[str, Any],
    captions: bool,
    queries: QueryVectors,
    stats: IngestStats,
) -> tuple[list[QuestionResult], list[QuestionResult]]:
    """Ingest ``conv`` into a fresh workspace ``root``, sync, and score its questions (block, bullet)."""
    root.mkdir(parents=True)
    service = MemoryService(root, overrides, env={})
    stats.warnings += [w for w in service.warnings if w not in stats.warnings]
    observer = TurnObserver(service.ws)
    observer.embed(["warm up"])  # the model loads outside the timings
    items = conversation_turns(conv, captions)
    number_dia: dict[int, str] = {}
    kept: dict[int, Turn] = {}
    written: list[Any] = []
    started = time.perf_counter()
    pairs = zip(items, observer.observe_all(t for _, t in items), strict=True)
    for position, ((dia_id, turn), result) in enumerate(pairs):
        number_dia[result.turn_number] = dia_id
        quarter = stats.by_quarter[4 * position // len(items)]
        quarter[0] += result.admitted
        quarter[1] += 1
        if result.admitted or result.protected:
            kept[result.turn_number] = turn
        written += [d.block for d in result.distilled if d.status == "written"]
    written += [d.block for d in observer.flush() if d.status == "written"]
    stats.ingest_s += time.perf_counter() - started
    started = time.perf_counter()
    report = service.sync()
    stats.sync_s += time.perf_counter() - started
    if report.failed:
        raise RuntimeError(f"{root}: {len(report.failed)} notes failed to sync: {report.failed[0]}")
    s = observer.stats
    stats.turns += s.turns
    stats.admitted += s.admitted
    stats.blocks_written += s.blocks_written
    stats.block_span += sum(b.last_turn - b.first_turn + 1 for b in written)
    stats.bullets_written += sum(len(b.bullets) for b in written)
    stats.duplicates_skipped += s.duplicates_skipped
    stats.empty_buffers += s.empty_buffers
    stats.soul_chunks += report.chunks_embedded
    maps: dict[str, SoulMap] = {}
    for rel in sorted(s.soul_files):
        text = (root / rel).read_text(encoding="utf-8")
        stats.soul_bytes += len(text.encode("utf-8"))
        maps[rel] = soul_map(text, written, kept)  # one user per conversation: one soul file
        stats.unmatched_bullets += maps[rel].unmatched_bullets
    in_block = {number_dia[n] for m in maps.values() for _, _, turns in m.block_turns for n in turns}
    with_bullet = {number_dia[n] for m in maps.values() for n in m.bullet_line_turn.values()}

    valid = {t.dia_id for t in conv.turns}
    asked = []
    for q in (q for q in conv.questions if q.category in CATEGORIES):
        stats.evidence_refs_unmatched += len(set(q.evidence) - valid)
        evidence = tuple(dict.fromkeys(e for e in q.evidence if e in valid))
        if evidence:
            asked.append((q, evidence))
        else:
            stats.questions_skipped_no_evidence += 1
    started = time.perf_counter()
    vectors = queries.get(service, [q.question for q, _ in asked])
    stats.query_embed_s += time.perf_counter() - started
    by_block: list[QuestionResult] = []
    by_bullet: list[QuestionResult] = []
    for (q, evidence), vector in zip(asked, vectors, strict=True):
        stats.evidence_turns += len(evidence)
        stats.evidence_in_block += sum(e in in_block for e in evidence)
        stats.evidence_with_bullet += sum(e in with_bullet for e in evidence)
        started = time.perf_counter()
        hits = service.search(SearchRequest(query=q.question, k=max(K), show_all=True), query_vector=vector).hits
        stats.search_ms.append((time.perf_counter() - started) * 1000)
        ranked_block: list[list[str]] = []
        ranked_bullet: list[list[str]] = []
        for h in hits:
            smap = maps.get(h.path)
            block, bullet = hit_turns(smap, h.start_line, h.end_line) if smap else ([], [])
            ranked_block.append([number_dia[n] for n in block])
            ranked_bullet.append([number_dia[n] for n in bullet])
        by_block.append(score(index, q.category, evidence, ranked_block))
        by_bullet.append(score(index, q.category, evidence, ranked_bullet))
    return by_block, by_bullet


def method_summary(results: list[QuestionResult]) -> dict[str, Any]:
    """Recall per split and category, turn budget, hit rate and the per-turn figures of one method."""
    parts = splits(results)
    turns_top = {f"@{k}": float(np.mean([x.turns_seen[i] for x in results])) for i, k in enumerate(K)}
    overall = summarize(results, "recall")["overall"]
    return {
        "recall": {name: summarize(rows, "recall") for name, rows in parts.items()},
        "recall_turn_budget": {name: summarize(rows, "recall_turn_budget")["overall"] for name, rows in parts.items()},
        "hit_rate": {name: summarize(rows, "hit")["overall"] for name, rows in parts.items()},
        "turns_in_top": {key: r(v, 2) for key, v in turns_top.items()},
        "turns_per_hit": {f"@{k}": r(turns_top[f"@{k}"] / k, 2) for k in K},
        "recall_per_turn": {key: r(overall[key] / turns_top[key], 4) if turns_top[key] else None for key in turns_top},
    }


def baseline_summary(layout: dict[str, Any]) -> dict[str, Any]:
    """bench_locomo's run_layout result, with the per-turn figures method_summary adds."""
    overall = layout["recall"]["all"]["overall"]
    turns_top = layout["turns_in_top"]
    return {
        **layout,
        "turns_per_hit": {f"@{k}": r(turns_top[f"@{k}"] / k, 2) for k in K},
        "recall_per_turn": {key: r(overall[key] / v, 4) if v else None for key, v in turns_top.items()},
    }


def parse_set(items: Sequence[str]) -> dict[str, Any]:
    """``key=value`` pairs -> settings overrides (the value read as a TOML value, else kept as a string)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"--set expects key=value, got {item!r}")
        try:
            out[key.strip()] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            out[key.strip()] = value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help=f"conversations {QUICK} only")
    parser.add_argument("--conversations", type=int, default=None, metavar="N", help="the first N conversations")
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a botbin setting for the ingest workspaces (repeatable), e.g. admission_threshold=0.2",
    )
    parser.add_argument(
        "--captions",
        action="store_true",
        help="append '[shares <caption>]' to turns that shared an image (raw_turns has none)",
    )
    parser.add_argument("--no-best", action="store_true", help="skip bench_locomo's best layout")
    parser.add_argument("--data", type=Path, default=DATA, help="locomo10.json")
    parser.add_argument(
        "--cache", type=Path, default=OUT, help="bench_locomo's workspace and question-vector cache (git-ignored)"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep the ingest workspaces in this new folder (default: a temp folder, deleted)",
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON result here")
    args = parser.parse_args()
    if not args.data.is_file():
        parser.error(f"{args.data} not found (LoCoMo is read from ../shared/data beside the repository)")
    if args.keep is not None and args.keep.exists():
        parser.error(f"--keep {args.keep} exists; give a new folder")
    overrides = parse_set(args.settings)
    started = time.perf_counter()
    conversations = load_conversations(args.data)
    chosen = [
        (i, c)
        for i, c in enumerate(conversations)
        if (not args.quick or i in QUICK) and (args.conversations is None or i < args.conversations)
    ]
    queries = QueryVectors(args.cache)

    stats = IngestStats()
    by_block: list[QuestionResult] = []
    by_bullet: list[QuestionResult] = []
    with tempfile.TemporaryDirectory(prefix="botbin-locomo-ingest-") as tmp:
        base = args.keep or Path(tmp)
        for index, conv in chosen:
            log(f"ingest: conversation {index} ({conv.sample_id}, {len(conv.turns)} turns)")
            block, bullet = evaluate_ingest(
                index, conv, base / conv.sample_id, overrides, args.captions, queries, stats
            )
            by_block += block
            by_bullet += bullet
            log(
                f"ingest: {conv.sample_id}: {stats.turns} turns so far, {stats.blocks_written} blocks, "
                f"{stats.ingest_s:.1f} s ingest, {stats.sync_s:.1f} s sync"
            )
    ingest_seconds = time.perf_counter() - started

    baselines = [RAW] if args.no_best else [RAW, BEST]
    layouts = {layout.name: baseline_summary(run_layout(layout, chosen, args.cache, queries)) for layout in baselines}
    searches = stats.search_ms
    ingest = {
        "settings": overrides,
        "captions": args.captions,
        "block": method_summary(by_block),
        "bullet": method_summary(by_bullet),
        "turns_ingested": stats.turns,
        "admitted": stats.admitted,
        "admitted_fraction": r(stats.admitted / max(stats.turns, 1), 3),
        "admitted_fraction_by_quarter": [r(a / max(n, 1), 3) for a, n in stats.by_quarter],
        "blocks_written": stats.blocks_written,
        "duplicates_skipped": stats.duplicates_skipped,
        "empty_buffers": stats.empty_buffers,
        "turns_per_block": r(stats.block_span / max(stats.blocks_written, 1), 2),
        "bullets_per_block": r(stats.bullets_written / max(stats.blocks_written, 1), 2),
        "soul_bytes": stats.soul_bytes,
        "soul_chunks": stats.soul_chunks,
        "evidence_turns": stats.evidence_turns,
        "evidence_in_a_block": r(stats.evidence_in_block / max(stats.evidence_turns, 1), 3),
        "evidence_with_a_bullet": r(stats.evidence_with_bullet / max(stats.evidence_turns, 1), 3),
        "bullets_unmatched": stats.unmatched_bullets,
        "evidence_refs_unmatched": stats.evidence_refs_unmatched,
        "questions_skipped_no_evidence": stats.questions_skipped_no_evidence,
        "ingest_s": r(stats.ingest_s, 1),
        "ingest_ms_per_turn": r(1000 * stats.ingest_s / max(stats.turns, 1), 2),
        "sync_s": r(stats.sync_s, 1),
        "query_embed_s": r(stats.query_embed_s, 1),
        "search_ms_p50": r(median(searches), 2) if searches else None,
        "seconds": r(ingest_seconds, 1),
        "settings_warnings": stats.warnings,
    }

    def headline(name: str, m: dict[str, Any]) -> dict[str, Any]:
        return {
            "method": name,
            **{f"recall{key}": m["recall"]["all"]["overall"][key] for key in ("@5", "@10")},
            **{f"turn_budget{key}": m["recall_turn_budget"]["all"][key] for key in ("@5", "@10")},
            **{f"turns_in_top{key}": m["turns_in_top"][key] for key in ("@5", "@10")},
            **{f"recall_per_turn{key}": m["recall_per_turn"][key] for key in ("@5", "@10")},
        }

    comparison = [
        headline("ingest_block", ingest["block"]),
        headline("ingest_bullet", ingest["bullet"]),
        *(headline(name, m) for name, m in layouts.items()),
    ]
    result = {
        "data": str(args.data),
        "conversations": [c.sample_id for _, c in chosen],
        "quick": args.quick,
        "questions": len(by_block),
        "caveat": (
            "a soul-file hit covers a whole block (up to turn_buffer_size turns; the chunker may merge "
            "small blocks), a raw_turns hit one turn: compare turns_in_top, recall_per_turn and "
            "recall_turn_budget, and the strict 'bullet' figures (evidence turn's own bullet in the hit)"
        ),
        "comparison": comparison,
        "ingest": ingest,
        "layouts": layouts,
        "questions_embedded": queries.embedded,
        "seconds": r(time.perf_counter() - started, 1),
        "load_average": load_average(),
    }
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
