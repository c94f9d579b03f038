"""Model location, the tokenizer used for chunk sizing, and the sentence-transformers embedder."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from botbin.embedding import (
    BUNDLED_MODEL_ID,
    SentenceTransformerEmbedder,
    WordPieceCounter,
    bundled_model_path,
    model_info,
    resolve_model,
)
from botbin.errors import ModelError


def test_bundled_model_ships_in_the_package() -> None:
    spec = resolve_model(None)
    assert spec.model_id == BUNDLED_MODEL_ID and spec.path == bundled_model_path()
    assert (spec.path / "model.safetensors").is_file() and "site-packages" in str(spec.path)
    assert model_info(spec) == (384, 256)


def test_model_folder_relative_to_workspace_and_missing_folder(tmp_path: Path) -> None:
    shutil.copytree(bundled_model_path(), tmp_path / "models" / "mini")
    spec = resolve_model("models/mini", tmp_path)
    assert spec.model_id == f"local:{(tmp_path / 'models' / 'mini').resolve()}"
    with pytest.raises(ModelError, match="not a sentence-transformers folder"):
        resolve_model(str(tmp_path / "nope"), tmp_path)


def test_wordpiece_counter_counts_without_special_tokens() -> None:
    counter = WordPieceCounter(bundled_model_path())
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    long_text = "unbelievably " * 300
    spans = counter.windows(long_text, 100)
    assert "".join(long_text[s:e] for s, e in spans) == long_text
    assert all(counter.count(long_text[s:e]) <= 100 for s, e in spans)
    # Runs end between words: no span starts inside "unbelievably".
    assert all(long_text[s:].startswith("unbelievably") for s, _ in spans)


def test_broken_tokenizer_is_a_model_error(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(ModelError, match=r"tokenizer\.json"):
        WordPieceCounter(tmp_path)


@pytest.mark.model
def test_a_copied_model_folder_embeds_like_the_bundled_one(
    tmp_path: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    shutil.copytree(bundled_model_path(), tmp_path / "mini")
    local = SentenceTransformerEmbedder(resolve_model(str(tmp_path / "mini")))
    texts = ["the alert queue moved to NATS JetStream", "日本語のテキスト"]
    a, b = local.embed(texts), real_embedder.embed(texts)
    assert a.shape == (2, 384) and np.allclose(a, b, atol=1e-5)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert local.embed([]).shape == (0, 384)


@pytest.mark.model
def test_broken_weights_are_a_model_error(tmp_path: Path) -> None:
    shutil.copytree(bundled_model_path(), tmp_path / "broken")
    (tmp_path / "broken" / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(ModelError, match="cannot load the embedding model"):
        SentenceTransformerEmbedder(resolve_model(str(tmp_path / "broken"))).embed(["x"])
