"""The composition root: ``MemoryService`` builds one workspace's objects (Workspace, Lifecycle, Searcher,
HostMemory) and is all that the CLI, the language server and the MCP server call, with the typed requests of
``botbin.wire.requests``. No logic: each call names the module that does the work (docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botbin.agent.capture import following_host_keys
from botbin.agent.gather import build_context
from botbin.agent.hosts import HostMemory
from botbin.agent.remember import Remembered, remember_in
from botbin.agent.rules import DirectiveReport, directive_report
from botbin.memory.archive import PruneReport, RestoreReport, prune, restore
from botbin.memory.conversation.observer import TurnObserver
from botbin.memory.lifecycle import Lifecycle
from botbin.memory.roots import ConsolidateReport, consolidate
from botbin.search.pipeline import Searcher, SearchResult
from botbin.wire.requests import EVERY_CHANGE, SyncRequest
from botbin.workspace import open_workspace
from botbin.workspace.status import Status, status

if TYPE_CHECKING:
    from botbin.agent.context import ContextResult
    from botbin.embedding import Embedder
    from botbin.index.hits import Hit
    from botbin.index.store import MemoryIndex
    from botbin.memory.overview import Overview
    from botbin.search.explain import ScorePart
    from botbin.sync.encryption import PassphraseFn
    from botbin.sync.engine import ProgressFn
    from botbin.sync.report import SyncReport
    from botbin.wire.requests import ContextRequest, RelatedRequest, SearchRequest


class MemoryService:
    """Memory of one workspace folder; safe to call from several threads (workspace/handle.py holds the locks)."""

    def __init__(
        self,
        workspace: Path,
        overrides: Mapping[str, Any] | None = None,
        embedder: Embedder | None = None,
        env: Mapping[str, str] | None = None,
        overrides_source: str = "command line",
        passphrase: PassphraseFn | None = None,
        one_shot: bool = False,
    ) -> None:
        """``overrides``: settings from flags or LSP options (named ``overrides_source`` in warnings); ``embedder``
        replaces the model (tests, benchmarks); ``passphrase``: asked only for an encrypted store (default:
        BOTBIN_PASSPHRASE of ``env``), never written; ``one_shot``: a process that answers once and exits."""
        self.ws = open_workspace(workspace, overrides, embedder, env, overrides_source, passphrase, one_shot)
        self.lifecycle = Lifecycle(self.ws)
        self.searcher = Searcher(self.ws, self.lifecycle)
        self.hosts = HostMemory(self.searcher)
        """The host ops (the Claude Code hooks, the OpenClaw context engine)."""
        self.team = self.ws.team
        """The team database (backend "postgres": ``botbin db``, namespaces; workspace/remote.py)."""
        self.root, self.settings, self.warnings = self.ws.root, self.ws.settings, self.ws.warnings
        self.output_dir = self.ws.output_dir
        self.last_sync: SyncReport | None = None
        """What the last sync of this service did (its failed notes and why, its publish), None before one."""

    def sync(
        self, request: SyncRequest = EVERY_CHANGE, progress: ProgressFn | None = None, keep_documents: bool = False
    ) -> SyncReport:
        """Sync, patch the index, publish (workspace/syncing.py); the memo sidecar and the host files follow an
        encryption change (memory/lifecycle.py, agent/capture.py ``following_host_keys``)."""
        with self.lifecycle.following_keys(request.encryption), following_host_keys(self.ws):
            self.last_sync = self.ws.sync(request, progress, keep_documents)
        return self.last_sync

    def publish(self) -> SyncReport:
        """``botbin db publish``: publish the synced notes, without a sync (workspace/syncing.py)."""
        return self.ws.syncer.publish()

    def settings_match(self, overrides: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...] | None:
        return self.ws.settings_match(overrides, env)

    def index(self) -> tuple[MemoryIndex, list[str]]:
        return self.ws.index.get()

    def forget_index(self) -> None:
        self.ws.index.forget()

    def tracks(self, rel: str) -> bool:
        return self.ws.tracks(rel)

    def warm_up(self) -> None:
        """Load the model now. Raises ModelError."""
        self.ws.models.embed_query("warm up")

    def warm_in_background(self, model: bool = True) -> list[threading.Thread]:
        """The index and (``model``) the model loaded on daemon threads now (workspace/handle.py)."""
        return self.ws.index.warm_in_background(self.searcher.warm, self.warm_up if model else None)

    def wait_warm(self, timeout_s: float) -> None:
        self.ws.index.wait_warm(timeout_s)

    def watch(self, report: Callable[[SyncReport], None], stop_after: int | None = None) -> int:
        """``botbin watch``: sync now and after every burst of note changes (sync/watch.py)."""
        from botbin.sync.watch import watch_workspace

        return watch_workspace(self.root, self.settings, self.sync, report, stop_after)

    def note_changes(self) -> AsyncIterator[list[str]]:
        from botbin.sync.watch import watch_notes

        return watch_notes(self.root, self.settings)

    def status(self) -> Status:
        return status(self.ws, lambda: self.directives().conflicts)

    def search(self, request: SearchRequest, query_vector: Any = None, reinforce: bool = True) -> SearchResult:
        return self.searcher.search(request, query_vector, reinforce)

    def related(self, request: RelatedRequest) -> SearchResult:
        return self.searcher.related(request)

    def recall(self, request: SearchRequest) -> SearchResult:
        """Agent recall: re-ranked by similarity, recency and scope; scores in [0, 1]."""
        return self.searcher.recall(request)

    def explain(self, hit: Hit, degraded: bool = False) -> tuple[ScorePart, ...]:
        """What each ranking term added to ``hit``'s score, under this workspace's weights (search/explain.py)."""
        from botbin.search.explain import Weights, score_parts

        s = self.ws.settings
        return score_parts(hit, Weights(s.alpha, s.note_weight, s.neighbour_weight, s.decay_weight), degraded)

    def memory_overview(self, limit: int, now: datetime | None = None) -> Overview:
        """The memos now, nothing written: the ``limit`` most faded with their retention curves, what the next prune
        would archive, the archived ones, the roots and their sources (memory/overview.py)."""
        from botbin.memory.overview import overview

        return overview(self.lifecycle, limit, now or datetime.now().astimezone())

    def context(self, request: ContextRequest, reinforce: bool = True) -> ContextResult:
        """The context block within a token budget (agent/gather.py); ``reinforce``: count what it holds as retrieved
        (False: a preview). Raises ContextBudgetError."""
        return build_context(self.searcher, request, reinforce)

    def remember(self, text: str, tags: list[str] | None = None) -> tuple[Remembered, SyncReport]:
        return remember_in(self.ws, text, tags)

    def directives(self, path: str | None = None) -> DirectiveReport:
        return directive_report(self.ws, path)

    def observer(self, write: bool = True, sync_each_block: bool = False) -> TurnObserver:
        return TurnObserver(self.ws, write, sync_each_block)

    def prune(self, dry_run: bool = False, now: datetime | None = None) -> PruneReport:
        return prune(self.lifecycle, dry_run, now)

    def restore(
        self,
        ids: Iterable[str] = (),
        path_glob: str | None = None,
        everything: bool = False,
        now: datetime | None = None,
    ) -> RestoreReport:
        return restore(self.lifecycle, ids, path_glob, everything, now)

    def consolidate(self, dry_run: bool = False, now: datetime | None = None) -> ConsolidateReport:
        return consolidate(self.ws, self.lifecycle.candidates(now), dry_run)
