"""The sentence-transformers (torch) embedder: loads the model folder on first use, batches by token count."""

from __future__ import annotations

import os
import threading
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.embedding.model import BATCH_SIZE, ModelSpec, SpecEmbedder, WordPieceCounter
from botbin.errors import ModelError


class SentenceTransformerEmbedder(SpecEmbedder):
    """A sentence-transformers model, loaded on first use from a local folder only.

    Texts are batched by their exact token count (shortest first) rather than by character length as
    ``SentenceTransformer.encode`` does: markdown mixes prose, code and URLs, whose characters per token
    differ a lot, so character-sorted batches carry much padding. On the Obsidian help vault (1,387
    chunks, 2 CPU cores) this embeds in 28 s instead of 42 s, with identical vectors (max diff 2e-7).
    """

    def __init__(self, spec: ModelSpec, batch_size: int = BATCH_SIZE, device: str = "cpu") -> None:
        self.spec = spec
        self.batch_size = batch_size
        self.device = device
        self._lock = threading.Lock()

    @cached_property
    def _model(self) -> Any:
        # Offline by construction: a local folder path and HF_HUB_OFFLINE keep any hub lookup off.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # its bars would go to the terminal, unasked
            return SentenceTransformer(str(self.spec.path), device=self.device, local_files_only=True)
        except Exception as exc:
            raise ModelError(f"cannot load the embedding model ({exc})", self.spec.path) from exc

    @property
    def lock(self) -> threading.Lock:
        """Held while the model embeds; hold it to use ``loaded_model()`` from another thread."""
        return self._lock

    @property
    def is_loaded(self) -> bool:
        """True once the weights are in memory (torch imported)."""
        return "_model" in self.__dict__

    def loaded_model(self) -> Any:
        """The ``SentenceTransformer`` itself, loading it if needed (imports torch). Raises ModelError."""
        return self._model

    @cached_property
    def _counter(self) -> WordPieceCounter:
        return WordPieceCounter(self.spec.path)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``: float32 (len(texts), dim), L2-normalized. Raises ModelError on failure."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = np.argsort(self._counter.count_many(texts), kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            try:
                for start in range(0, len(order), self.batch_size):
                    rows = order[start : start + self.batch_size]
                    out[rows] = self._model.encode(
                        [texts[i] for i in rows],
                        batch_size=len(rows),
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
            except ModelError:
                raise
            except Exception as exc:
                raise ModelError(f"embedding failed ({exc})", self.spec.path) from exc
        return out
