"""Models: a workspace's embedding model, its tokenizer and a thread-safe cache of query vectors.

Nothing heavy happens at construction: the model's folder is resolved, its config read and its weights
loaded only when first needed (a no-op sync never loads torch).
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

import numpy as np
import numpy.typing as npt

from botbin.chunking import TokenCounter
from botbin.config import Settings
from botbin.embedding import (
    Embedder,
    ModelSpec,
    WordPieceCounter,
    model_info,
    resolve_model,
    shared_embedder,
    spec_for_id,
)
from botbin.errors import ModelError
from botbin.sync.documents import ModelMeta
from botbin.sync.state import STATE_FILE, load_state, remember_state

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
    """The models of one workspace: the one its index on disk was built with, which searches and syncs use (the
    *serving* model), and the one the ``model`` setting names (None: the bundled MiniLM), which a model migration
    moves the index to (workspace/migration.py); the two are the same but during a migration. A given embedder
    (tests) is both, always."""

    def __init__(
        self,
        model: str | None,
        root: Path,
        batch_size: int,
        embedder: Embedder | None = None,
        built_with: Callable[[], str] | None = None,
    ) -> None:
        """``built_with``: reads the model id the index on disk was built with ("" for no index yet); asked once,
        when no caller has said it first (``follow``)."""
        self._model, self._root, self._batch_size = model, root, batch_size
        self._embedder = embedder
        self._custom = embedder is not None
        self._built_with = built_with or (lambda: "")
        self._lock = threading.RLock()
        self._serving: ModelSpec | None = None
        self._problem: ModelError | None = None
        """Why the serving model cannot be used (its folder is gone), when that is so."""
        self._followed = False
        self._built = ""
        """The model id the index on disk was built with, as last followed ("": no index yet)."""
        self._metas: dict[str, ModelMeta] = {}

    @cached_property
    def wanted(self) -> ModelSpec:
        """The model the ``model`` setting names. Raises ModelError if its folder cannot be found."""
        return resolve_model(self._model, self._root)

    def follow(self, built_with: str) -> None:
        """The index on disk was built with model ``built_with`` ("": there is no index yet): serve that one
        (the setting's when they agree, or when there is no index). Cheap when nothing changed."""
        if self._custom:
            return
        with self._lock:
            self._followed, self._built = True, built_with
            current = self._serving.model_id if self._serving is not None else None
            if built_with and built_with == current and self._problem is None:
                return
            wanted: ModelSpec | None = None
            try:
                wanted = self.wanted
            except ModelError as exc:  # a wrong setting never stops the index it has from answering
                self._serving, self._problem = None, exc
            if wanted is not None and (not built_with or wanted.model_id == built_with):
                self._serving, self._problem = wanted, None
            elif built_with:
                try:
                    self._serving, self._problem = spec_for_id(built_with), None
                except ModelError as exc:
                    self._serving, self._problem = None, exc

    def _current(self) -> ModelSpec:
        with self._lock:
            if not self._followed:
                self.follow(self._built_with())
            if self._serving is None:
                raise self._problem or ModelError("no model")
            return self._serving

    @property
    def spec(self) -> ModelSpec:
        """The serving model's folder. Raises ModelError if it cannot be found."""
        return self._current()

    @property
    def migrating_to(self) -> ModelSpec | None:
        """The setting's model when the index was built with another one (a migration is due), else None. Raises
        ModelError when the setting names no model folder (the index keeps answering with the one it has)."""
        if self._custom:
            return None
        with self._lock:
            if not self._followed:
                self.follow(self._built_with())
            built = self._built
        if not built:
            return None
        wanted = self.wanted
        return None if wanted.model_id == built else wanted

    @property
    def built_with(self) -> str:
        """The model id the index on disk was built with, as last followed ("": no index yet)."""
        with self._lock:
            if not self._followed and not self._custom:
                self.follow(self._built_with())
            return self._built

    @property
    def meta(self) -> ModelMeta:
        """Model id, dimension and input limit of the serving model, from its config files (no weights load)."""
        if self._embedder is not None and self._custom:
            return ModelMeta(self._embedder.model_id, self._embedder.dim, self._embedder.max_tokens)
        return self.meta_of(self.spec)

    def meta_of(self, spec: ModelSpec) -> ModelMeta:
        """Model id, dimension and input limit of ``spec`` (read once per model)."""
        with self._lock:
            if spec.model_id not in self._metas:
                dim, max_tokens = model_info(spec)
                self._metas[spec.model_id] = ModelMeta(spec.model_id, dim, max_tokens)
            return self._metas[spec.model_id]

    @property
    def counter(self) -> TokenCounter:
        """The serving model's tokenizer, for chunk sizing (a test embedder borrows the bundled one)."""
        return counter_of(resolve_model(None).path if self._custom else self.spec.path)

    @property
    def embedder(self) -> Embedder:
        """The serving model's embedder (the weights load on its first embed call). Raises ModelError."""
        if self._custom and self._embedder is not None:
            return self._embedder
        return shared_embedder(self.spec, self._batch_size)

    def embed_query(self, query: str) -> npt.NDArray[np.float32]:
        """float32 (dim,) normalized embedding of ``query`` by the serving model, from the cache when it was asked
        lately. Raises ModelError."""
        embedder = self.embedder
        cache = query_cache(embedder.model_id)
        vector = cache.get(query)
        if vector is None:
            # a lone surrogate (JSON "\ud800", an undecodable command-line byte) is no text the tokenizer takes
            vector = np.asarray(embedder.embed([_LONE_SURROGATE.sub("\ufffd", query)])[0], dtype=np.float32)
            cache.put(query, vector)
        return vector


@functools.lru_cache(maxsize=8)
def counter_of(path: Path) -> WordPieceCounter:
    """One tokenizer per model folder and process (a few MB each; loading one takes ~50 ms)."""
    return WordPieceCounter(path)


def built_with(output_dir: Path, settings: Settings) -> str:
    """The model id the index in ``output_dir`` was built with ("" when it holds no note). The state read is put
    back for the next sync of this process to take (``remember_state``): asking costs no second parse."""
    path = output_dir / STATE_FILE
    state, problems = load_state(path, settings.output_dir, reuse=True)
    if not problems:
        remember_state(path, state)
    return state.model if state.files else ""
