"""Models: a workspace's embedding model, its tokenizer and a thread-safe cache of query vectors.

Nothing heavy happens at construction: the model's folder is resolved, its config read and its weights
loaded only when first needed (a no-op sync never loads torch).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from functools import cached_property
from pathlib import Path

import numpy as np
import numpy.typing as npt

from botbin.chunking import TokenCounter
from botbin.embedding import Embedder, ModelSpec, WordPieceCounter, model_info, resolve_model, shared_embedder
from botbin.sync.documents import ModelMeta

#: Query vectors kept per model (a hover or a repeated search skips the model).
QUERY_CACHE_SIZE = 256
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class QueryCache:
    """The last QUERY_CACHE_SIZE query vectors of one model; safe to share between threads and folders."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self._size = size
        self._vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, query: str) -> npt.NDArray[np.float32] | None:
        with self._lock:
            vector = self._vectors.get(query)
            if vector is not None:
                self._vectors.move_to_end(query)
            return vector

    def put(self, query: str, vector: npt.NDArray[np.float32]) -> None:
        with self._lock:
            self._vectors[query] = vector
            if len(self._vectors) > self._size:
                self._vectors.popitem(last=False)


_CACHES: dict[str, QueryCache] = {}
_CACHES_LOCK = threading.Lock()


def query_cache(model_id: str) -> QueryCache:
    """The process's one cache for ``model_id``: the language server's folders share their queries."""
    with _CACHES_LOCK:
        return _CACHES.setdefault(model_id, QueryCache())


class Models:
    """The model of one workspace: ``model`` setting (None = bundled MiniLM), or a given embedder (tests)."""

    def __init__(self, model: str | None, root: Path, batch_size: int, embedder: Embedder | None = None) -> None:
        self._model, self._root, self._batch_size = model, root, batch_size
        self._embedder = embedder
        self._custom = embedder is not None
        self._lock = threading.Lock()

    @cached_property
    def spec(self) -> ModelSpec:
        """The model folder in use. Raises ModelError if it cannot be found."""
        return resolve_model(self._model, self._root)

    @cached_property
    def meta(self) -> ModelMeta:
        """Model id, dimension and input limit, from the config files (no weights are loaded)."""
        if self._embedder is not None and self._custom:
            return ModelMeta(self._embedder.model_id, self._embedder.dim, self._embedder.max_tokens)
        dim, max_tokens = model_info(self.spec)
        return ModelMeta(self.spec.model_id, dim, max_tokens)

    @cached_property
    def counter(self) -> TokenCounter:
        """The model's tokenizer, for chunk sizing (a test embedder borrows the bundled one)."""
        return WordPieceCounter(resolve_model(None).path if self._custom else self.spec.path)

    @property
    def embedder(self) -> Embedder:
        """The embedder (the weights load on its first embed call). Raises ModelError."""
        with self._lock:
            if self._embedder is None:
                self._embedder = shared_embedder(self.spec, self._batch_size)
            return self._embedder

    def embed_query(self, query: str) -> npt.NDArray[np.float32]:
        """float32 (dim,) normalized embedding of ``query``, from the cache when it was asked lately.
        Raises ModelError."""
        embedder = self.embedder
        cache = query_cache(embedder.model_id)
        vector = cache.get(query)
        if vector is None:
            # a lone surrogate (JSON "\ud800", an undecodable command-line byte) is no text the tokenizer takes
            vector = np.asarray(embedder.embed([_LONE_SURROGATE.sub("\ufffd", query)])[0], dtype=np.float32)
            cache.put(query, vector)
        return vector
