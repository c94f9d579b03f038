"""Domain results to wire payloads, at the edge: the one place the LSP and MCP adapters turn botbin's
dataclasses into JSON shapes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botbin.service import TIER_NUMBERS
from botbin.wire import agent, search, status

if TYPE_CHECKING:
    from botbin.agent.context import ContextResult, Item
    from botbin.agent.remember import Remembered
    from botbin.directives.conflicts import Conflict, RuleRef
    from botbin.index.hits import Hit
    from botbin.memory.conversation.observer import DistilledBlock, ObserveResult
    from botbin.sync.report import SyncReport
    from botbin.workspace.status import Status


def lines_range(start_line: int, end_line: int) -> search.Range:
    """Whole lines ``start_line`` .. ``end_line`` (0-based, end exclusive) as an LSP range."""
    end = max(start_line, end_line)
    return search.Range(start=search.Position(line=start_line, character=0), end=search.Position(line=end, character=0))


def _hit_fields(hit: Hit) -> dict[str, object]:
    return {
        "path": hit.path,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "heading_path": list(hit.heading_path),
        "kind": hit.kind,
        "title": hit.title,
        "snippet": hit.snippet,
        "snippet_start_line": hit.snippet_start_line,
        "snippet_end_line": hit.snippet_end_line,
        "score": round(hit.score, 6),
        "cosine": round(hit.cosine, 6),
        "bm25": round(hit.bm25, 6),
        "bm25_share": round(hit.bm25_share, 6),
        "components": {name: round(value, 6) for name, value in hit.components},
        "namespace": hit.namespace,
    }


def lsp_hit(hit: Hit, uri: str) -> search.Hit:
    """A hit of ``botbin/search`` and ``botbin/related``."""
    return search.Hit.model_validate(
        {**_hit_fields(hit), "uri": uri, "range": lines_range(hit.start_line, hit.end_line)}, by_name=True
    )


def memory_hit(hit: Hit) -> search.MemoryHit:
    """A hit of MCP ``search_memory``."""
    return search.MemoryHit.model_validate({**_hit_fields(hit), "text": hit.text}, by_name=True)


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


def _item(item: Item) -> agent.ContextItem:
    return agent.ContextItem(path=item.path, start_line=item.start_line, end_line=item.end_line, text=item.text)


def context(result: ContextResult) -> agent.ContextResult:
    """An assembled context (``botbin/context``, MCP ``get_context``)."""
    tiers = [
        agent.ContextTier(
            name=t.name,
            tier=TIER_NUMBERS[t.name],
            tokens=t.tokens,
            items=[_item(i) for i in t.items],
            cut=[_item(i) for i in t.cut],
        )
        for t in result.tiers
    ]
    return agent.ContextResult(
        text=result.text,
        used_tokens=result.used_tokens,
        budget_tokens=result.budget_tokens,
        indexing=result.indexing,
        partial_tiers=list(result.partial),
        tiers=tiers,
    )


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
