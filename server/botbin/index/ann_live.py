"""The HNSW index (index/ann.py) kept beside a MemoryIndex: patched by chunk key as notes change, loaded from its
cache file or built in a background thread past the size threshold (exact search serves meanwhile), reconciled
with the store when that thread is done, saved back on request. The AIF-BIN files stay the source of truth: the
cache file is validated on load (model, dimension, its own keys' digest) and whatever it lacks or holds in
excess is patched in, so a build stopped part-way (saved at exit, or at its last checkpoint) resumes where it
was; an unreadable file is rebuilt."""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from botbin.index.ann import ANN_MIN_ROWS, AnnIndex, usearch_available

log = logging.getLogger(__name__)

Snapshot = Callable[[], "tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]"]
"""Every chunk's key (n,) and float32 vector (n, dim) now (arrays not written to afterwards)."""
BUILD_BATCH = 1024
"""Vectors added per usearch call of a background build: between two calls the build may stop."""
CHECKPOINT_ROWS = 100_000
"""A background build saves its graph once it holds this many vectors, then each time the graph has doubled
since its last save: a build of hours (1M chunks on 2 cores) survives a kill, and the writes add up to at most
twice the final file."""
_BUILDING: weakref.WeakSet[LiveAnn] = weakref.WeakSet()


@atexit.register
def _stop_builds() -> None:
    """At exit, stop every background build between two batches and wait for it: a thread left inside usearch
    while the interpreter ends aborts the process ("terminate called without an active exception")."""
    for live in list(_BUILDING):
        live.stop()


@dataclass(frozen=True)
class AnnConfig:
    """Where and when the HNSW index is used."""

    min_rows: int = ANN_MIN_ROWS
    """Chunks from which searches take their vector candidates from HNSW (below: an exact scan)."""
    path: Path | None = None
    """Cache file (None: kept in memory only, e.g. for an encrypted store, whose vectors must not leave it)."""
    model: str = ""
    """Embedding model name, recorded beside the cache: a file of another model is not used."""
    background: bool = True
    """False in a process that answers once and exits (a one-shot CLI search): the HNSW index is never loaded
    or built, since that process would end before using it; its searches scan exactly."""


class LiveAnn:
    """HNSW kept in step with a store. Not thread-safe: the caller serializes calls (the store's lock); only
    the background load/build runs on its own thread, on its own index, adopted by ``ready``."""

    def __init__(self, dim: int, config: AnnConfig) -> None:
        """``dim``: vector size."""
        self.dim, self.config = dim, config
        self._live: AnnIndex | None = None
        self._thread: threading.Thread | None = None
        self._built: AnnIndex | None = None
        """The background thread's index, loaded or built (and then saved)."""
        self._dirty = False
        self.enabled = True
        """False without usearch, or after a failed build: every search is exact."""
        self._checked = False
        """usearch is imported only once the threshold is reached (small indexes never load it)."""
        self._stop = threading.Event()

    @property
    def building(self) -> bool:
        """True while the background load or build runs."""
        return self._thread is not None and self._thread.is_alive()

    def ready(self, rows: int, snapshot: Snapshot) -> AnnIndex | None:
        """The index to take candidates from for a store of ``rows`` chunks, or None (use the exact scan).
        Starts the background load/build the first time ``rows`` reaches the threshold, and adopts its
        result once done."""
        if not self.enabled or rows < self.config.min_rows or not self.config.background:
            return None
        if not self._checked:
            self._checked, self.enabled = True, usearch_available()
            if not self.enabled:
                log.warning("usearch is not installed: vector search stays an exact scan")
                return None
        if self._live is None and self._thread is not None and not self._thread.is_alive():
            self._adopt(snapshot)
        if self._live is None and self._thread is None:
            keys, vectors = snapshot()
            self._thread = threading.Thread(target=self._prepare, args=(keys, vectors), daemon=True)
            _BUILDING.add(self)
            self._thread.start()
        return self._live

    def stop(self, timeout: float = 60.0) -> None:
        """End a background build at its next batch (it saves what it built, for the next start to resume) and
        wait for the thread."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a background load/build ends (tests, benchmarks); True when none runs any more."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.building

    def patch(self, old: npt.NDArray[np.int64], new: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """A note's chunk keys went from ``old`` to ``new`` (``vectors`` float32 (len(new), dim)): only the
        chunks that changed leave or enter the graph. O(changed chunks x log N)."""
        if self._live is None:
            return  # a build in progress is reconciled with the store when adopted
        gone = np.setdiff1d(old, new, assume_unique=True)
        fresh = ~np.isin(new, old, assume_unique=True)
        self._live.remove(gone)
        self._live.add(new[fresh], vectors[fresh])
        self._dirty = self._dirty or bool(gone.size or fresh.any())

    def save(self) -> bool:
        """Write the cache file if the index changed since it was loaded or saved; True when written."""
        if self._live is None or not self._dirty or not self._write(self._live):
            return False
        self._dirty = False
        return True

    def _write(self, index: AnnIndex) -> bool:
        from botbin.sync.encryption import MARKER_FILE

        if self.config.path is None or (self.config.path.parent / MARKER_FILE).exists():
            return False  # a store encrypted since this index was loaded: its vectors stay in memory
        try:
            index.save(self.config.path, self.config.model)
        except (OSError, RuntimeError) as exc:  # usearch reports a failed write as RuntimeError
            log.warning("%s: could not save the ANN index (%s); it is rebuilt on the next start", self.config.path, exc)
            return False
        return True

    def _prepare(self, keys: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Background thread: the cache file (whole, or a build stopped part-way) with what it lacks of ``keys``
        added and what it holds in excess removed, else a build from ``keys``/``vectors``. Adds in batches; when
        stopped (at exit) it saves what it built, and it saves as the graph doubles (CHECKPOINT_ROWS on), so a
        process that ends mid-build, even killed, leaves the next one less to do."""
        try:
            index = self._load_cached()
            if index is None:
                index = AnnIndex(self.dim)
            held = index.keys()
            gone = np.setdiff1d(held, keys)
            index.remove(gone)
            todo = np.flatnonzero(~np.isin(keys, held))
            if held.size and todo.size:
                log.info("ANN index: resuming from %d saved chunks, %d to add", held.size - gone.size, todo.size)
            saved_at = len(index)
            for start in range(0, todo.size, BUILD_BATCH):
                if self._stop.is_set():
                    if start or gone.size:
                        self._write(index)
                        log.info(
                            "ANN index: stopped at %d of %d chunks, saved for the next start", len(index), len(keys)
                        )
                    return
                rows = todo[start : start + BUILD_BATCH]
                index.add(keys[rows], vectors[rows])
                if len(index) >= max(CHECKPOINT_ROWS, 2 * saved_at) and start + BUILD_BATCH < todo.size:
                    self._write(index)
                    saved_at = len(index)
            if todo.size or gone.size:
                self._write(index)  # not shared yet: saved here, off the caller's thread
            self._built = index
        except Exception:  # a failed build leaves exact search in place; it is logged, never raised
            log.exception("building the ANN index failed; searches stay exact")
            self.enabled = False

    def _load_cached(self) -> AnnIndex | None:
        path = self.config.path
        return None if path is None else AnnIndex.load_checked(path, self.dim, self.config.model)

    def _adopt(self, snapshot: Snapshot) -> None:
        """Take the finished index and patch in what changed in the store while it was prepared."""
        built, self._built, self._thread = self._built, None, None
        if built is None:
            return
        keys, vectors = snapshot()
        held = built.keys()
        gone = np.setdiff1d(held, keys)
        fresh = ~np.isin(keys, held)
        built.remove(gone)
        built.add(keys[fresh], vectors[fresh])
        if gone.size or fresh.any():
            log.info("ANN index: %d chunks removed, %d added since it was saved", gone.size, int(fresh.sum()))
            self._dirty = True
        self._live = built
