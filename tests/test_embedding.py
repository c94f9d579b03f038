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


def _config_only_copy(root: Path) -> Path:
    """The bundled model's config and tokenizer files (no weights): enough for model_info."""
    folder = root / "model"
    shutil.copytree(bundled_model_path(), folder, ignore=shutil.ignore_patterns("*.safetensors", ".botbin-onnx"))
    return folder


def test_model_info_reads_the_layout_sentence_transformers_6_writes(tmp_path: Path) -> None:
    """Since version 6, sentence-transformers saves the output size as ``embedding_dimension``, the input limit as
    tokenizer_config.json's ``model_max_length`` (no ``max_seq_length``) and the modules under new package paths:
    a model a user saves today is read right, not as MiniLM's 384 and 256, and its ONNX export is not refused."""
    import json

    from botbin.embedding import ModelSpec
    from botbin.embedding.onnx_backend import unsupported_reason

    folder = _config_only_copy(tmp_path)
    (folder / "sentence_bert_config.json").write_text('{"transformer_task": "feature-extraction"}')
    (folder / "1_Pooling" / "config.json").write_text('{"embedding_dimension": 768, "pooling_mode": "mean"}')
    tokenizer = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**tokenizer, "model_max_length": 384}))
    (folder / "modules.json").write_text(
        json.dumps(
            [
                {
                    "idx": 0,
                    "name": "0",
                    "path": "",
                    "type": "sentence_transformers.base.modules.transformer.Transformer",
                },
                {
                    "idx": 1,
                    "name": "1",
                    "path": "1_Pooling",
                    "type": "sentence_transformers.sentence_transformer.modules.pooling.Pooling",
                },
                {
                    "idx": 2,
                    "name": "2",
                    "path": "2_Normalize",
                    "type": "sentence_transformers.base.modules.normalize.Normalize",
                },
            ]
        )
    )
    spec = ModelSpec("local:st6", folder)
    assert model_info(spec) == (768, 384)
    assert unsupported_reason(spec) is None
    (folder / "tokenizer_config.json").write_text(json.dumps({**tokenizer, "model_max_length": 10**30}))
    assert model_info(spec) == (768, 512)  # "no limit": the transformer's max_position_embeddings


def test_model_info_takes_a_dense_layers_output_size(tmp_path: Path) -> None:
    import json

    from botbin.embedding import ModelSpec

    folder = _config_only_copy(tmp_path)
    modules = json.loads((folder / "modules.json").read_text())
    modules.append({"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"})
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "3_Dense").mkdir()
    (folder / "3_Dense" / "config.json").write_text('{"in_features": 384, "out_features": 256}')
    assert model_info(ModelSpec("local:dense", folder)) == (256, 256)
