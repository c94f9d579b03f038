"""An embedder that leaves the machine to other work part of the time: a background model migration embeds with
one (workspace/migration.py), so that searches of the index in use keep their pace."""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from botbin.embedding.model import Embedder


class PacedEmbedder:
    """An embedder that spends only ``duty`` of the time embedding: after each call it sleeps in proportion."""

    def __init__(self, inner: Embedder, duty: float) -> None:
        self.inner, self.duty = inner, duty

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        began = time.perf_counter()
        vectors = self.inner.embed(texts)
        if self.duty < 1.0:
            time.sleep((time.perf_counter() - began) * (1.0 - self.duty) / self.duty)
        return vectors
