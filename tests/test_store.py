"""Tests for botbin.index.store: MemoryIndex over hand-built AIF-BIN documents (hybrid search, filters, patching)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from botbin.aifbin import AifBinDocument, ChunkRecord, encode
from botbin.index.hits import Hit, IndexQuery
from botbin.index.load import load_index
from botbin.index.ranking import CONTEXT_MAX_LOSS
from botbin.index.store import MemoryIndex
from botbin.wire.requests import SearchFilters

DIM = 4


def unit(*values: float) -> np.ndarray:
    vec = np.asarray(values, dtype=np.float32)
    return (vec / np.linalg.norm(vec)).astype(np.float32)


E0, E1, E2, E3 = (unit(*row) for row in np.eye(DIM))


def doc(
    source: str,
    chunks: list[tuple[str, np.ndarray]],
    *,
    tags: tuple[str, ...] = (),
    date: str | None = None,
    title: str | None = None,
    kinds: tuple[str, ...] = (),
    headings: tuple[str, ...] = ("H",),
) -> AifBinDocument:
    meta = {
        "source": source,
        "model": {"name": "test", "dim": DIM, "normalized": True, "max_tokens": 256},
        "note": {"title": title or Path(source).stem, "tags": list(tags), "aliases": [], "date": date},
    }
    records = tuple(
        ChunkRecord(i, text, i * 3, i * 3 + 2, headings, kinds[i] if i < len(kinds) else "lore", 10, "", emb)
        for i, (text, emb) in enumerate(chunks)
    )
    return AifBinDocument(meta, records)


ALPHA_DB = doc(
    "memory/2026-11-01.md",
    [("We picked SQLite as the database for the cache.", E0), ("Never answer in prose.", E1)],
    tags=("project/alpha", "DB"),
    date="2026-11-01",
    kinds=("lore", "hard"),
    headings=("Alpha", "Storage"),
)
API = doc(
    "memory/2026-11-15.md",
    [("The API uses REST endpoints with JSON payloads.", E2)],
    tags=("Project",),
    date="2026-11-15T09:30:00",
    title="API day",
)
IDEAS = doc(
    "notes/ideas.md",
    [
        ("Ideas about gardening and tomatoes.", E3),
        ("More about the database choice: Postgres later.", unit(1, 0, 0, 1)),
    ],
    tags=("projector",),
    headings=(),
)


@pytest.fixture
def index() -> MemoryIndex:
    idx = MemoryIndex(DIM)
    for d in (ALPHA_DB, API, IDEAS):
        idx.upsert(d)
    return idx


def paths(hits: list[Hit]) -> list[str]:
    return [h.path for h in hits]


def texts(hits: list[Hit]) -> list[str]:
    return [h.text for h in hits]


def test_empty_index_gives_no_hits() -> None:
    idx = MemoryIndex(DIM)
    assert len(idx) == 0 and idx.note_count == 0
    assert idx.search(IndexQuery("anything", E0)) == []
    assert idx.search(IndexQuery("anything", None)) == []
    assert idx.search(IndexQuery("", None, filters=SearchFilters(tag="x"), best_per_note=True)) == []


def test_note_without_chunks() -> None:
    idx = MemoryIndex(DIM)
    idx.upsert(doc("empty.md", []))
    assert idx.note_count == 1 and len(idx) == 0
    assert idx.search(IndexQuery("x", E0)) == []


def test_one_note_corpus() -> None:
    idx = MemoryIndex(DIM)
    idx.upsert(doc("only.md", [("SQLite is the database.", E0)]))
    [hit] = idx.search(IndexQuery("sqlite", E0))
    assert hit.path == "only.md"
    assert hit.bm25 == pytest.approx(1.0)
    assert hit.cosine == pytest.approx(1.0)
    assert hit.score == pytest.approx(1.0)
    [hit] = idx.search(IndexQuery("sqlite", None))
    assert hit.score == pytest.approx(1.0)


def test_hits_carry_location_and_both_score_parts(index: MemoryIndex) -> None:
    # Issue 18 added note and neighbour terms to the score; without them it is the paper's formula.
    hits = index.search(IndexQuery("sqlite database", E0, k=10, alpha=0.7, note_weight=0.0, neighbour_weight=0.0))
    assert len(hits) == 5
    top = hits[0]
    assert (top.path, top.start_line, top.end_line, top.heading_path, top.kind, top.title) == (
        "memory/2026-11-01.md",
        0,
        2,
        ("Alpha", "Storage"),
        "lore",
        "2026-11-01",
    )
    assert top.text == "We picked SQLite as the database for the cache."
    assert top.snippet == top.text
    assert top.cosine == pytest.approx(1.0)
    assert top.bm25 == pytest.approx(1.0)
    for hit in hits:
        assert hit.score == pytest.approx(0.7 * hit.cosine + 0.3 * hit.bm25, abs=1e-6)
        assert 0.0 <= hit.bm25 <= 1.0
        assert -1.0 <= hit.cosine <= 1.0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    by_text = {h.text: h for h in hits}
    assert by_text["Ideas about gardening and tomatoes."].bm25 == 0.0
    assert by_text["More about the database choice: Postgres later."].bm25 > 0.0
    assert by_text["More about the database choice: Postgres later."].cosine == pytest.approx(np.sqrt(0.5))


def test_alpha_changes_the_mix(index: MemoryIndex) -> None:
    # Keyword "gardening" points at IDEAS chunk 0; the vector points at the API chunk.
    pure_cosine = index.search(IndexQuery("gardening", E2, k=1, alpha=1.0))
    pure_bm25 = index.search(IndexQuery("gardening", E2, k=1, alpha=0.0))
    assert texts(pure_cosine) == ["The API uses REST endpoints with JSON payloads."]
    assert texts(pure_bm25) == ["Ideas about gardening and tomatoes."]
    assert pure_bm25[0].score == pytest.approx(1.0)


def test_query_with_no_known_words_still_ranks_by_cosine(index: MemoryIndex) -> None:
    hits = index.search(
        IndexQuery("zzyzx qwertyuiop", E2, k=3, alpha=0.7, note_weight=0.0, neighbour_weight=0.0)
    )  # issue 18
    assert hits[0].path == "memory/2026-11-15.md"
    assert all(h.bm25 == 0.0 for h in hits)
    assert hits[0].score == pytest.approx(0.7)


def test_empty_query_text_with_vector(index: MemoryIndex) -> None:
    assert paths(index.search(IndexQuery("", E3, k=1))) == ["notes/ideas.md"]


def test_keyword_fallback_without_vector(index: MemoryIndex) -> None:
    hits = index.search(IndexQuery("REST endpoints", None, k=10))
    assert hits[0].text == "The API uses REST endpoints with JSON payloads."
    for hit in hits:
        assert hit.cosine == 0.0
        assert hit.score == pytest.approx(hit.bm25)


def test_unicode_query_matches_cjk_text() -> None:
    idx = MemoryIndex(DIM)
    idx.upsert(doc("cjk.md", [("我们选择了数据库", E0), ("今天天气很好", E1)]))
    assert texts(idx.search(IndexQuery("数据库", None, k=1))) == ["我们选择了数据库"]


def test_title_and_headings_are_searchable(index: MemoryIndex) -> None:
    assert index.search(IndexQuery("storage", None, k=1))[0].path == "memory/2026-11-01.md"
    assert index.search(IndexQuery("api day", None, k=1))[0].path == "memory/2026-11-15.md"


def test_keyword_search_matches_word_forms() -> None:
    idx = MemoryIndex(DIM)
    idx.upsert(doc("notes/study.md", [("We studied how the plugins synced.", E0), ("Unrelated gardening.", E1)]))
    assert texts(idx.search(IndexQuery("plugin studies sync", None, k=1))) == ["We studied how the plugins synced."]
    [hit] = idx.search(IndexQuery("Study", None, k=1))
    assert hit.bm25 == 1.0 and "studied" in hit.snippet


def test_k_limits_and_orders(index: MemoryIndex) -> None:
    assert len(index.search(IndexQuery("database", E0, k=2))) == 2
    assert index.search(IndexQuery("database", E0, k=0)) == []


def test_upsert_replaces_the_note(index: MemoryIndex) -> None:
    assert len(index) == 5
    index.upsert(doc("notes/ideas.md", [("Completely new content about kayaks.", E3)]))
    assert len(index) == 4 and index.note_count == 3
    assert texts(index.search(IndexQuery("kayaks", None, k=1))) == ["Completely new content about kayaks."]
    all_texts = texts(index.search(IndexQuery("", E0, k=100)))
    assert "Ideas about gardening and tomatoes." not in all_texts
    assert index.search(IndexQuery("gardening", None, k=10))[0].bm25 == 0.0


def test_remove(index: MemoryIndex) -> None:
    index.remove("memory/2026-11-15.md")
    assert index.note_count == 2 and len(index) == 4
    assert "memory/2026-11-15.md" not in paths(index.search(IndexQuery("api rest", E2, k=10)))
    index.remove("not/there.md")
    assert index.note_count == 2


def test_remove_everything() -> None:
    idx = MemoryIndex(DIM)
    idx.upsert(API)
    idx.search(IndexQuery("api", E2))
    idx.remove(API.source)
    assert idx.search(IndexQuery("api", E2)) == []


def test_upsert_with_another_dimension_is_refused(index: MemoryIndex) -> None:
    other = AifBinDocument(
        {"source": "x.md", "model": {"dim": 3}}, (ChunkRecord(0, "t", 0, 1, (), "lore", 1, "", np.ones(3, np.float32)),)
    )
    with pytest.raises(ValueError, match=r"x\.md"):
        index.upsert(other)


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("memory/**", {"memory/2026-11-01.md", "memory/2026-11-15.md"}),
        ("memory/2026-11-1*.md", {"memory/2026-11-15.md"}),
        ("**/ideas.md", {"notes/ideas.md"}),
        ("notes/*", {"notes/ideas.md"}),
        ("other/**", set()),
    ],
)
def test_filter_path_glob(index: MemoryIndex, glob: str, expected: set[str]) -> None:
    assert set(paths(index.search(IndexQuery("database", E0, k=10, filters=SearchFilters(path_glob=glob))))) == expected


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("project", {"memory/2026-11-01.md", "memory/2026-11-15.md"}),
        ("#Project", {"memory/2026-11-01.md", "memory/2026-11-15.md"}),
        ("project/alpha", {"memory/2026-11-01.md"}),
        ("db", {"memory/2026-11-01.md"}),
        ("proj", set()),
        ("alpha", set()),
        ("projector", {"notes/ideas.md"}),
    ],
)
def test_filter_tag_including_nested_tags(index: MemoryIndex, tag: str, expected: set[str]) -> None:
    assert set(paths(index.search(IndexQuery("the", E0, k=10, filters=SearchFilters(tag=tag))))) == expected


def test_filter_kind(index: MemoryIndex) -> None:
    hits = index.search(IndexQuery("database", E0, k=10, filters=SearchFilters(kind="hard")))
    assert texts(hits) == ["Never answer in prose."]
    assert hits[0].kind == "hard"
    assert index.search(IndexQuery("database", E0, filters=SearchFilters(kind="soft"))) == []


@pytest.mark.parametrize(
    ("date_from", "date_to", "expected"),
    [
        ("2026-11-01", "2026-11-01", {"memory/2026-11-01.md"}),
        ("2026-11-02", None, {"memory/2026-11-15.md"}),
        (None, "2026-11-14", {"memory/2026-11-01.md"}),
        ("2026-11-01", "2026-11-15", {"memory/2026-11-01.md", "memory/2026-11-15.md"}),
        (None, "2026-11", {"memory/2026-11-01.md", "memory/2026-11-15.md"}),
        ("2026-12-01", None, set()),
    ],
)
def test_filter_date_range(index: MemoryIndex, date_from: str | None, date_to: str | None, expected: set[str]) -> None:
    filters = SearchFilters(date_from=date_from, date_to=date_to)
    assert set(paths(index.search(IndexQuery("the", E0, k=10, filters=filters)))) == expected


def test_filter_date_from_with_time_includes_that_day(index: MemoryIndex) -> None:
    filters = SearchFilters.model_construct(date_from="2026-11-01T00:00:00", date_to="2026-11-01T23:59:59")
    assert set(paths(index.search(IndexQuery("the", E0, k=10, filters=filters)))) == {"memory/2026-11-01.md"}


def test_filters_combine(index: MemoryIndex) -> None:
    filters = SearchFilters(path_glob="memory/**", tag="project", kind="hard", date_to="2026-11-30")
    assert texts(index.search(IndexQuery("anything", E1, k=10, filters=filters))) == ["Never answer in prose."]


def test_best_per_note(index: MemoryIndex) -> None:
    all_hits = index.search(IndexQuery("database", E0, k=10))
    assert len(paths(all_hits)) > len(set(paths(all_hits)))
    grouped = index.search(IndexQuery("database", E0, k=10, best_per_note=True))
    assert sorted(paths(grouped)) == sorted(set(paths(all_hits)))
    best: dict[str, Hit] = {}
    for hit in all_hits:
        best.setdefault(hit.path, hit)
    assert [(h.path, h.text) for h in grouped] == [(h.path, h.text) for h in best.values()]


def test_best_per_note_respects_k_and_filters(index: MemoryIndex) -> None:
    assert len(index.search(IndexQuery("database", E0, k=2, best_per_note=True))) == 2
    hits = index.search(
        IndexQuery("database", E0, k=10, best_per_note=True, filters=SearchFilters(path_glob="notes/**"))
    )
    assert [(h.path, h.text) for h in hits] == [("notes/ideas.md", "More about the database choice: Postgres later.")]


def test_hit_to_dict_uses_wire_names(index: MemoryIndex) -> None:
    hit = index.search(IndexQuery("sqlite", E0, k=1))[0]
    wire = hit.to_dict()
    assert wire == {
        "path": "memory/2026-11-01.md",
        "startLine": 0,
        "endLine": 2,
        "headingPath": ["Alpha", "Storage"],
        "kind": "lore",
        "title": "2026-11-01",
        "snippet": hit.snippet,
        "score": round(hit.score, 6),
        "cosine": round(hit.cosine, 6),
        "bm25": round(hit.bm25, 6),
        "bm25Share": round(hit.bm25_share, 6),  # issues 18/19: the relevance floor's keyword arm
        "snippetStartLine": 0,
        "snippetEndLine": 1,  # issue 18: the snippet's sentence, 0-based note lines
    }
    assert 0 < hit.bm25_share < 1


def test_load_index_skips_bad_files_with_a_warning(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.aif-bin", tmp_path / "bad.aif-bin"
    good.write_bytes(encode(API))
    bad.write_bytes(b"not an aif-bin file at all")
    index, warnings = load_index([good, bad, tmp_path / "missing.aif-bin"], DIM)
    assert index.note_count == 1
    assert paths(index.search(IndexQuery("api", E2))) == ["memory/2026-11-15.md"]
    assert len(warnings) == 2
    assert warnings[0].startswith(str(bad))
    assert str(tmp_path / "missing.aif-bin") in warnings[1]


def test_note_term_lifts_the_chunk_of_the_note_about_the_query() -> None:
    # Both notes hold a chunk at the same cosine; the second note is about the query as a whole.
    side = unit(1.0, 1.0, 0.0, 0.0)
    idx = MemoryIndex(DIM)
    idx.upsert(doc("a.md", [("aside", side), ("other", E2), ("more other", E3)]))
    idx.upsert(doc("b.md", [("aside too", side), ("on topic", E0)]))
    plain = idx.search(IndexQuery("", E0, k=4, note_weight=0.0, neighbour_weight=0.0))
    lifted = idx.search(IndexQuery("", E0, k=4, neighbour_weight=0.0))
    assert [h.text for h in plain][:3] == ["on topic", "aside", "aside too"]
    assert [h.text for h in lifted][:3] == ["on topic", "aside too", "aside"]
    note_b = (side + E0) / np.linalg.norm(side + E0)  # b.md's mean chunk vector, normalized
    assert lifted[0].score == pytest.approx((0.7 * 1.0 + 0.7 * float(note_b @ E0)) / 1.7, abs=1e-6)
    # Vector alone (alpha 1) and BM25 alone (alpha 0) stay pure.
    assert [h.score for h in idx.search(IndexQuery("", E0, k=2, alpha=1.0))] == pytest.approx([1.0, 2**-0.5])


def test_neighbour_term_lifts_a_chunk_among_related_ones() -> None:
    side = unit(1.0, 1.0, 0.0, 0.0)
    idx = MemoryIndex(DIM)
    idx.upsert(doc("a.md", [("off", E2), ("aside", side), ("off again", E3)]))
    idx.upsert(doc("b.md", [("close", unit(1.0, 0.3, 0.0, 0.0)), ("aside too", side), ("near", E0)]))
    hits = idx.search(IndexQuery("", E0, k=6, note_weight=0.0, max_hits_per_note=0))
    assert [h.text for h in hits][:3] == ["near", "close", "aside too"]
    assert hits[2].score == pytest.approx(
        (0.7 * 2**-0.5 + 0.4 * (float(unit(1.0, 0.3, 0.0, 0.0) @ E0) + 1) / 2) / 1.4, abs=1e-6
    )
    [alone] = [h for h in idx.search(IndexQuery("", E2, k=6, note_weight=0.0, max_hits_per_note=0)) if h.text == "off"]
    # its one neighbour is orthogonal: the context lowers it, by at most CONTEXT_MAX_LOSS (its own match is 0.7)
    assert alone.score == pytest.approx(0.7 - CONTEXT_MAX_LOSS, abs=1e-6)
    assert (0.7 + 0.4 * 0.0) / 1.4 < alone.score < 0.7


def test_hits_per_note_are_capped_by_default() -> None:
    idx = MemoryIndex(DIM)
    idx.upsert(doc("long.md", [(f"database part {i}", unit(1.0, 0.01 * i, 0.0, 0.0)) for i in range(6)]))
    idx.upsert(doc("short.md", [("database elsewhere", unit(1.0, 0.5, 0.0, 0.0))]))
    hits = idx.search(IndexQuery("database", E0, k=5))
    assert paths(hits) == ["long.md", "long.md", "short.md"]
    assert paths(idx.search(IndexQuery("database", E0, k=5, max_hits_per_note=0))).count("long.md") == 5
    assert paths(idx.search(IndexQuery("database", E0, k=5, max_hits_per_note=3))).count("long.md") == 3
    assert paths(idx.search(IndexQuery("database", E0, k=5, best_per_note=True))) == ["long.md", "short.md"]
    assert idx.search(IndexQuery("database", E0, k=0)) == []


def test_one_common_word_of_a_question_is_not_a_full_keyword_match() -> None:
    # issue 33: BM25 scaled to the best chunk of each query gave a chunk sharing only "use" with a question the whole
    # keyword weight (bm25 1.0) when no chunk shared more, and it beat the answer, which shares no word at all
    idx = MemoryIndex(DIM)
    answer = "Readings travel over gRPC with protobuf messages."
    idx.upsert(doc("memory/a.md", [(answer, unit(0.6, 0.8, 0, 0))], title="x1", headings=()))
    idx.upsert(doc("memory/b.md", [("We use a German sender number for texts.", unit(0.3, 0, 0.954, 0))], title="x2"))
    idx.upsert(doc("memory/c.md", [("Weather is cold.", E3)], title="x3", headings=()))
    idx.upsert(doc("memory/d.md", [("Stations are on farms.", E3)], title="x4", headings=()))
    hits = idx.search(
        IndexQuery("what protocol do the weather stations use", E0, k=4, note_weight=0.0, neighbour_weight=0.0)
    )
    assert texts(hits)[0] == answer
    lone = {h.path: h for h in hits}["memory/b.md"]
    assert 0.0 < lone.bm25 < 0.75
    assert lone.score == pytest.approx(0.7 * lone.cosine + 0.3 * lone.bm25, abs=1e-6)


def test_a_chunk_holding_most_of_the_question_is_a_full_keyword_match() -> None:
    idx = MemoryIndex(DIM)
    idx.upsert(doc("memory/a.md", [("The weather stations use gRPC.", E1)], title="x1", headings=()))
    idx.upsert(doc("memory/b.md", [("Stations are on farms.", E2)], title="x2", headings=()))
    hits = idx.search(
        IndexQuery("what protocol do the weather stations use", E0, k=2, note_weight=0.0, neighbour_weight=0.0)
    )
    assert hits[0].path == "memory/a.md" and hits[0].bm25 == pytest.approx(1.0)
    assert 0.0 < hits[1].bm25 < 1.0
