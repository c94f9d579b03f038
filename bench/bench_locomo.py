"""LoCoMo evidence recall: botbin's hybrid search over long conversations, raw turns vs botbin's best layout.

Run from the repo root with the venv active: ``python bench/bench_locomo.py [--quick]``.
Prints one JSON object on stdout; progress goes to stderr.

Data: ``../shared/data/locomo/locomo10.json`` (Maharana et al., ACL 2024; CC BY-NC 4.0; read in place, never
copied into the repo). Each of the 10 conversations is its own botbin workspace (searches never cross
conversations), written by ``locomo_layout.conversation_notes`` and synced with the real all-MiniLM-L6-v2 model.
The workspaces are kept under ``bench/out/locomo/<layout>/<sample_id>/`` (git-ignored) together with the
question embeddings, so a re-run embeds nothing: the first run takes many minutes on 2 cores, later ones seconds.

Metric: for each QA item of categories 1-4 (category 5 is adversarial, with nothing to find), the question is
searched with ``MemoryService.search`` (k = 10, the workspace's default alpha). A chunk holds every turn whose
line lies inside its line range. **recall@k** of a question is the fraction of its evidence turns held by the
top k chunks; the figures are the mean over questions (per category, and over all questions of categories 1-4).
Evidence ids that match no turn (five in the data, e.g. ``D30:05``) are dropped; questions left with none are
skipped and counted. A layout with several turns per chunk sees more turns in its top k, so each layout also
reports the mean number of distinct turns in its top k and ``recall_turn_budget`` (the ranked chunks' turns,
in order, cut after k turns: recall at the same number of turns as one turn per chunk). ``hit_rate`` is the
share of questions with at least one evidence turn in the top k.

Layouts: (a) ``raw_turns``, one chunk per turn holding the raw turn text only; (b) ``best``, tuned on
conversations 0-4; ``tuned_0_4`` and ``heldout_5_9`` report the two halves separately, ``all`` all ten.
``--quick`` runs conversations 0 and 5 only (< 1 min once cached); ``--ablation`` adds ``best_1turn``, the best
layout with one turn per chunk.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.aifbin import decode
from botbin.service import MemoryService
from botbin.sync.state import load_state
from botbin.wire.requests import SearchRequest
from common import NO_REINFORCEMENT, load_average, log, median, r
from locomo_layout import RAW, Conversation, ConversationNotes, Layout, conversation_notes, load_conversations

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO / ".." / "shared" / "data" / "locomo" / "locomo10.json").resolve()
OUT = REPO / "bench" / "out" / "locomo"
K = (5, 10)
CATEGORIES = (1, 2, 3, 4)
TUNED, HELDOUT = range(0, 5), range(5, 10)
QUICK = (0, 5)
TARGETS = {"@5": 0.60, "@10": 0.70}

#: (b) The layout chosen on conversations 0-4 (see bench/README.md for the variants measured).
BEST = Layout("best", window=2, speaker=True, captions=True, session_heading=True, names_title=True)
#: ``--ablation``: the best layout with one turn per chunk (what the enrichments give without windows).
BEST_1TURN = Layout("best_1turn", window=1, speaker=True, captions=True, session_heading=True, names_title=True)


@dataclass(frozen=True)
class QuestionResult:
    """One question's outcome under one layout."""

    conversation: int
    category: int
    recall: tuple[float, ...]
    """recall@k for each k of K."""
    recall_turn_budget: tuple[float, ...]
    """Recall over the first k turns of the ranked chunks, for each k of K."""
    turns_seen: tuple[int, ...]
    """Distinct turns in the top k chunks, for each k of K."""
    hit: tuple[float, ...]
    """1.0 when the top k chunks hold at least one evidence turn, else 0.0, for each k of K."""


def write_workspace(root: Path, notes: Sequence[tuple[str, str]], folder: str = "sessions") -> int:
    """Write ``notes`` (relative path, text) under ``root``, leaving identical files untouched (so the sync is a
    no-op) and deleting the notes in ``folder`` the layout no longer makes. Returns the number of files written."""
    written = 0
    wanted = {root / rel for rel, _ in notes}
    for rel, text in notes:
        path = root / rel
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += 1
    for stale in (root / folder).glob("*.md"):
        if stale not in wanted:
            stale.unlink()
    return written


def turns_in(by_line: dict[tuple[str, int], str], path: str, start: int, end: int) -> list[str]:
    """The turns of note ``path`` whose line lies in [start, end) (0-based), in line order."""
    return [by_line[(path, n)] for n in range(start, end) if (path, n) in by_line]


def chunk_turns(service: MemoryService, notes: ConversationNotes) -> list[tuple[str, ...]]:
    """The turns each synced chunk holds (from the AIF-BIN files, in note and line order)."""
    by_line = {v: k for k, v in notes.turn_lines.items()}
    state, _ = load_state(service.ws.state_path)
    out: list[tuple[str, ...]] = []
    for rel in sorted(state.files):
        doc = decode((service.root / state.files[rel].output).read_bytes(), rel)
        for c in doc.chunks:
            out.append(tuple(turns_in(by_line, rel, c.start_line, c.end_line)))
    return out


class QueryVectors:
    """Question embeddings cached in ``<dir>/query_vectors.npz`` (MD5 of model id and question -> float32 (384,))."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "query_vectors.npz"
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}
        self.embedded = 0
        if self.path.exists():
            with np.load(self.path) as z:
                self.vectors = dict(zip(z["keys"].tolist(), z["vectors"], strict=True))

    def get(self, service: MemoryService, texts: Sequence[str]) -> list[npt.NDArray[np.float32]]:
        model = service.ws.models.meta.name
        keys = [hashlib.md5(f"{model}\n{t}".encode()).hexdigest() for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.vectors}
        if missing:
            vectors = service.ws.models.embedder.embed(list(missing.values()))
            self.vectors.update(zip(missing, vectors, strict=True))
            self.embedded += len(missing)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(self.path, keys=np.array(list(self.vectors)), vectors=np.stack(list(self.vectors.values())))
        return [self.vectors[k] for k in keys]


def evaluate(
    index: int, conv: Conversation, layout: Layout, out: Path, queries: QueryVectors, stats: dict[str, Any]
) -> list[QuestionResult]:
    """Build, sync and search one conversation's workspace under ``layout``; adds timings to ``stats``."""
    notes = conversation_notes(conv, layout)
    root = out / layout.name / conv.sample_id
    stats["files_written"] += write_workspace(root, notes.notes)
    service = MemoryService(root, NO_REINFORCEMENT)  # a cached store: its searches must not reinforce
    seconds = time.perf_counter()
    report = service.sync()
    stats["sync_s"] += time.perf_counter() - seconds
    stats["chunks_embedded"] += report.chunks_embedded
    if report.failed:
        raise RuntimeError(f"{root}: {len(report.failed)} notes failed to sync: {report.failed[0]}")
    chunks = chunk_turns(service, notes)
    stats["chunks"] += len(chunks)
    stats["chunks_matching_layout"] += sum(a == b for a, b in zip(chunks, notes.windows, strict=False))
    stats["layout_windows"] += len(notes.windows)
    valid = set(notes.turn_lines)
    items = [q for q in conv.questions if q.category in CATEGORIES]
    evidence = [tuple(dict.fromkeys(e for e in q.evidence if e in valid)) for q in items]
    stats["evidence_refs_unmatched"] += sum(len(set(q.evidence) - valid) for q in items)
    asked = [(q, ev) for q, ev in zip(items, evidence, strict=True) if ev]
    stats["questions_skipped_no_evidence"] += len(items) - len(asked)
    seconds = time.perf_counter()
    vectors = queries.get(service, [q.question for q, _ in asked])
    stats["query_embed_s"] += time.perf_counter() - seconds
    by_line = {v: k for k, v in notes.turn_lines.items()}
    results = []
    for (q, ev), vector in zip(asked, vectors, strict=True):
        start = time.perf_counter()
        hits = service.search(SearchRequest(query=q.question, k=max(K), show_all=True), query_vector=vector).hits
        stats["search_ms"].append((time.perf_counter() - start) * 1000)
        ranked = [turns_in(by_line, h.path, h.start_line, h.end_line) for h in hits]
        results.append(score(index, q.category, ev, ranked))
    return results


def score(index: int, category: int, evidence: Sequence[str], ranked: list[list[str]]) -> QuestionResult:
    """Recall of ``evidence`` in the ranked chunks' turns (see the module docstring)."""
    flat = [t for turns in ranked for t in turns]
    recall, budget, seen, hit = [], [], [], []
    for k in K:
        top = {t for turns in ranked[:k] for t in turns}
        recall.append(sum(e in top for e in evidence) / len(evidence))
        first = set(list(dict.fromkeys(flat))[:k])
        budget.append(sum(e in first for e in evidence) / len(evidence))
        seen.append(len(top))
        hit.append(float(any(e in top for e in evidence)))
    return QuestionResult(index, category, tuple(recall), tuple(budget), tuple(seen), tuple(hit))


def summarize(results: list[QuestionResult], field: str) -> dict[str, Any]:
    """Mean of ``field`` per category and overall: {"overall": {"n", "@5", "@10"}, "cat1": {...}, ...}."""

    def block(rows: list[QuestionResult]) -> dict[str, Any]:
        values = np.array([getattr(x, field) for x in rows], dtype=np.float64).reshape(-1, len(K))
        return {"n": len(rows), **{f"@{k}": r(values[:, i].mean(), 3) if rows else None for i, k in enumerate(K)}}

    out = {"overall": block(results)}
    out.update({f"cat{c}": block([x for x in results if x.category == c]) for c in CATEGORIES})
    return out


def splits(results: list[QuestionResult]) -> dict[str, list[QuestionResult]]:
    out = {
        "tuned_0_4": [x for x in results if x.conversation in TUNED],
        "heldout_5_9": [x for x in results if x.conversation in HELDOUT],
        "all": results,
    }
    return {name: rows for name, rows in out.items() if rows}


def run_layout(
    layout: Layout, convs: list[tuple[int, Conversation]], out: Path, queries: QueryVectors
) -> dict[str, Any]:
    stats: dict[str, Any] = {
        "files_written": 0,
        "sync_s": 0.0,
        "chunks_embedded": 0,
        "chunks": 0,
        "chunks_matching_layout": 0,
        "layout_windows": 0,
        "evidence_refs_unmatched": 0,
        "questions_skipped_no_evidence": 0,
        "query_embed_s": 0.0,
        "search_ms": [],
    }
    results: list[QuestionResult] = []
    started = time.perf_counter()
    for index, conv in convs:
        log(f"{layout.name}: conversation {index} ({conv.sample_id}, {len(conv.turns)} turns)")
        results += evaluate(index, conv, layout, out, queries, stats)
    searches = stats.pop("search_ms")
    parts = splits(results)
    return {
        "layout": asdict(layout),
        "recall": {name: summarize(rows, "recall") for name, rows in parts.items()},
        "recall_turn_budget": {name: summarize(rows, "recall_turn_budget")["overall"] for name, rows in parts.items()},
        "hit_rate": {name: summarize(rows, "hit")["overall"] for name, rows in parts.items()},
        "turns_in_top": {f"@{k}": r(float(np.mean([x.turns_seen[i] for x in results])), 2) for i, k in enumerate(K)},
        **{key: r(value, 2) if isinstance(value, float) else value for key, value in stats.items()},
        "chunk_layout_ok": stats["chunks"] == stats["layout_windows"] == stats["chunks_matching_layout"],
        "search_ms_p50": r(median(searches), 2),
        "seconds": r(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help=f"conversations {QUICK} only")
    parser.add_argument("--ablation", action="store_true", help=f"also run {BEST_1TURN.name}")
    parser.add_argument("--data", type=Path, default=DATA, help="locomo10.json")
    parser.add_argument("--out", type=Path, default=OUT, help="workspace cache folder (git-ignored)")
    args = parser.parse_args()
    if not args.data.is_file():
        parser.error(f"{args.data} not found (LoCoMo is read from ../shared/data beside the repository)")
    started = time.perf_counter()
    conversations = load_conversations(args.data)
    chosen = [(i, c) for i, c in enumerate(conversations) if not args.quick or i in QUICK]
    queries = QueryVectors(args.out)
    layouts_run = (RAW, BEST, BEST_1TURN) if args.ablation else (RAW, BEST)
    layouts = {layout.name: run_layout(layout, chosen, args.out, queries) for layout in layouts_run}
    best = layouts[BEST.name]["recall"]["all"]["overall"]
    result = {
        "data": str(args.data),
        "conversations": [c.sample_id for _, c in chosen],
        "quick": args.quick,
        "layouts": layouts,
        "targets_best_all": TARGETS,
        "targets_met": {key: best[key] >= target for key, target in TARGETS.items()},
        "questions_embedded": queries.embedded,
        "seconds": r(time.perf_counter() - started, 1),
        "load_average": load_average(),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
