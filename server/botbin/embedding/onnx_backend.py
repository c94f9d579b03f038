"""The ONNX Runtime embedder: the exported transformer (onnx_export.py) plus the model's own fast tokenizer, mean
pooling and L2 normalization in numpy, exactly as sentence-transformers computes them. Imports no torch."""

from __future__ import annotations

import json
import threading
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.embedding.model import BATCH_SIZE, ModelSpec, SpecEmbedder, module_chain
from botbin.errors import ModelError

SUPPORTED_MODULES = ("Transformer", "Pooling", "Normalize")
"""The module chain this embedder reproduces (all-MiniLM-L6-v2's): transformer, mean pooling, normalize (the
classes of sentence-transformers, under the package path of any version: embedding.model.module_chain)."""


def unsupported_reason(spec: ModelSpec) -> str | None:
    """Why the model folder's pipeline cannot run here (None when it can): only a transformer with mean
    pooling (optionally normalized) is reproduced; a Dense layer or CLS pooling is left to torch."""
    chain = module_chain(spec.path)
    kinds = [kind for kind, _ in chain]
    if (
        not kinds
        or kinds[0] != "Transformer"
        or "Pooling" not in kinds
        or any(k not in SUPPORTED_MODULES for k in kinds)
    ):
        return f"module chain {kinds} is not transformer + pooling (+ normalize)"
    pooling_dir = chain[kinds.index("Pooling")][1]
    try:
        pooling = json.loads((spec.path / pooling_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"cannot read the pooling config ({exc})"
    if not isinstance(pooling, dict):
        return "the pooling config is not a JSON object"
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True}
    mode = pooling.get("pooling_mode")
    if modes - {"pooling_mode_mean_tokens"} or (mode is not None and mode != "mean") or (not modes and mode is None):
        return f"pooling is not mean pooling ({sorted(modes) or mode})"
    return None


def mean_pool(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """float32 (batch, dim): L2-normalized mean of ``hidden`` (batch, seq, dim) over the tokens ``mask``
    (batch, seq) keeps, with sentence-transformers' clamps (token count >= 1e-9, norm >= 1e-12)."""
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    out: npt.NDArray[np.float32] = (pooled / norms).astype(np.float32)
    return out


class OnnxEmbedder(SpecEmbedder):
    """The model through ONNX Runtime (CPU, fp32): same vectors as ``SentenceTransformerEmbedder`` (cosine >=
    0.9999, checked once at export), loaded with ``onnxruntime`` and ``tokenizers`` only."""

    def __init__(
        self, spec: ModelSpec, onnx_path: Path, batch_size: int = BATCH_SIZE, spin: bool = True, threads: int = 0
    ) -> None:
        """``onnx_path``: the exported transformer (inputs input_ids, attention_mask[, token_type_ids];
        output last_hidden_state). ``spin``: let ONNX Runtime's idle worker threads spin (its default).
        ``threads``: intra-op threads (0: ONNX Runtime's default, one per core); a background job (a model
        migration) takes fewer, so that searches keep a core."""
        self.spec = spec
        self.onnx_path = onnx_path
        self.batch_size = batch_size
        self.spin = spin
        self.threads = threads
        self._lock = threading.Lock()

    @cached_property
    def _session(self) -> Any:
        try:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.log_severity_level = 3  # its warnings about unused initializers are noise here
            if not self.spin:
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            if self.threads > 0:
                options.intra_op_num_threads = self.threads
            return ort.InferenceSession(str(self.onnx_path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise ModelError(f"cannot load the ONNX model ({exc})", self.onnx_path) from exc

    @cached_property
    def _inputs(self) -> frozenset[str]:
        return frozenset(i.name for i in self._session.get_inputs())

    @cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        try:
            tok = Tokenizer.from_file(str(self.spec.path / "tokenizer.json"))
        except Exception as exc:
            raise ModelError(f"cannot load tokenizer.json ({exc})", self.spec.path) from exc
        tok.no_padding()
        # sentence-transformers: truncation="longest_first", max_length=max_seq_length (special tokens count).
        tok.enable_truncation(max_length=self.max_tokens)
        return tok

    def load(self) -> None:
        """Open the session and the tokenizer now (a server does this at start). Raises ModelError."""
        _ = self._session, self._tokenizer

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """float32 (len(texts), dim), L2-normalized rows; texts are batched by token count, shortest first,
        each batch padded to its longest text. Raises ModelError on failure."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            try:
                encodings = self._tokenizer.encode_batch(texts)
                order = np.argsort([len(e.ids) for e in encodings], kind="stable")
                out = np.empty((len(texts), self.dim), dtype=np.float32)
                for start in range(0, len(order), self.batch_size):
                    rows = order[start : start + self.batch_size]
                    out[rows] = self._run([encodings[i] for i in rows])
            except ModelError:
                raise
            except Exception as exc:
                raise ModelError(f"embedding failed ({exc})", self.onnx_path) from exc
        return out

    def _run(self, batch: list[Any]) -> npt.NDArray[np.float32]:
        width = max(len(e.ids) for e in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        types = np.zeros((len(batch), width), dtype=np.int64)
        for row, enc in enumerate(batch):
            n = len(enc.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = enc.ids, enc.attention_mask, enc.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self._session.run(["last_hidden_state"], {k: v for k, v in feeds.items() if k in self._inputs})[0]
        return mean_pool(np.asarray(hidden, dtype=np.float32), mask)
