"""Small agent memories (bench/data/small_memory: an instruction note, a MEMORY.md, a few daily notes, questions
written for each), searched as ``botbin search`` searches them, with the real model (issue 33)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from botbin.embedding import SentenceTransformerEmbedder
from botbin.search.pipeline import relevant
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

REPO = Path(__file__).resolve().parents[2]
SETS = REPO / "bench" / "data" / "small_memory"
#: bench/bench_small_memory.py measured top-1 0.734 and top-3 0.872 over every set (2026-12-03, bench/README.md);
#: the floors are those less about 0.05: a guard that ranking on small memories does not drop, not a target.
FLOOR_TOP1 = 0.68
FLOOR_TOP3 = 0.82


def synced(tmp: Path, notes: Path, embedder: SentenceTransformerEmbedder) -> MemoryService:
    for p in notes.rglob("*.md"):
        if "aifbin" not in p.parts:
            (tmp / p.relative_to(notes)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, tmp / p.relative_to(notes))
    service = MemoryService(tmp, {"decay_weight": 0.0}, embedder=embedder, env={})
    assert not service.sync().failed
    return service


def shown(service: MemoryService, query: str) -> list[Any]:
    result = service.search(SearchRequest(query=query, k=10, show_all=True), reinforce=False)
    return [h for h in result.hits if relevant(h, result.degraded)]


@pytest.mark.model
def test_a_common_word_no_longer_puts_the_agent_rules_above_the_answer(
    tmp_path: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    # AGENTS.md's "Keep answers short" shared "keep" with the question and, scaled to the best chunk, took the
    # whole keyword weight (bm25 1.0) above the daily note that holds the backups' retention
    service = synced(tmp_path, SETS / "weather", real_embedder)
    hits = shown(service, "how long do we keep backups")
    assert hits[0].path == "memory/2026-11-24.md"
    assert all(h.bm25 < 1.0 for h in hits if h.path == "AGENTS.md")


@pytest.mark.model
def test_small_memory_sets_stay_above_their_floors(tmp_path: Path, real_embedder: SentenceTransformerEmbedder) -> None:
    top1 = top3 = n = 0
    for s in json.loads((SETS / "sets.json").read_text(encoding="utf-8"))["sets"]:
        service = synced(tmp_path / s["name"], REPO / s["notes"], real_embedder)
        for line in (REPO / s["questions"]).read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            paths = [h.path for h in shown(service, q["q"])]
            wanted = {q["target"], *q.get("also", [])}
            top1 += bool(paths) and paths[0] in wanted
            top3 += bool(wanted & set(paths[:3]))
            n += 1
    assert top1 / n >= FLOOR_TOP1 and top3 / n >= FLOOR_TOP3, (top1 / n, top3 / n)


def test_every_question_names_an_existing_note_and_the_lines_that_answer_it() -> None:
    sets = json.loads((SETS / "sets.json").read_text(encoding="utf-8"))["sets"]
    assert {s["split"] for s in sets} == {"tune", "heldout"}
    for s in sets:
        notes = REPO / s["notes"]
        for line in (REPO / s["questions"]).read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            assert all((notes / p).is_file() for p in (q["target"], *q.get("also", []))), q
            if "lines" in q:
                start, end = q["lines"]
                text = (notes / q["target"]).read_text(encoding="utf-8").splitlines()[start - 1 : end]
                assert q["anchor"] in "\n".join(text), q
