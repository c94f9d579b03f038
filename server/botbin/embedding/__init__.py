"""Embedding: the model folder and its tokenizer (model.py), the torch embedder (torch_backend.py), the ONNX
Runtime embedder and its one-time export (onnx_backend.py, onnx_export.py), and the embedder a workspace uses,
which picks between them (auto.py). Never touches the network; importing this package imports no torch."""

from __future__ import annotations

from botbin.embedding.auto import AutoEmbedder, shared_embedder
from botbin.embedding.model import (
    BUNDLED_DIM,
    BUNDLED_MAX_TOKENS,
    BUNDLED_MODEL_ID,
    Embedder,
    ModelSpec,
    WordPieceCounter,
    bundled_model_path,
    model_info,
    resolve_model,
    spec_for_id,
)
from botbin.embedding.torch_backend import SentenceTransformerEmbedder

__all__ = [
    "BUNDLED_DIM",
    "BUNDLED_MAX_TOKENS",
    "BUNDLED_MODEL_ID",
    "AutoEmbedder",
    "Embedder",
    "ModelSpec",
    "SentenceTransformerEmbedder",
    "WordPieceCounter",
    "bundled_model_path",
    "model_info",
    "resolve_model",
    "shared_embedder",
    "spec_for_id",
]
