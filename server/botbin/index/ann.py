"""Sub-linear vector search past a size threshold: a usearch HNSW index over the chunk vectors, keyed by stable
integer keys (so notes can be added and removed in place), with the candidates rescored exactly; below the
threshold, or when usearch is missing, an exact scan. Persisted beside the AIF-BIN files as a rebuildable cache
(the AIF-BIN files stay the source of truth): ``save`` writes it atomically with a sidecar naming its size and a
digest of its keys, ``load`` returns None for a missing, corrupt or stale file, and the caller rebuilds."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from botbin.sync.atomic import open_private, writer_temp
from botbin.sync.confine import Confined, read_confined

log = logging.getLogger(__name__)

ANN_MIN_ROWS = 50_000
"""Below this many vectors an exact scan is fast enough (~4 ms at 50k x 384 on 2 cores) and always exact."""
CANDIDATES = 100
"""Nearest neighbours asked of HNSW per query before exact rescoring (10x the usual k of 10; the search asks
10 x k when k is larger). At 100k clustered chunks 32, 64, 100 and 200 all gave the exact scan's top 10 through the
store (its neighbours and the best BM25 rows join them); HNSW's cost grows with it and with ``expansion_search``
(p50 5.3 ms at 200 / 200 against 2.7 at 100 / 100 on 2 busy cores; bench/README.md)."""
REFERENCE_ROWS = 100_000
"""Graph size up to which ``expansion_search`` is used as set; past it the search widens (AnnParams.search_width)."""


@dataclass(frozen=True)
class AnnParams:
    """HNSW graph parameters (usearch names)."""

    connectivity: int = 16
    """Edges per node (HNSW's M): more is better recall, more memory and a slower build."""
    expansion_add: int = 128
    """Candidate list while inserting (efConstruction)."""
    expansion_search: int = 128
    """Candidate list while searching (ef) up to ``REFERENCE_ROWS`` vectors; at least ``CANDIDATES``."""

    def search_width(self, rows: int) -> int:
        """The ef a graph of ``rows`` vectors is searched with: ``expansion_search`` up to ``REFERENCE_ROWS``,
        doubled for each tenfold past it (256 at 1M). A fixed ef loses recall as the graph grows: at 128,
        recall@10 against exact was 0.996 at 100k and 0.9696 at 1M clustered vectors (1,000 queries); 256 gave
        0.9922 at 1M, at 0.053x the exact scan's p95 (bench_ann.py --sweep; docs/benchmarks.md)."""
        grow: float = max(1.0, rows / REFERENCE_ROWS) ** math.log10(2)
        return max(CANDIDATES, round(self.expansion_search * grow))


def usearch_available() -> bool:
    """True when the ``usearch`` package imports (after onnxruntime: see ``_import_usearch``)."""
    try:
        _import_usearch()
    except ImportError:
        return False
    return True


def _import_usearch() -> Any:
    """``usearch.index``, imported after ``onnxruntime``: the other order crashes the process (SIGSEGV in
    onnxruntime's import with usearch 2.26 / numkong 7.8 and onnxruntime 1.32 loaded first), and the query
    embedder imports onnxruntime later in the same process."""
    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401
    import usearch.index

    return usearch.index


class AnnIndex:
    """HNSW over float32 unit vectors (inner product = cosine), keyed by int64 keys. Not thread-safe."""

    def __init__(self, dim: int, params: AnnParams | None = None) -> None:
        """``dim``: vector size (384 for all-MiniLM-L6-v2). Raises ImportError without usearch."""
        Index = _import_usearch().Index

        self.dim = dim
        self.params = params or AnnParams()
        self._index: Any = Index(
            ndim=dim,
            metric="ip",
            dtype="f32",
            connectivity=self.params.connectivity,
            expansion_add=self.params.expansion_add,
            expansion_search=self.params.search_width(0),
        )

    def __len__(self) -> int:
        return len(self._index)

    @property
    def expansion_search(self) -> int:
        """The ef the next search uses (``AnnParams.search_width`` of the graph's size)."""
        return int(self._index.expansion_search)

    def add(self, keys: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Insert ``vectors`` float32 (n, dim) under ``keys`` (n,), which must be new. O(n log N), on one thread:
        usearch's concurrent ``add`` leaves some nodes unreachable by any search (usearch issue #735, open in
        2.26): built on 2 threads, 2-7 of the exact top 10s of 300 queries at 6,000 vectors were never
        candidates whatever ``expansion_search``, against none built on one."""
        if len(keys):
            self._index.add(
                np.asarray(keys, dtype=np.int64), np.ascontiguousarray(vectors, dtype=np.float32), threads=1
            )

    def remove(self, keys: npt.NDArray[np.int64]) -> None:
        """Drop ``keys`` (absent ones are ignored)."""
        if len(keys):
            self._index.remove(np.asarray(keys, dtype=np.int64))

    def candidates(self, query: npt.NDArray[np.float32], count: int = CANDIDATES) -> npt.NDArray[np.int64]:
        """Keys of about the ``count`` nearest vectors to ``query`` float32 (dim,), best first (approximate)."""
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        width = max(self.params.search_width(len(self)), count)
        if width != self._index.expansion_search:
            self._index.expansion_search = width
        # one thread: a pool for one query costs more than it saves, and the other core serves another request
        found = self._index.search(np.asarray(query, dtype=np.float32), min(count, len(self)), threads=1)
        return np.asarray(found.keys, dtype=np.int64)

    def save(self, path: Path, model: str = "") -> None:
        """Write the graph to ``path`` atomically, and ``path.json`` naming its size, keys' digest, ``model``
        (the embedding model of its vectors) and the file's CRC-32."""
        tmp = writer_temp(path)  # swept by the next sync once this process is gone (a kill mid-save)
        open_private(tmp).close()  # usearch rewrites the file in place, so it keeps this 0600 (the umask's aside)
        self._index.save(str(tmp))
        os.replace(tmp, path)
        meta = {"count": len(self), "dim": self.dim, "keys_md5": _keys_digest(self.keys()), "model": model}
        with open(path, "rb") as written:
            meta["crc32"] = _file_crc(written)  # checked before usearch reads the file back: a damaged graph crashes it
        side = path.with_name(path.name + ".json")
        tmp_side = writer_temp(side)
        with open_private(tmp_side) as out:
            out.write(json.dumps(meta).encode("utf-8"))
        os.replace(tmp_side, side)

    def keys(self) -> npt.NDArray[np.int64]:
        """Every key held, sorted."""
        return np.sort(np.asarray(self._index.keys, dtype=np.int64))

    @classmethod
    def load(
        cls, path: Path, dim: int, expected_keys: npt.NDArray[np.int64], params: AnnParams | None = None
    ) -> AnnIndex | None:
        """The index saved at ``path`` if it holds exactly ``expected_keys`` at ``dim``; None (logged) when the
        file is missing, unreadable, corrupt or stale, so that the caller rebuilds it."""
        want = _keys_digest(np.sort(np.asarray(expected_keys, dtype=np.int64)))

        def fits(meta: dict[str, Any]) -> bool:
            return meta.get("dim") == dim and meta.get("count") == len(expected_keys) and meta.get("keys_md5") == want

        return cls._load(path, dim, params, fits, "stale ANN index (other vectors)")

    @classmethod
    def load_checked(cls, path: Path, dim: int, model: str = "", params: AnnParams | None = None) -> AnnIndex | None:
        """The index saved at ``path`` if it is whole (its keys match its record) and holds ``model``'s vectors
        at ``dim``, whatever keys it holds (the caller patches in the difference); None (logged) otherwise."""

        def fits(meta: dict[str, Any]) -> bool:
            return meta.get("dim") == dim and meta.get("model", "") == model

        return cls._load(path, dim, params, fits, "ANN index of another model or dimension")

    @classmethod
    def _load(
        cls, path: Path, dim: int, params: AnnParams | None, fits: Callable[[dict[str, Any]], bool], unfit: str
    ) -> AnnIndex | None:
        """The graph at ``path`` when its record ``fits`` and the graph matches its record (its size and keys'
        digest); None (logged: ``unfit``, unreadable or not matching) otherwise."""
        try:
            meta = _sidecar(path)
            if not fits(meta):
                log.info("%s: %s; it is rebuilt", path, unfit)
                return None
            index = cls(dim, params)
            index._index.load(_verified(path, meta))
        except FileNotFoundError:
            return None
        except Exception as exc:  # usearch raises RuntimeError / ValueError on damaged files
            log.warning("%s: unreadable ANN index (%s); it is rebuilt", path, exc)
            return None
        if len(index) != meta.get("count") or _keys_digest(index.keys()) != meta.get("keys_md5"):
            log.warning("%s: ANN index does not match its record; it is rebuilt", path)
            return None
        return index


def _sidecar(path: Path) -> dict[str, Any]:
    """The ``.json`` record beside the graph file ``path``. Raises FileNotFoundError without one, ValueError when
    it is not a JSON object or a link takes it out of the folder (a record read back is untrusted)."""
    try:
        meta = json.loads(read_confined(path.parent, path.with_name(path.name + ".json")))
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise ValueError(f"its record cannot be read ({exc})") from exc
    if not isinstance(meta, dict):
        raise ValueError("its record is not a JSON object")
    return meta


def _verified(path: Path, meta: dict[str, Any]) -> str:
    """The real path of graph file ``path`` once its bytes match the CRC-32 its record holds: usearch trusts the
    file it loads, and a damaged graph can crash the process. A record written before botbin kept the CRC
    (none) is trusted as before. Raises ValueError for a link out of the folder or a mismatch."""
    guard = Confined(path.parent)
    real = guard.real_path(path)
    if real is None:
        raise ValueError("a symbolic link leads out of its folder")
    if "crc32" in meta:
        with guard.open(path) as handle:  # a regular file: never blocked by a FIFO in its place
            if _file_crc(handle) != meta["crc32"]:
                raise ValueError("its bytes do not match the CRC-32 of its record (damaged)")
    return real


def _file_crc(handle: BinaryIO) -> int:
    """CRC-32 of the open file ``handle``, read 4 MiB at a time (~0.6 GB/s: 0.3 s at 100k chunks)."""
    crc = 0
    while block := handle.read(1 << 22):
        crc = zlib.crc32(block, crc)
    return crc


def chunk_key(path: str, ordinal: int, text_md5: str) -> int:
    """A stable non-negative 63-bit key for chunk number ``ordinal`` of note ``path`` with text ``text_md5``:
    the same across processes, so a saved index matches the notes it was built from."""
    digest = hashlib.blake2b(f"{path}\0{ordinal}\0{text_md5}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & (2**63 - 1)


def _keys_digest(sorted_keys: npt.NDArray[np.int64]) -> str:
    return hashlib.md5(np.ascontiguousarray(sorted_keys, dtype=np.int64).tobytes()).hexdigest()


def rescore(
    matrix: npt.NDArray[np.float32], rows: npt.NDArray[np.int64], query: npt.NDArray[np.float32], k: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The ``k`` best of ``rows`` by exact cosine with ``query`` (rows of the unit-vector ``matrix``), best
    first: (rows, cosines)."""
    if not len(rows):
        return rows, np.zeros(0, dtype=np.float32)
    scores = matrix[rows] @ query
    top = np.argsort(-scores, kind="stable")[:k]
    return rows[top], scores[top].astype(np.float32)


def exact_top(matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.int64]:
    """Rows of the ``k`` best cosines by a full scan, best first (the reference and the small-index path)."""
    scores = matrix @ query
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")].astype(np.int64)
