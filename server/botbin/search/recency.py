"""Recall ranking for agents (LibraVDB's ranker): similarity, recency decay and scope preference. Pure.

``score = (w_sim * similarity + w_rec * recency + w_scope * scope) / (w_sim + w_rec + w_scope)``, with
``w_sim = 1 - w_rec - w_scope``, so that with every part in [0, 1] the score stays in [0, 1].

- similarity: the hybrid search score (alpha * cosine + (1 - alpha) * BM25), clipped to [0, 1].
- recency: ``0.5 ** (age_h / half_life_h)`` (exponential decay): a daily note halves in 72 h by default (a
  session's details fade within days); any other note in 90 days; instruction notes (MEMORY.md, AGENTS.md,
  CLAUDE.md) never decay, since they hold what the user declared durable. A note without a date counts 0.5.
- scope: instruction notes 1.0, other durable notes 0.6, daily notes 0.4: durable knowledge wins ties.

Defaults (0.15 recency, 0.10 scope) keep meaning first: a hit must be nearly as relevant to be lifted by
being recent or durable (a 0.25 weight moves a score by at most 0.25).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from botbin.config import DEFAULTS
from botbin.index.daily import daily_date

SCOPE_PREFERENCE = {"instructions": 1.0, "durable": 0.6, "daily": 0.4}


@dataclass(frozen=True)
class RecencyPolicy:
    """Weights (each in [0, 1], summing to at most 1) and half-lives in hours."""

    recency_weight: float = DEFAULTS.recency_weight
    scope_weight: float = DEFAULTS.scope_weight
    daily_half_life_h: float = DEFAULTS.daily_half_life_h
    durable_half_life_h: float = DEFAULTS.durable_half_life_h


def scope_of(path: str, instruction: bool) -> str:
    """'instructions', 'daily' (see daily_date) or 'durable'."""
    if instruction:
        return "instructions"
    return "daily" if daily_date(path) else "durable"


def age_hours(date: str | None, now: datetime) -> float | None:
    """Hours from the note's ISO date (or datetime) to ``now``; None without a date; never negative."""
    if not date:
        return None
    try:
        when = datetime.fromisoformat(date.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (now - when).total_seconds() / 3600)


def recency(scope: str, age_h: float | None, policy: RecencyPolicy) -> float:
    """Decay in [0, 1]: 1 for instruction notes, 0.5 for an unknown age, else ``0.5 ** (age / half-life)``."""
    if scope == "instructions":
        return 1.0
    if age_h is None:
        return 0.5
    half_life = policy.daily_half_life_h if scope == "daily" else policy.durable_half_life_h
    return float(0.5 ** (age_h / half_life))


def final_score(similarity: float, scope: str, age_h: float | None, policy: RecencyPolicy) -> float:
    """The convex combination above, in [0, 1]."""
    w_rec, w_scope = policy.recency_weight, policy.scope_weight
    w_sim = max(0.0, 1.0 - w_rec - w_scope)
    total = w_sim + w_rec + w_scope
    if total <= 0:
        return 0.0
    sim = min(1.0, max(0.0, similarity))
    value = w_sim * sim + w_rec * recency(scope, age_h, policy) + w_scope * SCOPE_PREFERENCE[scope]
    return value / total
