"""What each view and action of the studio answers: request -> service -> convert, nothing else. Blocking: the
app runs these in worker threads. Looking changes nothing: the search and the context preview count no retrieval,
and only the actions (sync, prune, restore, consolidate) write, each through the service as the CLI does."""

from __future__ import annotations

import time

from botbin.service import MemoryService
from botbin.studio.links import Link
from botbin.wire import convert, studio_convert
from botbin.wire.agent import ContextParams, ContextResult
from botbin.wire.errors import BadRequest
from botbin.wire.requests import SearchRequest
from botbin.wire.studio import (
    ConsolidateParams,
    ConsolidateResult,
    PruneResult,
    RestoreParams,
    RestoreResult,
    StudioHealth,
    StudioLifecycle,
    StudioRules,
    StudioSearchResult,
    StudioSyncResult,
)

#: The most memos each list of the lifecycle view holds (the most faded first).
LIFECYCLE_LIMIT = 100


def search(service: MemoryService, request: SearchRequest, link: Link) -> StudioSearchResult:
    """The hits of ``request`` with their score parts; those under the relevance floor are counted, not shown
    (unless ``showAll``). Counts no retrieval."""
    started = time.perf_counter()
    result = service.search(request, reinforce=False)
    hits = [studio_convert.hit(h, service.explain(h, result.degraded), link) for h in result.hits]
    return StudioSearchResult(
        hits=hits,
        hidden=result.hidden,
        degraded=result.degraded,
        stale=result.stale,
        indexing=result.indexing,
        indexed_at=result.indexed_at,
        warnings=list(result.warnings),
        elapsed_ms=round((time.perf_counter() - started) * 1000.0, 2),
    )


def context(service: MemoryService, params: ContextParams) -> ContextResult:
    """What ``get_context`` gives an agent for ``params``, tier by tier, with what was left out and why."""
    if params.uri is not None:
        raise BadRequest("uri is not used here: the folder is the one in the request's path")
    return convert.context(service.context(params, reinforce=False))


def rules(service: MemoryService, link: Link) -> StudioRules:
    """Every indexed rule and their conflicts."""
    return studio_convert.rules(service.directives(), link)


def lifecycle(service: MemoryService, link: Link) -> StudioLifecycle:
    """The memos now (memory/overview.py); nothing is written."""
    return studio_convert.lifecycle(service.memory_overview(LIFECYCLE_LIMIT), link)


def health(service: MemoryService) -> StudioHealth:
    """Last sync, stale and failed notes, index size, model, team database."""
    report = service.status()
    _, load_warnings = service.index()
    return studio_convert.health(report, service.last_sync, load_warnings, service.ws.indexing)


def sync(service: MemoryService) -> StudioSyncResult:
    """Sync the changed notes now (and publish them, backend postgres)."""
    report = service.sync()
    return StudioSyncResult(report=studio_convert.sync_report(report), publish_error=report.publish_error)


def prune(service: MemoryService) -> PruneResult:
    """Archive the memos under the prune threshold (``botbin prune``)."""
    return studio_convert.pruned(service.prune())


def restore(service: MemoryService, params: RestoreParams) -> RestoreResult:
    """Bring archived memos back into search (``botbin restore``)."""
    if not params.ids and not params.all:
        raise BadRequest("name memo ids, or all")
    return studio_convert.restored(service.restore(params.ids, None, params.all))


def consolidate(service: MemoryService, params: ConsolidateParams, link: Link) -> ConsolidateResult:
    """Distil roots into the roots note (``botbin consolidate``), or with ``dryRun`` only say which."""
    report = service.consolidate(dry_run=params.dry_run)
    return studio_convert.consolidated(report.roots, report.skipped, report.dry_run, report.roots_note, link)
