"""Domain results of the host ops (agent/hosts.py) to their wire payloads (wire/hosts.py), at the edge."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from botbin.wire import hosts

if TYPE_CHECKING:
    from botbin.agent.capture import IngestReport
    from botbin.agent.expand import Expanded
    from botbin.agent.hosts import HostBlock, HostItem
    from botbin.memory.conversation.compact import Compaction


def item(found: HostItem) -> hosts.HostItem:
    """One item put before the model."""
    i = found.item
    return hosts.HostItem(
        id=found.id,
        tier=cast(hosts.TierName, found.tier),
        path=i.path,
        start_line=i.start_line,
        end_line=i.end_line,
        text=i.text,
        score=round(i.score, 4),
    )


def session_context(block: HostBlock) -> hosts.SessionContextResult:
    """``session_context`` result."""
    return hosts.SessionContextResult(
        text=block.text,
        used_tokens=block.used_tokens,
        budget_tokens=block.budget_tokens,
        rules=block.rules,
        items=[item(i) for i in block.items],
        indexing=block.indexing,
    )


def recalled(block: HostBlock) -> hosts.RecallResult:
    """``recall`` result."""
    return hosts.RecallResult(
        text=block.text,
        used_tokens=block.used_tokens,
        budget_tokens=block.budget_tokens,
        items=[item(i) for i in block.items],
        repeated=block.repeated,
        degraded=block.degraded,
    )


def assembled(block: HostBlock) -> hosts.AssembleResult:
    """``assemble`` result."""
    return hosts.AssembleResult(
        system_prompt_addition=block.text,
        used_tokens=block.used_tokens,
        budget_tokens=block.budget_tokens,
        items=[item(i) for i in block.items],
        indexing=block.indexing,
    )


def ingested(report: IngestReport) -> hosts.IngestResult:
    """``ingest`` result."""
    return hosts.IngestResult(
        accepted=report.accepted,
        duplicates=report.duplicates,
        skipped=report.skipped,
        admitted=report.admitted,
        rules=report.rules,
        pending=list(report.pending),
        written=list(report.written),
        not_indexed=report.not_indexed,
    )


def expanded(found: Expanded) -> hosts.ExpandResult:
    """``expand`` result."""
    return hosts.ExpandResult(
        id=found.id,
        path=found.path,
        start_line=found.start_line,
        end_line=found.end_line,
        heading_path=list(found.heading_path),
        text=found.text,
        turns=[hosts.SourceTurn(id=t.id, role=t.role, content=t.content, timestamp=t.timestamp) for t in found.turns],
    )


def compacted(done: Compaction) -> hosts.CompactResult:
    """``compact`` result."""
    return hosts.CompactResult(
        summary=done.summary,
        tokens_before=done.tokens_before,
        tokens_after=done.tokens_after,
        confidence=max(0.0, done.confidence),
        covered=done.messages,
        coverage=done.coverage,
        rules_kept=done.rules_kept,
        messages=done.messages,
    )
