"""Context candidates per tier for an agent's request: rules from the index, guidance and recalled memories
from the ranking pipeline, and the latest daily note's entries read from disk (agent/context.py assembles)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from botbin.agent.context import Candidates, ContextResult, Item
from botbin.agent.rules import unindexed_rules
from botbin.directives.partition import is_botbin_note
from botbin.directives.rulebook import instruction_order
from botbin.errors import BotbinError
from botbin.index.daily import daily_order
from botbin.wire.requests import ContextRequest, SearchFilters, SearchRequest

if TYPE_CHECKING:
    from botbin.search.pipeline import Searcher

#: Tier 1.5 takes directives of memory notes whose chunk is this similar to the request, at most 8 (a soul
#: file rule about meetings scores 0.28 against "book a meeting with Priya"; unrelated requests stay under 0.1).
GUIDANCE_MIN_COSINE = 0.25
GUIDANCE_MAX = 8


def latest_daily(paths: list[str], now: datetime) -> str | None:
    """The daily note (same rule as recency's) with the newest date not after today."""
    today = now.strftime("%Y-%m-%d")
    dated = [(d, p) for p in paths if (d := daily_order(p)) is not None and d[0] <= today]  # the day's last part
    return max(dated)[1] if dated else None


def recent_entries(root: Path, rel: str, follow_symlinks: bool = False) -> list[Item]:
    """The body blocks of daily note ``rel`` (headings left out), verbatim, in source order; none if it
    is gone or became a link outside the workspace (unless ``follow_symlinks``)."""
    from botbin.directives.partition import parse_source
    from botbin.parsing import decode_note
    from botbin.sync.scan import read_note

    try:
        text = decode_note(read_note(root, rel, follow_symlinks), rel).text
    except (OSError, BotbinError):
        return []
    note = parse_source(text, rel)
    return [Item(rel, b.start_line, b.end_line, b.text) for b in note.blocks if b.kind != "heading"]


def gather(searcher: Searcher, query: str, now: datetime | None = None) -> Candidates:
    """Candidates of each tier for ``query`` from the indexed notes (and the latest daily note on disk)."""
    ws = searcher.ws
    index, _ = ws.index.get()
    globs = ws.settings.instruction_globs  # an output written before botbin's own notes were exempt keeps its flag
    instruction = {p for p in index.instruction_notes() if not is_botbin_note(p, globs)}
    directives = index.directives()
    rules = [d for d in directives if d.path in instruction]
    if ws.indexing:  # the first call of a session must not wait for embeddings to have every rule
        rules += unindexed_rules(ws, index)
    ordered = sorted(rules, key=lambda d: (instruction_order(d.path), d.start_line))
    hard = [Item(d.path, d.start_line, d.end_line, d.text) for d in ordered if d.kind == "hard"]
    soft = [Item(d.path, d.start_line, d.end_line, d.text) for d in ordered if d.kind == "soft"]
    guidance: list[Item] = []
    if query.strip():
        soft_rules = SearchRequest(query=query, k=GUIDANCE_MAX * 2, filters=SearchFilters(kind="soft"), show_all=True)
        hits = searcher.search(soft_rules, reinforce=False).hits
        for hit in hits:
            if hit.instruction or hit.cosine < GUIDANCE_MIN_COSINE:
                continue
            for d in directives:
                if d.path == hit.path and d.start_line < hit.end_line and hit.start_line < d.end_line:
                    item = Item(d.path, d.start_line, d.end_line, d.text, hit.score)
                    if not any(item.overlaps(g) for g in guidance) and len(guidance) < GUIDANCE_MAX:
                        guidance.append(item)
    latest = latest_daily(index.note_paths(), now or datetime.now().astimezone())
    recent = recent_entries(ws.root, latest, ws.settings.follow_symlinks) if latest else []
    recalled: list[Item] = []
    if query.strip():
        result = searcher.recall(SearchRequest(query=query, k=20), now=now, reinforce=False)  # unrelated ones left out
        recalled = [Item(h.path, h.start_line, h.end_line, h.text, h.score) for h in result.hits]
    return Candidates(hard, guidance, soft, recent, recalled)


def build_context(searcher: Searcher, request: ContextRequest, reinforce: bool = True) -> ContextResult:
    """The context block for ``request.query`` within ``budget_tokens`` (agent/context.py for the tier laws) and,
    when given, ``max_chars`` characters (for a host that counts characters: a smaller token budget until it fits,
    so whole items are left out, never cut), marked partial while the notes are being indexed; what it holds is
    counted as retrieved unless ``reinforce`` is False (a preview, which must not change the memos). Raises
    ContextBudgetError if the hard rules alone exceed the budget, WorkspaceError if the folder is gone."""
    from botbin.agent.context import ContextBudgetError, assemble
    from botbin.sync.scan import check_root

    ws = searcher.ws
    budget_tokens, max_chars = request.budget_tokens, request.max_chars
    check_root(ws.root)
    busy = ws.indexing
    candidates = gather(searcher, request.query)
    result = assemble(candidates, budget_tokens, ws.models.counter.count)
    budget = budget_tokens
    while max_chars is not None and len(result.text) > max_chars:
        budget = min(budget - 1, int(budget * max_chars / len(result.text)))
        if budget < 1:
            raise ContextBudgetError(f"the hard rules need more than {max_chars} characters; raise the budget")
        result = replace(assemble(candidates, budget, ws.models.counter.count), budget_tokens=budget_tokens)
    if busy:
        result = replace(result, indexing=True, partial=("guidance", "recalled"))
    if reinforce:
        searcher.lifecycle.reinforce_ranges((i.path, i.start_line, i.end_line) for t in result.tiers for i in t.items)
    return result
