"""The one facade over sync, index and search that the CLI (and later the LSP and MCP servers) call."""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from botbin import aifbin
from botbin.chunking import TokenCounter
from botbin.config import Settings, load_settings
from botbin.embedding import (
    Embedder,
    ModelSpec,
    WordPieceCounter,
    model_info,
    resolve_model,
    shared_embedder,
)
from botbin.errors import BotbinError, ModelError
from botbin.notes_io import directives_on_disk, relative_path
from botbin.results import DirectiveReport, SearchResult, Status
from botbin.sync.documents import ModelMeta
from botbin.sync.encryption import PassphraseFn, StoreKeys, encryption_mode, open_keys
from botbin.sync.engine import ProgressFn, SyncContext, SyncReport, sync_workspace
from botbin.sync.scan import check_root
from botbin.sync.staleness import find_stale
from botbin.sync.state import STATE_FILE, SyncState, load_state

if TYPE_CHECKING:  # the index (bm25s, scipy) is imported on the first search, not for a sync
    from botbin.directives.conflicts import Conflict
    from botbin.index.store import Hit, MemoryIndex, SearchFilters
    from botbin.lifecycle.manager import Lifecycle
    from botbin.memory.agent import Remembered
    from botbin.memory.context import ContextResult

log = logging.getLogger(__name__)


class MemoryService:
    """Memory of one workspace folder: sync notes to AIF-BIN, search them, report status."""

    def __init__(
        self,
        workspace: Path,
        overrides: Mapping[str, Any] | None = None,
        embedder: Embedder | None = None,
        env: Mapping[str, str] | None = None,
        overrides_source: str = "command line",
        passphrase: PassphraseFn | None = None,
    ) -> None:
        """``overrides``: settings from flags or LSP options (named ``overrides_source`` in warnings);
        ``embedder``: replaces the model (tests, benchmarks); ``passphrase``: asked only for an encrypted
        store (default: BOTBIN_PASSPHRASE from ``env``); it is never written anywhere. Safe to call from
        several threads: index reads and patches hold one lock, and a long sync holds it only to patch
        each written note."""
        self.root = Path(workspace).resolve()
        environ = os.environ if env is None else env
        self._passphrase: PassphraseFn = passphrase or (lambda: environ.get("BOTBIN_PASSPHRASE") or None)
        loaded = load_settings(self.root, overrides, env, overrides_source)
        self.settings: Settings = loaded.settings
        self.warnings: tuple[str, ...] = loaded.warnings
        self._embedder = embedder
        self._custom_embedder = embedder is not None
        self._index: MemoryIndex | None = None
        self._indexed_at: str | None = None
        self._lock = threading.RLock()
        self._state_seen: tuple[int, int] | None = None
        """Stat stamp of the state file when this process last read or wrote it."""
        self._damaged: set[str] = set()
        """Notes whose output failed to decode at index load; the next sync rewrites them."""
        self._syncing = 0
        """Syncs of this process under way (their own state saves are not another process's sync)."""

    # -- model --------------------------------------------------------------------------------
    @cached_property
    def model_spec(self) -> ModelSpec:
        """The model folder in use. Raises ModelError if it cannot be found."""
        return resolve_model(self.settings.model, self.root)

    @cached_property
    def model_meta(self) -> ModelMeta:
        """Model id, dimension and input limit, from the config files (no weights are loaded)."""
        if self._custom_embedder and self._embedder is not None:
            return ModelMeta(self._embedder.model_id, self._embedder.dim, self._embedder.max_tokens)
        dim, max_tokens = model_info(self.model_spec)
        return ModelMeta(self.model_spec.model_id, dim, max_tokens)

    @cached_property
    def counter(self) -> TokenCounter:
        """The model's tokenizer, for chunk sizing (a test embedder borrows the bundled one)."""
        path = self.model_spec.path if not self._custom_embedder else resolve_model(None).path
        return WordPieceCounter(path)

    @property
    def embedder(self) -> Embedder:
        """The embedder in use (the model itself loads on the first embed call)."""
        if self._embedder is None:
            embedder: Embedder = shared_embedder(self.model_spec, self.settings.batch_size)
            self._embedder = embedder
            return embedder
        return self._embedder

    @cached_property
    def lifecycle(self) -> Lifecycle:
        """The memos' lifecycle: reinforcement, decay, prune, restore, consolidate (lifecycle/)."""
        from botbin.lifecycle.manager import Lifecycle

        return Lifecycle(self)

    @property
    def indexed_at(self) -> str | None:
        """When the index in use was last synced, ISO 8601."""
        return self._indexed_at

    # -- paths --------------------------------------------------------------------------------
    @property
    def output_dir(self) -> Path:
        return self.root / self.settings.output_dir

    @property
    def state_path(self) -> Path:
        return self.output_dir / STATE_FILE

    def _state(self) -> tuple[SyncState, list[str]]:
        return load_state(self.state_path)

    def keys(self) -> StoreKeys | None:
        """Keys of an encrypted store (None for a plaintext one); the passphrase is stretched once per
        process. Raises PassphraseError if it is missing or wrong."""
        return open_keys(self.output_dir, self._passphrase)

    # -- operations ---------------------------------------------------------------------------
    def sync(self, progress: ProgressFn | None = None, full: bool = False,
             keep_documents: bool = False, encryption: str | None = None) -> SyncReport:
        """Sync the workspace (see sync_workspace for errors); a loaded index is patched note by note as
        each output is written, so searches during a long sync already see what is done. Load the index
        (``index()``) before a sync whose progress should be searchable.

        ``keep_documents``: also return the written documents in the report (else none are held, so a cold
        sync of a big vault stays small). Notes whose output failed to decode are rewritten. ``encryption``:
        "encrypt" or "decrypt" converts the whole store in place (see sync_workspace).
        """
        ctx = SyncContext(self.root, self.settings, self.model_meta, lambda: self.counter, lambda: self.embedder,
                          self._passphrase)

        def patch(rel: str, doc: aifbin.AifBinDocument) -> None:
            with self._lock:
                if self._index is not None:
                    self._index.upsert(doc)
                self._damaged.discard(rel)

        self._syncing += 1
        try:  # another process's sync is noticed once the lock is ours: it may have synced while we waited
            report = sync_workspace(ctx, progress, full, keep_documents=keep_documents, written=patch,
                                    force_paths=frozenset(self._damaged), encryption=encryption,
                                    locked=self._reload_if_synced_elsewhere)
        finally:
            self._syncing -= 1
        with self._lock:
            self._indexed_at = report.synced_at
            self._state_seen = self._state_stamp()
            if self._index is not None:
                for path in report.deleted:
                    self._index.remove(path)
        return report

    def _state_stamp(self) -> tuple[int, int] | None:
        """(mtime_ns, size) of the state file, None without one: a stat, so a no-op check reads nothing."""
        try:
            st = self.state_path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def _reload_if_synced_elsewhere(self) -> None:
        """Drop and reload a loaded index when another process (a CLI sync, a second editor) wrote the state
        file since this one last read or wrote it (a stat: last_sync alone has one-second resolution)."""
        with self._lock:
            if self._index is None or self._state_stamp() == self._state_seen:
                return
            log.info("%s was synced by another process; reloading the index", self.root)
            self._index = None
            self._load_index()

    def forget_index(self) -> None:
        """Drop the in-memory index; the next search reloads it from the AIF-BIN files."""
        with self._lock:
            self._index = None

    def index(self) -> tuple[MemoryIndex, list[str]]:
        """The in-memory index, loaded from the state file's outputs on first use, and reloaded when another
        process (a CLI sync, a second editor) has synced since (one stat of the state file)."""
        if not self._syncing:
            self._reload_if_synced_elsewhere()
        with self._lock:
            return self._load_index()

    def _load_index(self) -> tuple[MemoryIndex, list[str]]:
        from botbin.index.store import load_index

        warnings: list[str] = []
        if self._index is None:
            self._state_seen = self._state_stamp()  # before the read: a later change is still noticed
            state, warnings = self._state()
            dim: int | None = None
            try:
                dim, name = self.model_meta.dim, self.model_meta.name
                if state.files and state.model and state.model != name:
                    warnings.append(f"the index was built with {state.model}, not {name}; run `botbin sync`")
            except ModelError as exc:
                warnings.append(str(exc))
            files = [self.root / e.output for e in state.files.values()]
            damaged: list[Path] = []
            keys = self.keys()
            self._index, load_warnings = load_index(files, dim, damaged, keys.keyring if keys else None)
            by_output = {self.root / e.output: rel for rel, e in state.files.items()}
            self._damaged.update(by_output[p] for p in damaged)
            self._indexed_at = state.last_sync
            warnings += load_warnings
        return self._index, warnings

    def embed_query(self, query: str) -> npt.NDArray[np.float32]:
        """float32 (dim,) normalized embedding of ``query`` (the last 256 are cached). Raises ModelError."""
        key = (self.embedder.model_id, query)
        with self._lock:
            cached = _QUERY_CACHE.get(key)
            if cached is not None:
                _QUERY_CACHE.move_to_end(key)
                return cached
        vector = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        with self._lock:
            _QUERY_CACHE[key] = vector
            if len(_QUERY_CACHE) > _QUERY_CACHE_SIZE:
                _QUERY_CACHE.popitem(last=False)
        return vector

    def search(
        self,
        query: str,
        k: int | None = None,
        alpha: float | None = None,
        filters: SearchFilters | None = None,
        best_per_note: bool = False,
        query_vector: npt.NDArray[np.float32] | None = None,
        reinforce: bool = True,
    ) -> SearchResult:
        """Hybrid search of the synced notes, lowered by memo decay (``decay_weight``), archived memos left
        out. Falls back to BM25 alone if the model cannot load.

        ``query_vector``: float32 (dim,) normalized, to use instead of embedding ``query``. ``reinforce``:
        count a retrieval for each hit returned (False for callers that show only some of them).
        Raises WorkspaceError if the workspace folder is missing or unreadable.
        """
        check_root(self.root)
        index, warnings = self.index()
        degraded = False
        vector = query_vector
        if vector is None and query.strip() and len(index):
            try:
                vector = self.embed_query(query)
            except ModelError as exc:
                degraded = True
                warnings = [w for w in warnings if w != str(exc)]  # one cause, one warning
                warnings.append(f"model unavailable, keyword search only: {exc}")
        k = k or self.settings.top_k
        if len(index):
            self.lifecycle.hide_archived(index)
        with self._lock:  # room for decay to lift a hit from just below the cut
            hits = index.search(query, vector, k + min(k, 10), self.settings.alpha if alpha is None else alpha,
                                filters, best_per_note)
        hits = self.lifecycle.rank(hits)[:k]
        if reinforce:
            self.lifecycle.reinforce(hits)
        return SearchResult(hits, degraded, tuple(warnings), self._indexed_at)

    def related(self, text: str, path: str | None = None, lines: tuple[int, int] | None = None,
                k: int = 5, source_md5: str | None = None) -> SearchResult:
        """Memories most related to ``text`` (a paragraph), best first, at most one per note, never the
        paragraph itself: hits of note ``path`` overlapping ``lines`` (0-based, end exclusive) are dropped.

        ``source_md5``: MD5 of the note's current text; when the index holds that very version, the stored
        embedding of the chunk covering ``lines`` stands in for the paragraph's, and the model is not run
        (a hover then costs a search, a few ms, instead of a ~30-50 ms embedding on 2 CPU cores).
        Raises WorkspaceError if the workspace folder is missing.
        """
        vector = None
        if path is not None and lines is not None and source_md5 is not None:
            index, _ = self.index()
            with self._lock:
                vector = index.chunk_vector(path, lines, source_md5)
        result = self.search(" ".join(text.split()[:200]), k=k * 4, query_vector=vector, reinforce=False)

        def is_self(hit: Hit) -> bool:
            return (hit.path == path and lines is not None
                    and hit.start_line < lines[1] and lines[0] < hit.end_line)

        kept: list[Hit] = []
        seen: set[str] = set()
        for hit in result.hits:
            if not is_self(hit) and hit.path not in seen:
                seen.add(hit.path)
                kept.append(hit)
        self.lifecycle.reinforce(kept[:k])  # a hover shows these
        return SearchResult(kept[:k], result.degraded, result.warnings, result.indexed_at)

    def status(self) -> Status:
        """Index size, last sync and the notes that changed since (no hashing: size and mtime only).

        Raises WorkspaceError if the workspace folder is missing or unreadable.
        """
        check_root(self.root)
        state, warnings = self._state()
        found = find_stale(self.root, self.settings, state)
        warnings += found.warnings
        try:
            model = self.model_meta.name
        except ModelError as exc:
            model, warnings = "unavailable", [*warnings, str(exc)]
        conflicts: list[Conflict] = []
        encryption = "off"
        try:
            encryption = encryption_mode(self.output_dir, state)
            conflicts = self.directives().conflicts if state.files else []
        except BotbinError as exc:  # an encrypted store without its passphrase still reports the rest
            warnings.append(str(exc))
        return Status(
            str(self.root), str(self.output_dir), str(self.state_path), model, len(state.files),
            sum(e.chunks for e in state.files.values()), state.last_sync, found.tracked, found.stale,
            (*self.warnings, *warnings), tuple(conflicts), encryption,
        )

    # -- agent memory (memory/) -----------------------------------------------------------------
    def recall(self, query: str, k: int | None = None, filters: SearchFilters | None = None) -> SearchResult:
        """Search re-ranked by similarity, recency and scope for agents (memory/recency.py); scores in [0, 1]."""
        from botbin.memory.agent import recall

        hits, degraded = recall(self, query, k or self.settings.top_k, filters)
        self.lifecycle.reinforce(hits)
        return SearchResult(hits, degraded, (), self._indexed_at)

    def context(self, query: str, budget_tokens: int) -> ContextResult:
        """The context block for ``query`` within ``budget_tokens`` (memory/context.py for the tier laws).

        Raises ContextBudgetError if the hard rules alone exceed the budget.
        """
        from botbin.memory.agent import gather
        from botbin.memory.context import assemble

        check_root(self.root)
        result = assemble(gather(self, query), budget_tokens, self.counter.count)
        self.lifecycle.reinforce_ranges((i.path, i.start_line, i.end_line) for t in result.tiers for i in t.items)
        return result

    def remember(self, text: str, tags: list[str] | None = None) -> tuple[Remembered, SyncReport]:
        """Append ``text`` to today's daily note and sync it at once. Raises BotbinError for bad input."""
        from botbin.memory.agent import remember

        check_root(self.root)
        written = remember(self.root, text, list(tags or []), follow_symlinks=self.settings.follow_symlinks)
        return written, self.sync()

    def directives(self, path: str | None = None) -> DirectiveReport:
        """Indexed directives (all, or those of a note or folder ``path``, relative to the workspace) and
        the conflicts involving them; an .md file that is not indexed is read and partitioned on the spot.

        Raises WorkspaceError if the workspace folder is missing; BotbinError for an unreadable ``path``.
        """
        from botbin.directives.conflicts import find_conflicts

        check_root(self.root)
        index, warnings = self.index()
        every = index.directives()
        chosen = every
        if path is not None:
            rel = relative_path(self.root, path)
            chosen = [d for d in every if d.path == rel or d.path.startswith(rel.rstrip("/") + "/") or rel == "."]
            if not chosen and rel.lower().endswith(".md"):
                chosen = directives_on_disk(self.root, rel)
                every = [*every, *chosen]
        keep = {id(d) for d in chosen}
        conflicts = [
            c for c in find_conflicts(every) if id(c.first.directive) in keep or id(c.second.directive) in keep
        ]
        return DirectiveReport(chosen, conflicts, tuple(warnings))


_QUERY_CACHE: OrderedDict[tuple[str, str], npt.NDArray[np.float32]] = OrderedDict()
_QUERY_CACHE_SIZE = 256
