"""Embedding cache keyed by (model id, chunk text MD5), filled from existing AIF-BIN files on demand."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from botbin.aifbin import decode
from botbin.errors import AifBinFormatError
from botbin.sync.confine import Confined

if TYPE_CHECKING:
    from botbin.crypto.cipher import Keyring

log = logging.getLogger(__name__)


class EmbeddingCache:
    """Vectors already computed for the current model, so unchanged chunk text is never re-embedded."""

    def __init__(
        self, model_id: str, keyring: Keyring | None = None, folder: Path | None = None, dim: int | None = None
    ) -> None:
        self.model_id = model_id
        self.dim = dim
        """The model's vector size: a file of another (a tampered one) gives nothing."""
        self.keyring = keyring
        """Opens the outputs of an encrypted store."""
        self.folder = folder
        """The output folder: a file read into the cache must stay in it (None: in its own folder)."""
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._seen: set[Path] = set()

    def __len__(self) -> int:
        return len(self._vectors)

    def add_file(self, path: Path) -> None:
        """Take the embeddings of the AIF-BIN file at ``path`` if it was made with this model.

        A missing or malformed file is skipped (logged): the cache is an optimization only.
        """
        if path in self._seen:
            return
        self._seen.add(path)
        guard = Confined(self.folder) if self.folder is not None else None
        self._vectors.update(vectors_of(path, self.model_id, self.keyring, guard, self.dim))

    def add_vectors(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        """Take vectors keyed by chunk text MD5 (e.g. the spare file's); those already held win."""
        for key, vector in vectors.items():
            self._vectors.setdefault(key, vector)

    def get(self, text_md5: str) -> npt.NDArray[np.float32] | None:
        """The cached vector, float32 (dim,), or None."""
        return self._vectors.get(text_md5)

    def put(self, text_md5: str, vector: npt.NDArray[np.float32]) -> None:
        self._vectors[text_md5] = vector


def vectors_of(
    path: Path,
    model_id: str,
    keyring: Keyring | None = None,
    guard: Confined | None = None,
    dim: int | None = None,
) -> dict[str, npt.NDArray[np.float32]]:
    """text_md5 -> float32 (dim,) embedding of every chunk of the AIF-BIN file at ``path`` (which must stay in
    the folder of ``guard``, by default its own folder's), if it was made with ``model_id`` (and at ``dim``
    when given); {} for a missing, malformed, other-model or out-of-folder file (logged, never raised)."""
    try:
        with (guard or Confined(path.parent)).open(path) as handle:
            doc = decode(handle.read(), str(path), keyring)
    except FileNotFoundError:
        return {}
    except (OSError, AifBinFormatError) as exc:
        log.info("embedding cache skips %s: %s", path, exc)
        return {}
    if doc.metadata.get("model", {}).get("name") != model_id or (dim is not None and doc.dim != dim):
        return {}
    return {chunk.text_md5: chunk.embedding for chunk in doc.chunks if chunk.text_md5}
