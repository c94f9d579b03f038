"""Spare embeddings: vectors of notes that left the index, kept in one bounded file of the output folder.

A note that is deleted or no longer tracked loses its ``.aif-bin`` file, and with it the only copy of its
embeddings. Before the file goes, its vectors move here (keyed by chunk text MD5, for one model), so a note
that comes back (a flag forgotten for one sync, a folder excluded then included again, a restored backup)
is not re-embedded. The oldest vectors are dropped past ``MAX_SPARE_VECTORS``.

Format (MessagePack map): ``format`` "botbin-spare-vectors", ``version`` 1, ``model`` (model id), ``dim``,
``keys`` (list of chunk text MD5 hex, oldest first), ``vectors`` (bin: len(keys) x dim little-endian
float32). A plaintext store only: an encrypted store keeps no spare file (vectors reveal the text).
"""

from __future__ import annotations

import logging
from pathlib import Path

import msgpack
import numpy as np
import numpy.typing as npt

from botbin.aifbin import MAX_COMPONENT
from botbin.sync.atomic import atomic_write
from botbin.sync.confine import read_confined

log = logging.getLogger(__name__)

SPARE_FILE = "embedding-cache.bin"
_FORMAT = "botbin-spare-vectors"
_VERSION = 1
#: Most vectors kept (384-d: 1.5 KiB each, so about 73 MiB at the bound).
MAX_SPARE_VECTORS = 50_000

Vectors = dict[str, npt.NDArray[np.float32]]


def read_spare(path: Path, model_id: str, dim: int) -> Vectors:
    """The spare vectors in ``path`` made with ``model_id`` (float32 (dim,) each, oldest first).

    A missing file, one of another model or dimension, or a damaged one gives {} (a damaged one is logged):
    the file is an optimization only.
    """
    try:
        raw = msgpack.unpackb(read_confined(path.parent, path), raw=False)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
        log.warning("%s: spare embeddings unreadable (%s); ignored", path, exc)
        return {}
    if not isinstance(raw, dict) or raw.get("format") != _FORMAT or raw.get("version") != _VERSION:
        log.warning("%s: not a spare embeddings file of this version; ignored", path)
        return {}
    if raw.get("model") != model_id or raw.get("dim") != dim:
        return {}
    keys, blob = raw.get("keys"), raw.get("vectors")
    if not isinstance(keys, list) or not isinstance(blob, bytes) or len(blob) != len(keys) * dim * 4:
        log.warning("%s: spare embeddings damaged (sizes disagree); ignored", path)
        return {}
    matrix = np.frombuffer(blob, dtype="<f4").reshape(len(keys), dim).astype(np.float32)
    finite = np.isfinite(matrix).all() and not (matrix.size and float(np.abs(matrix).max()) > MAX_COMPONENT)
    if not finite or not all(isinstance(key, str) for key in keys):
        # a NaN vector taken from here would be written into the notes' outputs
        log.warning(
            "%s: spare embeddings damaged (a key that is not a string, or NaN or out-of-range vectors); ignored", path
        )
        return {}
    return {key: matrix[i] for i, key in enumerate(keys)}


def write_spare(path: Path, model_id: str, dim: int, vectors: Vectors, limit: int = MAX_SPARE_VECTORS) -> None:
    """Write ``vectors`` (oldest first; only the newest ``limit`` are kept) atomically to ``path``.

    Raises OSError if it cannot be written (the old file is then intact).
    """
    keys = list(vectors)[-limit:] if limit > 0 else []
    matrix = np.stack([vectors[k] for k in keys]).astype("<f4") if keys else np.zeros((0, dim), "<f4")
    payload = {
        "format": _FORMAT,
        "version": _VERSION,
        "model": model_id,
        "dim": dim,
        "keys": keys,
        "vectors": matrix.tobytes(),
    }
    atomic_write(path, msgpack.packb(payload, use_bin_type=True), sync_dir=False)


def add_spare(path: Path, model_id: str, dim: int, new: Vectors, limit: int = MAX_SPARE_VECTORS) -> None:
    """Add ``new`` to the spare file (they become its newest vectors). Raises OSError if it cannot be written."""
    if not new:
        return
    merged = read_spare(path, model_id, dim)
    for key in new:
        merged.pop(key, None)  # re-added at the end: newest
    merged.update(new)
    write_spare(path, model_id, dim, merged, limit)
