"""The team database answers as the embedded index does: publish the examples workspace, search both, compare
(the mechanics with the fake embedder; the answers with the real model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from botbin.index.hits import IndexQuery
from botbin.service import MemoryService
from botbin.sync.report import SyncReport
from botbin.wire.requests import SearchFilters, SearchRequest

REPO = Path(__file__).resolve().parents[2]
QUERIES = [json.loads(line) for line in (REPO / "examples" / "queries.jsonl").read_text().splitlines() if line]


def _pair(
    url: str, tmp_path: Path, embedder: Any, **settings: object
) -> tuple[MemoryService, MemoryService, SyncReport]:
    root = tmp_path / "team-a"
    shutil.copytree(REPO / "examples" / "workspace", root)
    remote = MemoryService(root, {"backend": "postgres", "postgres_url": url, **settings}, embedder=embedder, env={})
    remote.team.init()
    remote_synced = remote.sync()
    assert remote_synced.publish_error is None and remote_synced.published is not None
    return remote, MemoryService(root, {}, embedder=embedder, env={}), remote_synced


def _key(hits: list[Any]) -> list[tuple[str, int]]:
    return [(h.path, h.start_line) for h in hits]


def test_same_hits_as_the_embedded_index(fresh_db: str, tmp_path: Path, fake_embedder: Any) -> None:
    remote, local, synced = _pair(fresh_db, tmp_path, fake_embedder)
    assert synced.published is not None and len(synced.published.published) == 16
    for q in QUERIES:  # the same formula on the same vectors and terms: the same list, the same scores
        a, b = (
            remote.search(SearchRequest(query=q["q"], k=10, show_all=True)),
            local.search(SearchRequest(query=q["q"], k=10, show_all=True)),
        )
        assert _key(a.hits) == _key(b.hits), q["q"]
        assert [h.score for h in a.hits] == pytest.approx([h.score for h in b.hits], abs=1e-4)
        assert [h.bm25 for h in a.hits] == pytest.approx([h.bm25 for h in b.hits], abs=1e-4)
        assert all(h.namespace == "team-a" for h in a.hits) and all(h.namespace is None for h in b.hits)
    # the relevance floor's share of the query's IDF (unknown terms at the most IDF) is the same in SQL
    for query in ("zebras grazing on the savanna", "database connection pool pool"):
        a, b = (
            remote.search(SearchRequest(query=query, k=10, show_all=True)),
            local.search(SearchRequest(query=query, k=10, show_all=True)),
        )
        assert _key(a.hits) == _key(b.hits) and any(h.bm25_share > 0 for h in b.hits), query
        assert [h.bm25_share for h in a.hits] == pytest.approx([h.bm25_share for h in b.hits], abs=1e-5)
    # issue 33: a query whose best chunk holds little of it gets no full keyword match in SQL either
    query = "when do we go live with the first users"
    a, b = (
        remote.search(SearchRequest(query=query, k=10, show_all=True)),
        local.search(SearchRequest(query=query, k=10, show_all=True)),
    )
    assert _key(a.hits) == _key(b.hits) and 0 < max(h.bm25 for h in b.hits) < 1
    assert [h.bm25 for h in a.hits] == pytest.approx([h.bm25 for h in b.hits], abs=1e-4)
    db = remote.ws.remote
    assert db is not None
    keyword = db.search(IndexQuery("connection pool exhausted", None, k=5))  # no query vector: BM25 alone
    assert _key(keyword) == _key(local.ws.index.get()[0].search(IndexQuery("connection pool exhausted", None, k=5)))


def test_filters_cap_and_republish(fresh_db: str, tmp_path: Path, fake_embedder: Any) -> None:
    remote, local, _ = _pair(fresh_db, tmp_path, fake_embedder)
    for f in (SearchFilters(path_glob="memory/2026-11-0*"), SearchFilters(date_from="2026-11-10"), SearchFilters()):
        a = remote.search(SearchRequest(query="database connection pool", k=5, filters=f, per_note=1, show_all=True))
        b = local.search(SearchRequest(query="database connection pool", k=5, filters=f, per_note=1, show_all=True))
        assert [h.path for h in a.hits] == [h.path for h in b.hits], f
        assert len({h.path for h in a.hits}) == len(a.hits)
    remote_synced = remote.sync()  # nothing changed: nothing published
    assert (
        remote_synced.published is not None
        and remote_synced.published.published == ()
        and remote_synced.published.unchanged == 16
    )
    (remote.root / "memory" / "ideas.md").unlink()
    day = "# Zanzibar\n\n- 09:00 The quokka migration is done.\n- 10:00 Counted quokka pups.\n- 11:00 Fed the quokka.\n"
    (remote.root / "memory" / "2026-11-03.md").write_text(day)
    remote_synced = remote.sync()
    assert remote_synced.published is not None
    assert remote_synced.published.removed == ("memory/ideas.md",)
    assert remote_synced.published.published == ("memory/2026-11-03.md",)
    hits = remote.search(SearchRequest(query="quokka migration", k=3, show_all=True)).hits
    assert hits[0].path == "memory/2026-11-03.md" and "quokka" in hits[0].text
    # the default cap leaves a daily note's entries alone in the database too; a cap asked for holds
    assert [h.path for h in hits] == ["memory/2026-11-03.md"] * 3
    capped = [
        h.path for h in remote.search(SearchRequest(query="quokka migration", k=3, per_note=1, show_all=True)).hits
    ]
    assert capped[0] == "memory/2026-11-03.md" and capped.count("memory/2026-11-03.md") == 1
    assert all(
        h.path != "memory/ideas.md" for h in remote.search(SearchRequest(query="ideas", k=20, show_all=True)).hits
    )


FILTERS = (
    SearchFilters(tag="incident"),
    SearchFilters(tag="#Prober"),
    SearchFilters(kind="hard"),
    SearchFilters(kind="lore", date_to="2026-11"),
    SearchFilters.model_construct(date_from="2026-11-05T12:00:00", date_to="2026-11-12"),
    SearchFilters(path_glob="**/2026-11-1?.md", kind="soft"),
    SearchFilters(path_glob="*.md"),
    SearchFilters(tag="nope"),
)


def test_every_filter_as_the_embedded_index(fresh_db: str, tmp_path: Path, fake_embedder: Any) -> None:
    """Both backends filter with SearchFilters.admits: tag (case, '#', sub-tags), kind, dates, globs alike."""
    remote, local, _ = _pair(fresh_db, tmp_path, fake_embedder)
    found = 0
    for f in FILTERS:
        a = remote.search(
            SearchRequest(query="database connection pool", k=20, filters=f, per_note=0, show_all=True), reinforce=False
        )
        b = local.search(
            SearchRequest(query="database connection pool", k=20, filters=f, per_note=0, show_all=True), reinforce=False
        )
        assert _key(a.hits) == _key(b.hits), f
        assert all(f.admits(h.path, (), h.date, h.kind) for h in a.hits if f.tag is None), f
        found += len(a.hits)
    assert (
        found > 0
        and remote.search(SearchRequest(query="database", k=20, filters=SearchFilters(tag="nope"), show_all=True)).hits
        == []
    )


@pytest.mark.model
def test_real_model_same_answers(fresh_db: str, tmp_path: Path, real_embedder: Any) -> None:
    remote, local, _ = _pair(fresh_db, tmp_path, real_embedder)
    for q in QUERIES:
        a, b = (
            remote.search(SearchRequest(query=q["q"], k=10, show_all=True)),
            local.search(SearchRequest(query=q["q"], k=10, show_all=True)),
        )
        assert _key(a.hits) == _key(b.hits), q["q"]
        assert [h.score for h in a.hits] == pytest.approx([h.score for h in b.hits], abs=1e-4)
