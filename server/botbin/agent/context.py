"""Token-budgeted context assembly with tier guarantees (LibraVDB's tier law; DESIGN section 8). Pure.

Tiers, in priority order; a higher tier starves a lower one:

1. **hard** invariants of instruction notes: always all of them, in source order; if they alone exceed the
   budget, ContextBudgetError is raised rather than a rule being dropped.
2. (1.5) **guidance**: directives of ordinary memory notes that are relevant to the query.
3. (2) **soft** directives of instruction notes: at most ``soft_share`` of the budget, prefix-preserving
   (whole rules in source order; the first that does not fit ends the tier).
4. (3) **recent** tail: the newest entries of the latest daily note, verbatim, in source order, at most
   ``recent_share`` of the budget.
5. (4) **recalled** memories: search hits, best first, minus anything already included; best effort.

Tokens are counted with the embedding model's WordPiece tokenizer, the one botbin already ships: tiktoken
would fetch its BPE tables from the network at run time, which botbin never does. WordPiece counts pieces of
whitespace-separated words independently, so the count of the rendered context is the sum of its parts;
``check_laws`` recounts the rendered text on every call. Counts approximate the host LLM's tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from botbin.errors import BotbinError

_LIST_MARKER = re.compile(r"^(?:(?:>[ \t]?)+|(?:[-*+]|\d+[.)])[ \t]+)")
TIERS: tuple[str, ...] = ("hard", "guidance", "soft", "recent", "recalled")
#: Tier numbers as the design names them.
TIER_NUMBERS = {"hard": "1", "guidance": "1.5", "soft": "2", "recent": "3", "recalled": "4"}
#: Why a candidate was left out of its tier (``TierResult.cut_reasons``).
CUT_DUPLICATE, CUT_BUDGET, CUT_SHARE, CUT_AFTER = "duplicate", "budget", "share", "after_cut"
HEADERS = {
    "hard": "## Rules (always follow)",
    "guidance": "## Guidance relevant to this request",
    "soft": "## Preferences",
    "recent": "## Recent notes",
    "recalled": "## Related memories",
}


class ContextBudgetError(BotbinError):
    """The hard rules alone do not fit the budget; no rule is ever dropped silently."""

    kind = "bad_request"


class ContextLawError(BotbinError):
    """An assembled context broke a tier law (a bug in botbin, reported rather than returned)."""


@dataclass(frozen=True)
class Item:
    """One candidate piece of context: a rule, a note entry or a recalled chunk."""

    path: str
    """Relative POSIX path of its note."""
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after the last (exclusive)."""
    text: str
    """The verbatim source text."""
    score: float = 0.0
    """Ranking score for recalled items (higher first); unused by the other tiers."""

    def overlaps(self, other: Item) -> bool:
        return self.path == other.path and self.start_line < other.end_line and other.start_line < self.end_line

    def render(self) -> str:
        """The item as one markdown list entry with its source (1-based line, as editors show); a list
        item's own marker is not repeated."""
        body = "\n  ".join(line.rstrip() for line in _LIST_MARKER.sub("", self.text.strip(), count=1).split("\n"))
        return f"- {body} ({self.path}:{self.start_line + 1})"


@dataclass(frozen=True)
class Candidates:
    """Everything the assembler may choose from, per tier, each list in its tier's order."""

    hard: Sequence[Item] = ()
    guidance: Sequence[Item] = ()
    soft: Sequence[Item] = ()
    recent: Sequence[Item] = ()
    """In source order; the tier keeps the newest (last) entries that fit."""
    recalled: Sequence[Item] = ()
    """Best first."""


@dataclass(frozen=True)
class Policy:
    """Shares of the budget for the capped tiers (fractions of ``budget_tokens``)."""

    soft_share: float = 0.2
    """Tier 2 gets at most this share: rules a user wrote as preferences, not invariants."""
    recent_share: float = 0.3
    """Tier 3 gets at most this share: enough for the last few entries of the day."""


@dataclass(frozen=True)
class TierResult:
    """One tier of an assembled context."""

    name: str
    items: tuple[Item, ...]
    tokens: int
    """Tokens of this tier's rendered text (header included)."""
    cut: tuple[Item, ...] = ()
    """Candidates left out (budget, share, or duplicates of a higher tier)."""
    cut_reasons: tuple[str, ...] = ()
    """Why each of ``cut`` was left out, in its order: CUT_DUPLICATE (it repeats a passage already chosen),
    CUT_BUDGET (over the whole budget), CUT_SHARE (over the tier's share) or CUT_AFTER (soft and recent are
    prefixes: an entry before it was left out)."""


@dataclass(frozen=True)
class ContextResult:
    """An assembled context: the rendered markdown, its tiers, and the tokens it uses."""

    text: str
    tiers: tuple[TierResult, ...]
    used_tokens: int
    budget_tokens: int
    indexing: bool = False
    """True when the notes were still being indexed: the rules were read from the notes themselves, but the
    tiers found by search (``partial``) may miss what is not embedded yet."""
    partial: tuple[str, ...] = ()
    """Names of the tiers that may be incomplete (while indexing: guidance and recalled)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (camelCase): ``{text, usedTokens, budgetTokens, tiers: [{name, tier, tokens, items, cut}]}``."""

        def item(i: Item) -> dict[str, Any]:
            return {"path": i.path, "startLine": i.start_line, "endLine": i.end_line, "text": i.text}

        return {
            "text": self.text,
            "usedTokens": self.used_tokens,
            "budgetTokens": self.budget_tokens,
            "indexing": self.indexing,
            "partialTiers": list(self.partial),
            "tiers": [
                {
                    "name": t.name,
                    "tier": TIER_NUMBERS[t.name],
                    "tokens": t.tokens,
                    "items": [item(i) for i in t.items],
                    "cut": [{**item(i), "reason": why} for i, why in zip(t.cut, t.cut_reasons, strict=True)],
                }
                for t in self.tiers
            ],
        }


@dataclass
class _Tier:
    name: str
    items: list[Item] = field(default_factory=list)
    cut: list[Item] = field(default_factory=list)
    tokens: int = 0
    why: list[str] = field(default_factory=list)
    """CUT_* of each of ``cut``."""

    def leave_out(self, item: Item, reason: str) -> None:
        self.cut.append(item)
        self.why.append(reason)


def _render(tiers: Sequence[TierResult | _Tier]) -> str:
    parts = [HEADERS[t.name] + "\n" + "\n".join(i.render() for i in t.items) for t in tiers if t.items]
    return "\n\n".join(parts)


def assemble(
    candidates: Candidates, budget_tokens: int, count: Callable[[str], int], policy: Policy | None = None
) -> ContextResult:
    """Fill ``budget_tokens`` tier by tier. ``count(text)`` is the token counter (additive over words).

    Raises ContextBudgetError if the hard rules alone exceed the budget; ContextLawError if the result
    breaks a tier law (never expected).
    """
    policy = policy or Policy()
    if budget_tokens <= 0:
        raise ContextBudgetError(f"budget_tokens must be positive, got {budget_tokens}")
    used = 0
    tiers: list[_Tier] = []

    def cost(tier: _Tier, item: Item) -> int:
        return count(item.render()) + (count(HEADERS[tier.name]) if not tier.items else 0)

    def taken(item: Item, current: _Tier) -> bool:
        """True when ``item`` repeats a passage already chosen, in a tier above or in this one."""
        return any(item.overlaps(other) for t in (*tiers, current) for other in t.items)

    hard = _Tier("hard")
    for item in candidates.hard:
        hard.tokens += cost(hard, item)
        hard.items.append(item)
    if hard.tokens > budget_tokens:
        raise ContextBudgetError(
            f"the hard rules ({len(hard.items)}) need {hard.tokens} tokens, over the budget of {budget_tokens}; "
            "raise the budget (no rule is dropped silently)"
        )
    tiers.append(hard)
    used = hard.tokens
    caps = {
        "guidance": budget_tokens,
        "soft": int(budget_tokens * policy.soft_share),
        "recent": int(budget_tokens * policy.recent_share),
        "recalled": budget_tokens,
    }
    for name in ("guidance", "soft", "recent", "recalled"):
        tier = _Tier(name)
        pool = list(getattr(candidates, name))
        if name == "recent":
            pool.reverse()  # newest first while filling; put back in source order after
        stopped = False
        for item in pool:
            if taken(item, tier):
                tier.leave_out(item, CUT_DUPLICATE)
                continue
            need = cost(tier, item)
            in_budget = used + need <= budget_tokens
            # soft and recent are prefixes: once one entry is out, everything after it is out too
            if stopped or not (in_budget and tier.tokens + need <= caps[name]):
                tier.leave_out(item, CUT_AFTER if stopped else CUT_SHARE if in_budget else CUT_BUDGET)
                stopped = stopped or name in ("soft", "recent")
                continue
            tier.items.append(item)
            tier.tokens += need
            used += need
        if name == "recent":
            tier.items.reverse()
            tier.cut.reverse()
            tier.why.reverse()
        tiers.append(tier)
    frozen = tuple(TierResult(t.name, tuple(t.items), t.tokens, tuple(t.cut), tuple(t.why)) for t in tiers)
    result = ContextResult(_render(frozen), frozen, used, budget_tokens)
    check_laws(result, candidates, count)
    return result


def check_laws(result: ContextResult, candidates: Candidates, count: Callable[[str], int]) -> None:
    """Raise ContextLawError unless: the rendered text fits the budget and its count is the reported one;
    every hard rule is present, in order; every item is verbatim from its tier's candidates and in their
    order; soft and recent are prefixes (recent: of the newest entries); no source line appears twice."""
    problems: list[str] = []
    total = count(result.text)
    if total > result.budget_tokens:
        problems.append(f"{total} tokens over the budget of {result.budget_tokens}")
    if total != result.used_tokens or sum(t.tokens for t in result.tiers) != result.used_tokens:
        problems.append(f"token accounting differs: rendered {total}, reported {result.used_tokens}")
    by_name = {t.name: t for t in result.tiers}
    if tuple(by_name["hard"].items) != tuple(candidates.hard):
        problems.append("a hard rule is missing or out of order")
    for tier in result.tiers:
        pool = list(getattr(candidates, tier.name))
        positions = [pool.index(i) if i in pool else -1 for i in tier.items]
        if -1 in positions or positions != sorted(positions):
            problems.append(f"tier {tier.name}: an item is not verbatim from its candidates or out of order")
    for name, newest_first in (("soft", False), ("recent", True)):
        kept = list(by_name[name].items)
        pool = [i for i in getattr(candidates, name) if i in kept or not _dup(i, result, name)]
        expect = pool[len(pool) - len(kept) :] if newest_first else pool[: len(kept)]
        if kept != expect:
            problems.append(f"tier {name} is not a prefix of its candidates")
    seen = [i for t in result.tiers for i in t.items]
    if any(a.overlaps(b) for k, a in enumerate(seen) for b in seen[k + 1 :]):
        problems.append("a source passage appears twice")
    if problems:
        raise ContextLawError("context assembly broke a tier law: " + "; ".join(problems))


def _dup(item: Item, result: ContextResult, name: str) -> bool:
    """True when ``item`` overlaps an item of a tier above ``name`` (so it was cut as a duplicate)."""
    above = TIERS[: TIERS.index(name)]
    return any(item.overlaps(o) for t in result.tiers if t.name in above for o in t.items)


def with_scores(items: Sequence[Item], scores: Sequence[float]) -> list[Item]:
    """``items`` with their ranking scores set (for recalled memories)."""
    return [replace(i, score=s) for i, s in zip(items, scores, strict=True)]
