"""Domain results to wire payloads, at the edge: the one place the adapters (CLI ``--json``, LSP, MCP) turn botbin's
dataclasses into JSON shapes. A result that names its own JSON (``Hit.to_dict``, ``ContextResult.to_dict``) is
serialized by that one method and typed here by validating it into its wire model; the rest is built here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botbin.wire import agent, search, status

if TYPE_CHECKING:
    from botbin.agent.context import ContextResult
    from botbin.agent.remember import Remembered
    from botbin.directives.conflicts import Conflict, RuleRef
    from botbin.index.hits import Hit
    from botbin.memory.conversation.observer import DistilledBlock, ObserveResult
    from botbin.search.pipeline import SearchResult
    from botbin.sync.report import SyncReport
    from botbin.workspace.status import Status


def lines_range(start_line: int, end_line: int) -> search.Range:
    """Whole lines ``start_line`` .. ``end_line`` (0-based, end exclusive) as an LSP range."""
    end = max(start_line, end_line)
    return search.Range(start=search.Position(line=start_line, character=0), end=search.Position(line=end, character=0))


def lsp_hit(hit: Hit, uri: str) -> search.Hit:
    """A hit of ``botbin/search`` and ``botbin/related``."""
    return search.Hit.model_validate({**hit.to_dict(), "uri": uri, "range": lines_range(hit.start_line, hit.end_line)})


def memory_hit(hit: Hit) -> search.MemoryHit:
    """A hit of MCP ``search_memory``."""
    return search.MemoryHit.model_validate({**hit.to_dict(), "text": hit.text})


def cli_search(result: SearchResult) -> search.SearchHits:
    """``botbin search --json``: the hits shown, the weak ones left out, how they were found."""
    return search.SearchHits(
        hits=[search.HitFields.model_validate(h.to_dict()) for h in result.hits],
        hidden=result.hidden,
        degraded=result.degraded,
        stale=result.stale,
        indexed_at=result.indexed_at,
    )


def _rule(ref: RuleRef) -> status.RuleRef:
    return status.RuleRef(
        path=ref.directive.path,
        line=ref.cue.line,
        kind=ref.directive.kind,
        modality=ref.cue.modality,
        cue=ref.cue.cue,
        text=ref.cue.phrase,
    )


def conflict(found: Conflict) -> status.Conflict:
    """A rule conflict."""
    return status.Conflict(
        action=found.action, message=found.describe(), first=_rule(found.first), second=_rule(found.second)
    )


def workspace_status(report: Status) -> status.WorkspaceStatus:
    """``botbin status`` of one workspace (MCP ``memory_status``)."""
    return status.WorkspaceStatus.model_validate(status_fields(report), by_name=True)


def status_fields(report: Status) -> dict[str, object]:
    """The fields of a workspace's status, to build a WorkspaceStatus or a FolderStatus."""
    return {
        "workspace": report.workspace,
        "output_dir": report.output_dir,
        "state_file": report.state_file,
        "model": report.model,
        "files": report.files,
        "chunks": report.chunks,
        "last_sync": report.last_sync,
        "tracked": report.tracked,
        "stale": [status.StaleNote(path=s.path, reason=s.reason) for s in report.stale],
        "warnings": list(report.warnings),
        "conflicts": [conflict(c) for c in report.conflicts],
        "encryption": report.encryption,
        "migration": status.MigrationStatus.model_validate(report.migration.to_dict()) if report.migration else None,
    }


def sync_fields(report: SyncReport | None) -> dict[str, object]:
    """The fields of a sync report (empty lists for None: a folder that has not synced yet)."""
    if report is None:
        return {}
    return {
        "added": list(report.added),
        "modified": list(report.modified),
        "deleted": list(report.deleted),
        "excluded": list(report.excluded),
        "kept_excluded": list(report.kept_excluded),
        "rechunked": list(report.rechunked),
        "renamed": [status.Renamed.model_validate({"from": a, "to": b}) for a, b in report.renamed],
        "unchanged": report.unchanged,
        "failed": [status.FailedNote(path=f.path, reason=f.reason) for f in report.failed],
        "warnings": list(report.warnings),
        "chunks_embedded": report.chunks_embedded,
        "chunks_reused": report.chunks_reused,
        "elapsed_ms": round(report.elapsed_ms, 1),
    }


def context(result: ContextResult) -> agent.ContextResult:
    """An assembled context (``botbin context --json``, ``botbin/context``, MCP ``get_context``)."""
    return agent.ContextResult.model_validate(result.to_dict())


def remembered(written: Remembered, uri: str) -> agent.RememberResult:
    """``botbin/remember`` result."""
    return agent.RememberResult(
        path=written.path, text=written.text, uri=uri, range=lines_range(written.start_line, written.end_line)
    )


def remembered_tool(written: Remembered, indexed: bool, reason: str | None = None) -> agent.RememberToolResult:
    """MCP ``remember`` result; ``reason``: why it is not indexed (None when ``indexed``)."""
    return agent.RememberToolResult(
        path=written.path,
        text=written.text,
        start_line=written.start_line,
        end_line=written.end_line,
        indexed=indexed,
        reason=None if indexed else reason,
    )


def _distilled(block: DistilledBlock) -> agent.DistilledBlock:
    return agent.DistilledBlock(
        user=block.user,
        soul_file=block.soul_file,
        first_turn=block.block.first_turn,
        last_turn=block.block.last_turn,
        status=block.status,
        cosine=round(block.cosine, 4),
        text=block.block.text,
    )


def observed(result: ObserveResult) -> agent.ObserveTurnResult:
    """MCP ``observe_turn`` result."""
    return agent.ObserveTurnResult(
        turn=result.turn_number,
        buffered=result.buffered,
        admitted=result.admitted,
        protected=result.protected,
        score=round(result.gate.score, 4),
        soul_file=result.soul_file,
        distilled=[_distilled(d) for d in result.distilled],
    )
