"""A cross-encoder: a sentence-transformers ``CrossEncoder`` folder that scores (query, passage) pairs, for the
optional re-ranking stage of search (search/rerank.py). Loaded from a local folder only, with torch, on first use;
one per folder and process. No cross-encoder ships with botbin: the ``rerank_model`` setting names one."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from botbin.errors import ModelError

BATCH_PAIRS = 4
"""Pairs scored per model call: the time budget is checked between calls, so a small batch gives up sooner."""


def resolve_cross_encoder(setting: str, workspace: Path) -> Path:
    """The folder ``setting`` names (relative to ``workspace``). Raises ModelError when it holds no model (no
    config.json)."""
    path = Path(setting).expanduser()
    if not path.is_absolute():
        path = workspace / path
    if not (path / "config.json").is_file():
        raise ModelError("not a cross-encoder folder (no config.json)", path)
    return path.resolve()


class CrossEncoderScorer:
    """One cross-encoder folder; thread-safe (one call at a time)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    @cached_property
    def _model(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder, never the network
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import CrossEncoder
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
            return CrossEncoder(str(self.path), device="cpu", local_files_only=True)
        except Exception as exc:
            raise ModelError(f"cannot load the cross-encoder ({exc})", self.path) from exc

    def load(self) -> None:
        """Load the weights now (a server does it at start). Raises ModelError."""
        with self._lock:
            _ = self._model

    def score(self, query: str, passages: Sequence[str], deadline: float) -> list[float] | None:
        """The model's score of (``query``, passage) for each passage (higher: more relevant), or None when
        ``time.perf_counter()`` passes ``deadline`` before the last batch is scored. Raises ModelError."""
        scores: list[float] = []
        with self._lock:
            model = self._model
            for start in range(0, len(passages), BATCH_PAIRS):
                if time.perf_counter() > deadline:
                    return None
                pairs = [(query, p) for p in passages[start : start + BATCH_PAIRS]]
                try:
                    out = model.predict(pairs, batch_size=len(pairs), show_progress_bar=False, convert_to_numpy=True)
                except Exception as exc:
                    raise ModelError(f"the cross-encoder failed ({exc})", self.path) from exc
                scores.extend(float(x) for x in out.reshape(len(pairs), -1)[:, -1])
        return None if time.perf_counter() > deadline else scores


_SHARED: dict[Path, CrossEncoderScorer] = {}
_SHARED_LOCK = threading.Lock()


def shared_cross_encoder(path: Path) -> CrossEncoderScorer:
    """One scorer per folder in this process (the language server's folders share it)."""
    with _SHARED_LOCK:
        return _SHARED.setdefault(path, CrossEncoderScorer(path))
