"""Domain results to Recall Studio's payloads (botbin/wire/studio.py), at the edge. ``link`` turns a note's path and
0-based line into an editor URL (botbin/studio/links.py), or None."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from botbin.wire import convert, studio
from botbin.wire.status import FailedNote, SyncReport, WorkspaceStatus

if TYPE_CHECKING:
    from botbin.agent.rules import DirectiveReport
    from botbin.directives.partition import Directive
    from botbin.index.hits import Hit
    from botbin.memory.archive import PruneReport, RestoreReport
    from botbin.memory.consolidate import Root
    from botbin.memory.memos import Memo
    from botbin.memory.notes import RootLine
    from botbin.memory.overview import MemoCurve, Overview
    from botbin.search.explain import ScorePart
    from botbin.sync.report import SyncReport as DomainSyncReport
    from botbin.workspace.status import Status

Link = Callable[[str, int], str | None]


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat(timespec="seconds")


def hit(found: Hit, parts: Iterable[ScorePart], link: Link) -> studio.StudioHit:
    """A search hit with its score taken apart."""
    fields = {
        **found.to_dict(),
        "noteCosine": round(found.note_cosine, 6),
        "neighbourCosine": round(found.neighbour_cosine, 6),
        "parts": [studio.ScorePart(name=p.name, value=round(p.value, 6), points=round(p.points, 6)) for p in parts],
        "editorUrl": link(found.path, found.start_line),
    }
    return studio.StudioHit.model_validate(fields)


def _rule(d: Directive, link: Link) -> studio.StudioRule:
    cues = [
        studio.StudioRuleCue(modality=c.modality, cue=c.cue, line=c.line, positive=c.positive, action=c.action)
        for c in d.cues
    ]
    return studio.StudioRule(
        path=d.path,
        start_line=d.start_line,
        end_line=d.end_line,
        kind=d.kind,
        heading_path=list(d.heading_path),
        text=d.text,
        cues=cues,
        editor_url=link(d.path, d.start_line),
    )


def rules(report: DirectiveReport, link: Link) -> studio.StudioRules:
    """Every rule, hard first, and their conflicts with links to both sides."""
    ordered = sorted(report.directives, key=lambda d: (d.kind != "hard", d.path, d.start_line))
    conflicts = []
    for c in report.conflicts:
        shared = convert.conflict(c).model_dump(by_alias=False)
        first, second = c.first, c.second
        conflicts.append(
            studio.StudioConflict.model_validate(
                {
                    **shared,
                    "first_url": link(first.directive.path, first.cue.line),
                    "second_url": link(second.directive.path, second.cue.line),
                },
                by_name=True,
            )
        )
    return studio.StudioRules(
        rules=[_rule(d, link) for d in ordered], conflicts=conflicts, warnings=list(report.warnings)
    )


def _memo(m: MemoCurve, link: Link) -> studio.StudioMemo:
    memo = m.memo
    return studio.StudioMemo(
        id=memo.id,
        path=memo.path,
        start_line=memo.start_line,
        end_line=memo.end_line,
        kind="hard" if m.kind == "hard" else "soft" if m.kind == "soft" else "lore",
        text=m.text,
        created=memo.created.isoformat(timespec="seconds"),
        last_retrieved=_iso(memo.last_retrieved),
        reinforcement_count=memo.reinforcement_count,
        decay_score=round(memo.decay_score, 6),
        half_life_days=round(m.half_life_days, 4),
        fades_in_days=round(m.fades_in_days, 4) if math.isfinite(m.fades_in_days) else None,
        curve=[studio.CurvePoint(day=round(d, 4), score=round(s, 6)) for d, s in m.curve],
        editor_url=link(memo.path, memo.start_line),
    )


def archived(memo: Memo) -> studio.StudioArchived:
    """An archived memo (or one a prune archives)."""
    return studio.StudioArchived(
        id=memo.id,
        path=memo.path,
        start_line=memo.start_line,
        end_line=memo.end_line,
        archived_at=_iso(memo.archived_at),
        reinforcement_count=memo.reinforcement_count,
        decay_score=round(memo.decay_score, 6),
        text=memo.archived_text,
    )


def _source(path: str, start: int, end: int, link: Link) -> studio.StudioRootSource:
    return studio.StudioRootSource(path=path, start_line=start, end_line=end, editor_url=link(path, start))


def _root_line(root: RootLine, link: Link) -> studio.StudioRoot:
    sources = [_source(p, s, e, link) for p, s, e in root.sources]
    return studio.StudioRoot(text=root.text, reason=root.reason, line=root.line, sources=sources)


def lifecycle(view: Overview, link: Link) -> studio.StudioLifecycle:
    """The memos now: the most faded, what a prune would archive, the archived, the roots."""
    return studio.StudioLifecycle(
        live=view.live,
        threshold=view.threshold,
        half_life_days=view.policy.half_life_days,
        stretch=view.policy.stretch,
        faded=[_memo(m, link) for m in view.faded],
        prunable=[_memo(m, link) for m in view.prunable],
        prunable_count=view.prunable_count,
        archived=[archived(m) for m in view.archived],
        roots_note=view.roots_note,
        roots_url=link(view.roots_note, 0),
        roots=[_root_line(r, link) for r in view.roots],
        warnings=list(view.warnings),
    )


def sync_report(report: DomainSyncReport) -> SyncReport:
    """A sync's report."""
    return SyncReport.model_validate(convert.sync_fields(report), by_name=True)


def health(
    report: Status, last: DomainSyncReport | None, load_warnings: Iterable[str], indexing: bool
) -> studio.StudioHealth:
    """The Health view: ``botbin status``, the last sync's failures, the index's load warnings, the team database."""
    team = report.team
    return studio.StudioHealth(
        status=WorkspaceStatus.model_validate(convert.status_fields(report), by_name=True),
        failed=[FailedNote(path=f.path, reason=f.reason) for f in (last.failed if last else ())],
        last_run=None if last is None else sync_report(last),
        load_warnings=list(load_warnings),
        indexing=indexing,
        team=None
        if team is None
        else studio.TeamState(
            url=team.url,
            namespace=team.namespace,
            publishes=team.publishes,
            unpublished=team.unpublished,
            error=team.error,
        ),
    )


def pruned(report: PruneReport) -> studio.PruneResult:
    """What a prune archived."""
    return studio.PruneResult(
        archived=[archived(m) for m in report.archived],
        live=report.live,
        threshold=report.threshold,
        archive_note=report.archive_note,
    )


def restored(report: RestoreReport) -> studio.RestoreResult:
    """What a restore brought back."""
    return studio.RestoreResult(restored=[archived(m) for m in report.restored], unknown=list(report.unknown))


def consolidated(
    roots: Iterable[Root], skipped: int, dry_run: bool, roots_note: str, link: Link
) -> studio.ConsolidateResult:
    """What a consolidation wrote (or would write)."""
    shown = [
        studio.StudioRoot(
            text=r.text,
            reason=r.reason,
            line=-1,
            sources=[_source(c.path, c.start_line, c.end_line, link) for c in r.sources],
        )
        for r in roots
    ]
    return studio.ConsolidateResult(roots=shown, skipped=skipped, dry_run=dry_run, roots_note=roots_note)
