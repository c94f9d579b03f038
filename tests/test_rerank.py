"""The re-ranking stage (search/rerank.py) with a real cross-encoder built here: the bundled MiniLM's weights with a
fresh, seeded classification head (sentence-transformers ``CrossEncoder``). It is untrained, so it ranks no better
than chance: these tests check the stage (its order is the model's, its budget, its setting), not its quality."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from botbin.embedding import SentenceTransformerEmbedder, bundled_model_path
from botbin.index.hits import Hit
from botbin.service import MemoryService
from botbin.wire.requests import RelatedRequest, SearchRequest
from conftest import write_notes

NOTES = {
    f"notes/{name}.md": f"# {name.title()}\n\n{text}\n\n## More\n\nAnother paragraph on {name}: {text.lower()}\n"
    for name, text in (
        ("weather", "The weather stations report to the backend over gRPC every minute."),
        ("database", "Sensor measurements are stored in TimescaleDB, partitioned by week."),
        ("deploy", "We deploy on Tuesdays after the review meeting, never on Fridays."),
        ("alerts", "Alerts go through the NATS JetStream queue to the on-call phone."),
        ("billing", "Invoices are generated on the first day of the month by the billing job."),
        ("garden", "Tomatoes are planted in May and need water every second evening."),
        ("travel", "The train to the coast leaves at eight and takes about three hours."),
    )
}
QUERY = "where do the sensor measurements go"


def ask(k: int) -> SearchRequest:
    """QUERY's best ``k``, the weak ones too (the stage re-orders; the relevance floor is not what is tested)."""
    return SearchRequest(query=QUERY, k=k, show_all=True)


SETTINGS = {"vault": True, "decay_weight": 0.0, "max_hits_per_note": 0}


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from sentence_transformers import CrossEncoder

    folder = tmp_path_factory.mktemp("cross") / "cross-minilm"
    torch.manual_seed(0)
    CrossEncoder(str(bundled_model_path()), num_labels=1, device="cpu").save(str(folder))
    return folder


@pytest.fixture
def searching(tmp_path: Path, real_embedder: SentenceTransformerEmbedder) -> Callable[..., MemoryService]:
    """searching(**settings) -> a service over one synced workspace of NOTES (the real model)."""
    root = write_notes(tmp_path / "ws", NOTES)
    MemoryService(root, SETTINGS, embedder=real_embedder, env={}).sync()
    return lambda **more: MemoryService(root, {**SETTINGS, **more}, embedder=real_embedder, env={})


def direct_scores(folder: Path, hits: list[Hit]) -> list[float]:
    """The cross-encoder's scores of QUERY with each hit, asked of sentence-transformers directly."""
    from sentence_transformers import CrossEncoder

    model: Any = CrossEncoder(str(folder), device="cpu", local_files_only=True)
    passages = [f"{' > '.join(h.heading_path)}\n{h.text}" if h.heading_path else h.text for h in hits]
    return [float(x) for x in model.predict([(QUERY, p) for p in passages])]


def test_off_by_default(searching: Callable[..., MemoryService]) -> None:
    svc = searching()
    assert not svc.searcher.reranker.enabled
    result = svc.search(ask(8), reinforce=False)
    assert result.hits and not any(name == "rerank" for h in result.hits for name, _ in h.components)


def test_the_top_n_take_the_cross_encoders_order_and_keep_the_fused_scores(
    searching: Callable[..., MemoryService], cross_encoder: Path
) -> None:
    fused = searching().search(ask(10), reinforce=False).hits
    result = searching(rerank_model=str(cross_encoder), rerank_top_n=5, rerank_budget_ms=600_000).search(
        ask(10), reinforce=False
    )
    assert not result.warnings
    top = result.hits[:5]
    expected = direct_scores(cross_encoder, fused[:5])
    by_place = {(h.path, h.start_line): s for h, s in zip(fused[:5], expected, strict=True)}
    assert [(h.path, h.start_line) for h in top] == sorted(by_place, key=lambda key: -by_place[key])
    assert [dict(h.components)["rerank"] for h in top] == pytest.approx(sorted(expected, reverse=True), abs=1e-5)
    assert [h.score for h in top] == pytest.approx([h.score for h in fused[:5]])  # the fused scores, handed out again
    assert [(h.path, h.start_line, h.score) for h in result.hits[5:]] == [
        (h.path, h.start_line, h.score) for h in fused[5:10]
    ]


def test_past_its_budget_the_fused_order_stands(searching: Callable[..., MemoryService], cross_encoder: Path) -> None:
    fused = searching().search(ask(10), reinforce=False).hits
    svc = searching(rerank_model=str(cross_encoder), rerank_top_n=10, rerank_budget_ms=1)
    svc.searcher.reranker.scorer()  # loaded first: the budget covers scoring, not the model's load
    result = svc.search(ask(10), reinforce=False)
    assert any("rerank_budget_ms (1 ms)" in w for w in result.warnings)
    assert [(h.path, h.start_line, h.score) for h in result.hits] == [(h.path, h.start_line, h.score) for h in fused]


def test_a_wrong_folder_is_a_warning_and_the_fused_order(
    searching: Callable[..., MemoryService], tmp_path: Path
) -> None:
    fused = searching().search(ask(6), reinforce=False).hits
    result = searching(rerank_model=str(tmp_path / "no-cross-encoder")).search(ask(6), reinforce=False)
    assert any("rerank_model not used" in w and "no-cross-encoder" in w for w in result.warnings)
    assert [(h.path, h.start_line) for h in result.hits] == [(h.path, h.start_line) for h in fused]


def test_hover_related_is_not_reranked(searching: Callable[..., MemoryService], cross_encoder: Path) -> None:
    svc = searching(rerank_model=str(cross_encoder), rerank_budget_ms=1)
    paragraph = RelatedRequest(
        text="Sensor measurements are stored in TimescaleDB.", path="notes/database.md", lines=(2, 3)
    )
    result = svc.related(paragraph)
    assert result.hits and not result.warnings


@pytest.mark.parametrize(("key", "value"), [("rerank_top_n", 0), ("rerank_budget_ms", -5)])
def test_out_of_range_settings_fall_back(searching: Callable[..., MemoryService], key: str, value: int) -> None:
    svc = searching(**{key: value})
    assert any(key in w for w in svc.warnings)
    assert getattr(svc.settings, key) == getattr(MemoryService(svc.root, {}, env={}).settings, key)
