"""Retrieval regression guard: 60 hand-written queries on the Obsidian help vault (read from ../shared).

The queries and their target notes are ``bench/data/obsidian_queries.jsonl`` (also run, with BM25-only and
vector-only rankings, by ``bench/bench_obsidian_queries.py``). The floors below are what botbin's default
search measured when they were set, less a margin of 0.05: a guard that retrieval quality does not drop,
not a target. Raise them when ranking improves.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from botbin.embedding import SentenceTransformerEmbedder
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from conftest import OBSIDIAN_HELP, REPO, needs_shared

QUERY_FILE = REPO / "bench" / "data" / "obsidian_queries.jsonl"
K = 10
#: Default search (hybrid alpha 0.7, best chunk per note) measured hit@10 0.983 and MRR@10 0.767 at ba8ca1b
#: (2026-11-29, bench/README.md); the floors are those less 0.05.
FLOOR_HIT_AT_10 = 0.93
FLOOR_MRR_AT_10 = 0.71


def load_queries() -> list[dict[str, Any]]:
    return [json.loads(line) for line in QUERY_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def help_vault(synced_help_vault: Path, real_embedder: SentenceTransformerEmbedder) -> MemoryService:
    """The session's synced copy of the help vault (conftest.synced_help_vault)."""
    return MemoryService(synced_help_vault, {"vault": True}, embedder=real_embedder, env={})


@needs_shared
def test_query_file_is_well_formed() -> None:
    queries = load_queries()
    assert Counter(q["kind"] for q in queries) == {"easy": 20, "paraphrase": 25, "hard": 15}
    assert len({q["q"] for q in queries}) == len(queries)
    for q in queries:
        for path in (q["target"], *q.get("also", [])):
            assert (OBSIDIAN_HELP / path).is_file(), path


@pytest.mark.model
@needs_shared
def test_default_search_does_not_regress(help_vault: MemoryService) -> None:
    ranks: list[int | None] = []
    misses: list[str] = []
    for q in load_queries():
        wanted = {q["target"], *q.get("also", [])}
        paths = [
            h.path for h in help_vault.search(SearchRequest(query=q["q"], k=K, best_per_note=True, show_all=True)).hits
        ]
        rank = next((i for i, p in enumerate(paths, 1) if p in wanted), None)
        ranks.append(rank)
        if rank != 1:
            misses.append(f"{rank}: {q['q']!r} -> {q['target']} (first: {paths[0] if paths else None})")
    hit10 = sum(r is not None for r in ranks) / len(ranks)
    mrr10 = sum(1 / r for r in ranks if r is not None) / len(ranks)
    report = f"hit@10 {hit10:.3f}, MRR@10 {mrr10:.3f}; not first:\n" + "\n".join(misses)
    assert hit10 >= FLOOR_HIT_AT_10, report
    assert mrr10 >= FLOOR_MRR_AT_10, report
