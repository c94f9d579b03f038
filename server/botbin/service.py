"""The composition root: ``MemoryService`` builds one workspace's object graph and is all that the CLI, the
language server and the MCP server call. It holds no logic of its own; each method names the module that
does the work (docs/architecture.md).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botbin.agent.context import TIER_NUMBERS
from botbin.config import Settings
from botbin.errors import BotbinError, LockedError
from botbin.index.blas import single_threaded_blas
from botbin.index.hits import SearchFilters
from botbin.memory.lifecycle import Lifecycle
from botbin.notes_io import extract_source, read_document
from botbin.search.params import ISO_DAY_PATTERN, MAX_K, check_alpha, check_filters, check_k
from botbin.search.pipeline import Searcher, SearchResult, merge
from botbin.search.pipeline import relevant as relevant  # re-exported for the surfaces
from botbin.sync.report import NoteFailure, SyncReport
from botbin.sync.scan import check_root
from botbin.workspace import Workspace, open_workspace
from botbin.workspace.status import Status, status

if TYPE_CHECKING:
    from botbin.agent.context import ContextResult
    from botbin.agent.hosts import HostMemory
    from botbin.agent.remember import Remembered
    from botbin.agent.rules import DirectiveReport
    from botbin.directives.paragraph import Paragraph
    from botbin.embedding import Embedder
    from botbin.index.store import MemoryIndex
    from botbin.memory.conversation.observer import TurnObserver
    from botbin.sync.encryption import PassphraseFn
    from botbin.sync.engine import ProgressFn
    from botbin.workspace.migration import MigrationReport
    from botbin.workspace.remote import PublishReport

log = logging.getLogger(__name__)

# fmt: off
__all__ = ["ISO_DAY_PATTERN", "MAX_K", "TIER_NUMBERS", "MemoryService", "SearchFilters", "SearchResult", "check_alpha",
           "check_filters",
           "check_k", "extract_source", "merge", "paragraph_at", "read_document", "single_threaded_blas"]
# fmt: on


class MemoryService:
    """Memory of one workspace folder: sync, search, agent context, the memo lifecycle, conversations.

    Safe to call from several threads: index reads and patches hold the index handle's lock, and a long sync
    holds it only to patch each written note.
    """

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
        store (default: BOTBIN_PASSPHRASE from ``env``); it is never written anywhere."""
        self.ws: Workspace = open_workspace(workspace, overrides, embedder, env, overrides_source, passphrase)
        self.lifecycle = Lifecycle(self.ws)
        """The memos: reinforcement, decay, prune, restore, consolidate (memory/lifecycle.py)."""
        self.searcher = Searcher(self.ws, self.lifecycle)
        self.published: PublishReport | None = None
        """What the last sync published to the team database (backend "postgres")."""
        self.publish_error: str | None = None
        """Why the last sync's publish failed, None when it did not."""
        self._warming: threading.Event | None = None
        """Set when the index warm-up (``warm_in_background``) has ended; None when none was started."""
        self._hosts: HostMemory | None = None
        self._hosts_lock = threading.Lock()

    @property
    def root(self) -> Path:
        return self.ws.root

    @property
    def settings(self) -> Settings:
        return self.ws.settings

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.ws.warnings

    @property
    def output_dir(self) -> Path:
        return self.ws.output_dir

    @property
    def state_path(self) -> Path:
        return self.ws.state_path

    @property
    def indexing(self) -> bool:
        """True while this process syncs the workspace, or before its first sync: the index may lack notes."""
        from botbin.agent.gather import indexing

        return indexing(self.ws)

    def indexed_chunks(self) -> int:
        """Chunks in the index now (loads it on first use)."""
        index, _ = self.ws.index.get()
        return len(index)

    # -- sync and index (workspace/) ------------------------------------------------------------------
    def sync(
        self,
        progress: ProgressFn | None = None,
        full: bool = False,
        keep_documents: bool = False,
        encryption: str | None = None,
        prune: bool = False,
        only: frozenset[str] | None = None,
    ) -> SyncReport:
        """Sync the notes, patching the loaded index note by note (workspace/syncing.py). ``prune``: drop the
        notes no longer tracked even when they are most of the index (else the sync keeps them and says so).
        ``only``: sync just these notes (relative POSIX paths) without a folder scan (a saved note). The memo
        sidecar follows an encryption or decryption (memory/lifecycle.py ``following_keys``), and so do the host files
        (agent/capture.py ``following_host_keys``)."""
        from botbin.agent.capture import following_host_keys

        with self.lifecycle.following_keys(encryption), following_host_keys(self.ws):
            report = self.ws.sync(progress, full, keep_documents, encryption, prune, only)
        self.publish_after_sync()
        return report

    def migrate(self, progress: ProgressFn | None = None) -> MigrationReport | None:
        """Move the index to the model the settings name, now (``botbin sync``; a server does it in the background
        after its syncs): None when none is due; the team database is published to after the switch
        (workspace/migration.py). Raises ModelError for a setting that names no model (the index answers on),
        LockedError when another process migrates."""
        report = self.ws.migration.run(progress)
        if report is not None and report.switched:
            self.publish_after_sync()
        return report

    def publish_after_sync(self) -> None:
        """Backend "postgres": publish the changed notes (``published``), or keep why it failed
        (``publish_error``); the local sync stands either way (workspace/remote.py)."""
        self.published, self.publish_error = None, None
        if self.ws.settings.backend != "postgres" or not self.ws.settings.postgres_publish:
            return
        try:
            self.published = self.ws.publish()
        except BotbinError as exc:
            self.publish_error = str(exc)
            log.warning("notes synced locally but not published: %s", exc)

    def spanned_namespaces(self) -> tuple[str, ...]:
        """The namespaces a search reads when they are more than this workspace's own (else ())."""
        from botbin.workspace.remote import namespace_of

        asked = tuple(self.ws.settings.search_namespaces or ())
        return () if asked in ((), (namespace_of(self.ws),)) else asked

    def unreadable_namespaces(self) -> list[str]:
        """Of the namespaces searched, those this role reads no note of (no such namespace, or no grant)."""
        remote = self.ws.remote
        return [] if remote is None else remote.unreadable()

    def db_init(self) -> tuple[str, list[int]]:
        """``botbin db init``: the team database's URL (no password) and the schema versions applied."""
        from botbin.workspace.remote import init_database

        return init_database(self.ws)

    def db_grant(self, role: str, namespace: str, write: bool) -> str:
        """``botbin db grant``: ``role`` may read (and with ``write``, write) ``namespace``; returns the role as
        granted (``public``: every role)."""
        from botbin.workspace.remote import grant_role

        return grant_role(self.ws, role, namespace, write)

    def db_revoke(self, role: str, namespace: str) -> bool:
        """``botbin db revoke``: ``role`` may no longer read or write ``namespace``; True when it could."""
        from botbin.workspace.remote import revoke_role

        return revoke_role(self.ws, role, namespace)

    def index(self) -> tuple[MemoryIndex, list[str]]:
        """The in-memory index and its load warnings (workspace/handle.py)."""
        return self.ws.index.get()

    def forget_index(self) -> None:
        self.ws.index.forget()

    def warm_up(self) -> None:
        """Load the model now (a server does it in the background). Raises ModelError."""
        self.ws.models.embed_query("warm up")

    def warm_in_background(self, model: bool = True) -> list[threading.Thread]:
        """Load the index, and with ``model`` the model, each on its own daemon thread, now: a server calls
        this before its slow imports, so that its first answer finds both ready. Failures are logged (the
        request that needs the part reports them again). Returns the threads (tests join them)."""
        self._warming = threading.Event()
        self.ws.migration.background = True  # a long-lived process: a due model migration runs behind its syncs
        jobs: list[tuple[str, Callable[[], object]]] = [("index", self._warm_index)]
        jobs += [("model", self.warm_up)] if model else []
        if self.searcher.reranker.enabled:
            jobs.append(("cross-encoder", self.searcher.reranker.scorer))
        threads = [
            threading.Thread(target=_logged, args=(what, job), name=f"botbin-warm-{what}", daemon=True)
            for what, job in jobs
        ]
        for thread in threads:
            thread.start()
        return threads

    def _warm_index(self) -> None:
        """Load the index and run one search on it that needs no model (a unit query vector, nothing counted as
        retrieved): what the first search of a process builds (the assembled matrix, the lexical index, the
        lifecycle's view) is built here instead of in the first request."""
        import numpy as np

        try:
            index, _ = self.index()
            if len(index) and index.dim and self.ws.settings.backend != "postgres":  # the team database: not ours
                unit = np.zeros(index.dim, dtype=np.float32)
                unit[0] = 1.0
                self.searcher.search("warm up", k=1, query_vector=unit, reinforce=False)
                log.info("%s: index warmed (the first search's one-time builds done)", self.root)
        finally:
            if self._warming is not None:
                self._warming.set()
            self.ws.migration.start_background()  # once the index answers, a due model migration goes on

    def wait_warm(self, timeout_s: float) -> None:
        """Block until the index warm-up started by ``warm_in_background`` has ended (at most ``timeout_s``
        seconds; at once when none was started): a catch-up scan that competes with it for the CPU delays the
        first answer."""
        if self._warming is not None:
            self._warming.wait(timeout_s)

    def settings_match(self, overrides: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...] | None:
        """For a client of a warm server (cli/warm.py): the settings warnings a process with these flags and
        environment would print, or None when its settings differ from this service's (it would read another
        index, so it must answer itself)."""
        from botbin.config import load_settings

        loaded = load_settings(self.root, overrides, env)
        return tuple(loaded.warnings) if loaded.settings == self.settings else None

    def tracks(self, rel: str) -> bool:
        """True when note ``rel`` is one the scan would track (``Workspace.tracks``)."""
        return self.ws.tracks(rel)

    def watch(self, report: Callable[[SyncReport], None], stop_after: int | None = None) -> int:
        """``botbin watch``: sync now and after every burst of note changes (sync/watch.py)."""
        from botbin.sync.watch import watch_workspace

        self.ws.migration.background = True
        return watch_workspace(self.root, self.ws.settings, self.ws.sync, report, stop_after)

    def note_changes(self) -> AsyncIterator[list[str]]:
        """Bursts of note changes, for a server's own watcher (sync/watch.py)."""
        from botbin.sync.watch import watch_notes

        return watch_notes(self.root, self.ws.settings)

    def status(self) -> Status:
        """Index size, last sync, stale notes, conflicts, encryption (workspace/status.py)."""
        return status(self.ws, lambda: self.directives().conflicts)

    # -- search (search/pipeline.py) ------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int | None = None,
        alpha: float | None = None,
        filters: SearchFilters | None = None,
        best_per_note: bool = False,
        query_vector: Any = None,
        reinforce: bool = True,
        per_note: int | None = None,
    ) -> SearchResult:
        return self.searcher.search(query, k, alpha, filters, best_per_note, query_vector, reinforce, per_note)

    def related(
        self,
        text: str,
        path: str | None = None,
        lines: tuple[int, int] | None = None,
        k: int = 5,
        source_md5: str | None = None,
    ) -> SearchResult:
        return self.searcher.related(text, path, lines, k, source_md5)

    def recall(self, query: str, k: int | None = None, filters: SearchFilters | None = None) -> SearchResult:
        """Search re-ranked by similarity, recency and scope for agents; scores in [0, 1]."""
        return self.searcher.recall(query, k or self.ws.settings.top_k, filters)

    # -- agent memory (agent/) ------------------------------------------------------------------------
    def context(self, query: str, budget_tokens: int) -> ContextResult:
        """The context block for ``query`` within ``budget_tokens`` (agent/gather.py, agent/context.py for the tier
        laws). Raises ContextBudgetError if the hard rules alone exceed the budget."""
        from botbin.agent.gather import build_context

        return build_context(self.searcher, query, budget_tokens)

    def remember(self, text: str, tags: list[str] | None = None) -> tuple[Remembered, SyncReport]:
        """Append ``text`` to today's daily note (agent/remember.py) and sync it at once. Raises BotbinError for
        bad input, PassphraseError before writing anything when the store is encrypted and its passphrase is
        missing or wrong (the entry could not be indexed)."""
        from botbin.agent.remember import remember
        from botbin.sync.encryption import check_writable
        from botbin.sync.note_lock import LOCK_DIR

        check_root(self.root)
        settings = self.ws.settings
        check_writable(self.ws.output_dir, settings, self.ws.passphrase)
        written = remember(
            self.root,
            text,
            list(tags or []),
            follow_symlinks=settings.follow_symlinks,
            max_note_bytes=settings.max_note_bytes,
            lock_dir=self.ws.output_dir / LOCK_DIR,
            lock_timeout_s=settings.lock_timeout_s,
        )
        try:
            return written, self.sync()
        except LockedError as exc:  # the entry is on disk: say why it is not searchable yet, and that a sync will be
            why = f"written, not indexed yet ({exc}); the next sync indexes it"
            return written, SyncReport(failed=(NoteFailure(written.path, why),))

    def directives(self, path: str | None = None) -> DirectiveReport:
        """Directives and their conflicts, of the workspace or of ``path`` (agent/rules.py)."""
        from botbin.agent.rules import directive_report

        return directive_report(self.ws, path)

    def hosts(self) -> HostMemory:
        """The host ops of this workspace (agent/hosts.py: the Claude Code hooks, the OpenClaw context engine),
        made on first use."""
        from botbin.agent.hosts import HostMemory

        with self._hosts_lock:
            if self._hosts is None:
                self._hosts = HostMemory(self.searcher)
            return self._hosts

    def close_hosts(self) -> None:
        """Distil the host turns still buffered (a server stops); nothing when no host op ran."""
        with self._hosts_lock:
            hosts, self._hosts = self._hosts, None
        if hosts is not None:
            hosts.close()

    # -- conversations (memory/conversation/) ---------------------------------------------------------
    def observer(self, write: bool = True, sync_each_block: bool = False) -> TurnObserver:
        """A conversation observer that distils turns into this workspace's soul files."""
        from botbin.memory.conversation.observer import TurnObserver

        return TurnObserver(self.ws, write, sync_each_block)


def paragraph_at(text: str, path: str, line: int, settings: Settings | None = None) -> Paragraph | None:
    """The block of note ``text`` holding 0-based ``line`` and its directive, by the instruction notes of
    ``settings`` (a folder's; default settings without one) (directives/paragraph.py)."""
    from botbin.directives.paragraph import paragraph_at as find

    return find(text, path, line, (settings or Settings()).instruction_globs)


def _logged(what: str, job: Callable[[], object]) -> None:
    """Run ``job``, logging a BotbinError (a locked store, a missing model) instead of raising it."""
    try:
        job()
    except BotbinError as exc:
        log.warning("could not load the %s ahead of the first request: %s", what, exc)


def preload_bundled_model() -> threading.Thread:
    """Open the bundled model's ONNX session on a daemon thread now (embedding.auto.preload_bundled): the
    language server calls this before importing pygls."""
    from botbin.embedding.auto import preload_bundled

    return preload_bundled()
