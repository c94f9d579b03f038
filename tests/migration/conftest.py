"""Fixtures of the model-migration tests: a real second embedding model made from the bundled one (all-MiniLM-L6-v2
with its last three transformer layers dropped, saved as a sentence-transformers folder: the same tokenizer, another
vector space), a small real cross-encoder, and a workspace synced once with the bundled model."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from botbin.embedding import bundled_model_path
from botbin.service import MemoryService
from conftest import write_notes

TOPICS = (
    ("weather", "The weather stations report to the backend over gRPC every minute."),
    ("database", "Sensor measurements are stored in TimescaleDB, partitioned by week."),
    ("deploy", "We deploy on Tuesdays after the review meeting, never on Fridays."),
    ("alerts", "Alerts go through the NATS JetStream queue to the on-call phone."),
    ("billing", "Invoices are generated on the first day of the month by the billing job."),
    ("auth", "Users sign in with passkeys; passwords were retired in the spring."),
    ("search", "The search page ranks results by a hybrid of keywords and meaning."),
    ("cooking", "The soup needs two onions, a carrot and a slow simmer for an hour."),
    ("garden", "Tomatoes are planted in May and need water every second evening."),
    ("travel", "The train to the coast leaves at eight and takes about three hours."),
)
#: The settings every migration test shares: all notes tracked; no memo decay, so that scores compare exactly.
SETTINGS = {"vault": True, "decay_weight": 0.0}


def topic_notes(copies: int = 4) -> dict[str, str]:
    """``copies`` notes per topic, each with a few sections, so that a search has a clear answer."""
    notes = {}
    for n in range(copies):
        for name, fact in TOPICS:
            notes[f"notes/{name}-{n}.md"] = (
                f"# {name.title()} {n}\n\n{fact}\n\n## Details\n\nNote {n} about {name}: {fact.lower()}\n\n"
                f"## History\n\nThe {name} decision was written down in week {n + 10}.\n"
            )
    return notes


@pytest.fixture(scope="session")
def second_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """all-MiniLM-L6-v2 cut to its first 3 transformer layers, saved as a sentence-transformers folder."""
    return make_second_model(tmp_path_factory.mktemp("models") / "minilm-l3")


def make_second_model(folder: Path) -> Path:
    """all-MiniLM-L6-v2 cut to its first 3 transformer layers, saved in ``folder`` (``second_model``)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(bundled_model_path()), device="cpu", local_files_only=True)
    transformer: Any = model[0].auto_model  # a BertModel
    transformer.encoder.layer = transformer.encoder.layer[:3]
    transformer.config.num_hidden_layers = 3
    model.save(str(folder))
    return folder


@pytest.fixture(scope="session")
def cross_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sentence-transformers CrossEncoder made from the bundled MiniLM's weights with a fresh (seeded, untrained)
    one-output classification head: a real cross-encoder through the real code path, that ranks no better than
    chance."""
    import torch
    from sentence_transformers import CrossEncoder

    folder = tmp_path_factory.mktemp("models") / "cross-minilm"
    torch.manual_seed(0)
    CrossEncoder(str(bundled_model_path()), num_labels=1, device="cpu").save(str(folder))
    return folder


@pytest.fixture(scope="module")
def synced_topics(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace of ``topic_notes()`` synced once with the bundled model (read-only: tests copy it)."""
    root = write_notes(tmp_path_factory.mktemp("topics") / "ws", topic_notes())
    report = MemoryService(root, SETTINGS, env={}).sync()
    assert not report.failed and report.added
    return root


@pytest.fixture
def workspace(synced_topics: Path, tmp_path: Path) -> Callable[..., MemoryService]:
    """workspace(**settings) -> a service over this test's own copy of ``synced_topics`` (the same copy each call)."""
    root = tmp_path / "ws"
    shutil.copytree(synced_topics, root, symlinks=True)

    def open_service(**settings: object) -> MemoryService:
        return MemoryService(root, {**SETTINGS, **settings}, env={})

    return open_service
