"""IndexHandle: a workspace's in-memory index, the lock that guards it, and its reload when another process syncs.

One handle per workspace. Reads (search, hover) and the patches a sync makes as it writes each note take the
same lock, so a search during a long sync sees every note written so far. Another process's sync (a CLI
``botbin sync``, a second editor) is noticed by one stat of the state file, and the index is read again.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from botbin.errors import BotbinError, ModelError
from botbin.sync.state import SyncState, state_stamp

if TYPE_CHECKING:
    from botbin.aifbin import AifBinDocument
    from botbin.crypto.cipher import Keyring
    from botbin.index.store import MemoryIndex
    from botbin.sync.engine import SyncReport

log = logging.getLogger(__name__)

ANN_FILE = "ann.usearch"
"""The HNSW cache beside the state file (index/ann_live.py; rebuilt from the AIF-BIN files when unusable)."""
ANN_SAVE_INTERVAL_S = 60.0
"""Least seconds between two writes of the HNSW cache after syncs (a write costs in proportion to the vault)."""

#: What a load needs: the state file's outputs, the model's (dim, name), the store's keyring.
StateFn = Callable[[], "tuple[SyncState, list[str]]"]
#: model(built_with) -> (dim, name) of the model that searches the index the state file describes (its ``model``,
#: "" for an empty one): the workspace's models follow it (workspace/models.py ``Models.follow``).
ModelFn = Callable[[str], "tuple[int, str]"]
KeyringFn = Callable[[], "Keyring | None"]


class IndexHandle:
    """The index of one workspace, loaded from its AIF-BIN files on first use (thread-safe)."""

    def __init__(
        self,
        root: Path,
        state_path: Path,
        state: StateFn,
        model: ModelFn,
        keyring: KeyringFn,
        load_cache: bool = True,
        one_shot: bool = False,
        warmed: Callable[[], object] | None = None,
    ) -> None:
        """``state`` reads the state file; ``model`` gives (dim, name) of the model that reads a state's index
        and may raise ModelError; ``keyring`` opens an encrypted store (None for a plaintext one) and may raise
        PassphraseError. ``load_cache``: read and keep LOAD_CACHE_FILE (plaintext stores only). ``one_shot``: see
        the attribute. ``warmed``: run once the warm-up's index job ended (``warm_in_background``: a long-lived
        process; the workspace starts a due model migration there)."""
        self._use_cache = load_cache
        self._root, self._state_path = root, state_path
        self._read_state, self._model, self._keyring = state, model, keyring
        self._index: MemoryIndex | None = None
        self._indexed_at: str | None = None
        self.lock = threading.RLock()
        """Held by every read of the index and every patch of it."""
        self._state_seen: tuple[int, ...] | None = None
        """Stat stamp of the state file and its journal when this process last read or wrote them."""
        self._damaged: set[str] = set()
        """Notes whose output failed to decode at load; the next sync rewrites them."""
        self._syncing = 0
        """Syncs of this process under way (their own state saves are not another process's sync)."""
        self._ann_saved = time.monotonic()
        """When the HNSW cache was last written (or the handle made)."""
        self.one_shot = one_shot
        """True in a process that answers once and exits (``botbin search`` without a server): the HNSW index
        is then never loaded or built in the background (AnnConfig.background)."""
        self._warming: threading.Event | None = None
        """Set when the warm-up (``warm_in_background``) has ended; None when none was started."""
        self._warmed = warmed

    @property
    def indexed_at(self) -> str | None:
        """When the index in use was last synced, ISO 8601 UTC."""
        return self._indexed_at

    @property
    def busy(self) -> bool:
        """True while a sync of this process runs (the index may not hold every note yet)."""
        return self._syncing > 0

    @property
    def damaged(self) -> frozenset[str]:
        """Notes whose output could not be read at the last load."""
        with self.lock:
            return frozenset(self._damaged)

    def warm_in_background(
        self, index: Callable[[], object], model: Callable[[], object] | None
    ) -> list[threading.Thread]:
        """Warm up now, each part on its own daemon thread: ``index`` (load the index and build what the first search
        would: Searcher.warm) and ``model`` (load it). A server calls this before its slow imports, so that its first
        answer finds both ready. A BotbinError is logged (the request that needs the part reports it again).
        Then the handle's ``warmed`` runs on the index thread. Returns the threads (tests join them)."""
        done = self._warming = threading.Event()

        def index_job() -> None:
            try:
                index()
            finally:
                done.set()
                if self._warmed is not None:  # once the index answers (or failed to load: it says why)
                    self._warmed()

        jobs = [("index", index_job)] + ([("model", model)] if model is not None else [])
        threads = [
            threading.Thread(target=_logged, args=(what, job), name=f"botbin-warm-{what}", daemon=True)
            for what, job in jobs
        ]
        for thread in threads:
            thread.start()
        return threads

    def wait_warm(self, timeout_s: float) -> None:
        """Block until the index warm-up has ended (at most ``timeout_s`` seconds; at once when none was started):
        a catch-up scan that competes with it for the CPU delays the first answer."""
        if self._warming is not None:
            self._warming.wait(timeout_s)

    def get(self) -> tuple[MemoryIndex, list[str]]:
        """The index (loaded on first use; reloaded when another process synced since) and load warnings."""
        if not self._syncing:
            self.reload_if_synced_elsewhere()
        with self.lock:
            return self._load()

    def forget(self) -> None:
        """Drop the in-memory index; the next ``get`` reads the AIF-BIN files again."""
        with self.lock:
            self._index = None

    def reload_if_synced_elsewhere(self) -> None:
        """Reload a loaded index when another process wrote the state file since this one last read or wrote
        it (a stat: ``last_sync`` alone has one-second resolution)."""
        with self.lock:
            if self._index is None or self._stamp() == self._state_seen:
                return
            log.info("%s was synced by another process; reloading the index", self._root)
            self._index = None
            self._load()

    # -- what a sync of this process does to the handle ------------------------------------------------
    @contextmanager
    def syncing(self) -> Iterator[None]:
        """Mark a sync of this process as running (its own state saves do not trigger a reload)."""
        with self.lock:
            self._syncing += 1
        try:
            yield
        finally:
            with self.lock:
                self._syncing -= 1

    def patch(self, rel: str, doc: AifBinDocument) -> None:
        """A note was written: a loaded index takes the new version at once."""
        with self.lock:
            if self._index is not None:
                self._index.upsert(doc)
            self._damaged.discard(rel)

    def synced(self, report: SyncReport) -> None:
        """A sync of this process ended: removed notes leave the index, and the state file is ours again."""
        with self.lock:
            self._indexed_at = report.synced_at
            self._state_seen = self._stamp()
            self._drop_cache_if_encrypted()
            if self._index is not None:
                for path in report.removed:  # deleted from disk, or no longer tracked
                    self._index.remove(path)
                self.save_ann(force=False)

    def _drop_cache_if_encrypted(self) -> None:
        """An encrypted store (or one being converted) keeps no load cache: its chunks would lie in the clear."""
        if self._marked_encrypted():
            self._drop_plain_caches()

    def _drop_plain_caches(self) -> None:
        """Remove the load cache (chunk texts) and the HNSW cache (vectors, which reveal the text) of a store
        made before it was encrypted."""
        from botbin.index.load_cache import drop_load_cache

        drop_load_cache(self._state_path.parent)
        for name in (ANN_FILE, ANN_FILE + ".json"):
            try:
                self._state_path.with_name(name).unlink(missing_ok=True)
            except OSError as exc:
                log.warning("%s: could not remove the plaintext ANN cache of an encrypted store (%s)", name, exc)

    def _marked_encrypted(self) -> bool:
        from botbin.sync.encryption import MARKER_FILE

        return (self._state_path.parent / MARKER_FILE).exists()

    def save_ann(self, force: bool = True) -> bool:
        """Write the HNSW cache if it changed (unless ``force``, at most every ANN_SAVE_INTERVAL_S); True when
        written."""
        with self.lock:
            if self._index is None or (not force and time.monotonic() - self._ann_saved < ANN_SAVE_INTERVAL_S):
                return False
            saved = self._index.save_ann()
            if saved:
                self._ann_saved = time.monotonic()
            return saved

    # -- loading ---------------------------------------------------------------------------------------
    def _stamp(self) -> tuple[int, ...] | None:
        """Stat stamp of the state file and its journal, None without a state file: a no-op check reads nothing."""
        return state_stamp(self._state_path)

    def adopt(self, state: SyncState, dim: int, name: str, commit: Callable[[], None]) -> list[str]:
        """A model migration put ``state``'s outputs (model ``name``, ``dim``) in the live places: build its index
        now, while the loaded one keeps answering, then under the lock run ``commit`` (it writes the state file and
        switches the models) and put the new index in place, so that no search meets one model's index with the
        other's query vector. Without a loaded index, only ``commit`` runs. Returns the build's warnings."""
        built: tuple[MemoryIndex, list[str], set[str]] | None = None
        if self._index is not None:
            built = self._build(state, dim, name)
        with self.lock:
            commit()
            self._state_seen = self._stamp()
            self._indexed_at = state.last_sync
            if built is None:
                self._index = None
                return []
            self._index, warnings, self._damaged = built
            return warnings

    def _load(self) -> tuple[MemoryIndex, list[str]]:
        if self._index is not None:
            return self._index, []
        self._state_seen = self._stamp()  # before the read: a later change is still noticed
        state, warnings = self._read_state()
        dim: int | None = None
        name = ""
        try:
            dim, name = self._model(state.model if state.files else "")
            if state.files and state.model and state.model != name:
                warnings.append(f"the index was built with {state.model}, not {name}; run `botbin sync`")
        except ModelError as exc:
            warnings.append(str(exc))
        self._index, more, damaged = self._build(state, dim, name)
        self._damaged.update(damaged)
        self._indexed_at = state.last_sync
        return self._index, warnings + more

    def _build(self, state: SyncState, dim: int | None, name: str) -> tuple[MemoryIndex, list[str], set[str]]:
        """The index of ``state``'s outputs read with model ``name`` (``dim``), its warnings and the notes whose
        output could not be read."""
        from botbin.index.ann_live import AnnConfig
        from botbin.index.load import Owner, load_index  # bm25s and scipy load on the first search, not a sync
        from botbin.index.load_cache import LOAD_CACHE_FILE, CacheConfig
        from botbin.sync.model_trees import MODELS_DIR, tree_name

        root = os.fspath(self._root)
        files = [os.path.join(root, e.output) for e in state.files.values()]  # strings: 10k Paths cost 0.1-0.2 s
        damaged: list[Path] = []
        keyring = self._keyring()
        sealed = keyring is not None or state.encrypted or self._marked_encrypted()  # locked ones too
        ann_path = None if sealed else self._state_path.with_name(ANN_FILE)  # vectors stay sealed
        ann = AnnConfig(path=ann_path, model=name, background=not self.one_shot)
        plain = not sealed and self._use_cache
        cache = CacheConfig(self._state_path.with_name(LOAD_CACHE_FILE), name) if plain else None
        if sealed:  # one left from before the store was encrypted holds its chunks in the clear
            self._drop_plain_caches()
        # files read back are untrusted: checked; mid-switch, a file of another model is read from the model's tree
        kept = self._state_path.parent / MODELS_DIR / tree_name(state.model) if state.model else None
        owner = Owner(self._state_path.parent, list(state.files), state.model, kept)
        index, load_warnings = load_index(files, dim, damaged, keyring, ann, cache, owner)
        failed: set[str] = set()
        if damaged:  # 20k Path joins cost 0.6 s at 10k notes: only when a file failed
            by_output = {os.path.join(root, e.output): rel for rel, e in state.files.items()}
            failed.update(by_output[os.fspath(p)] for p in damaged)
        return index, load_warnings, failed


def _logged(what: str, job: Callable[[], object]) -> None:
    """Run ``job``, logging a BotbinError (a locked store, a missing model) instead of raising it."""
    try:
        job()
    except BotbinError as exc:
        log.warning("could not load the %s ahead of the first request: %s", what, exc)
