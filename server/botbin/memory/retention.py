"""Memo decay: how strongly an episodic memo is still remembered, in (0, 1]. Pure.

The forgetting curve is the half-life regression model of Settles & Meeder (2016, "A Trainable Spaced
Repetition Model for Language Learning", ACL): recall probability ``p = 2 ** (-age / h)``. Here

- ``age`` is the time since the memo was last retrieved (or created, if never), in days;
- ``h = half_life_days * (1 + stretch * reinforcement_count)``: every retrieval stretches the half-life
  (the spacing effect; HLR learns the stretch, botbin fixes it to 1, so a memo retrieved 3 times halves in
  120 days instead of 30).

So the score is 1 at the moment of creation or retrieval, non-increasing in age, and never lowered by a
retrieval (a retrieval both resets the age and stretches the half-life).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class DecayPolicy:
    """Decay settings (botbin.toml ``decay_half_life_days``, ``reinforcement_stretch``, ``decay_weight``)."""

    half_life_days: float = 30.0
    """Days for an unretrieved memo's score to halve."""
    stretch: float = 1.0
    """Half-life gained per retrieval, as a multiple of ``half_life_days``."""
    weight: float = 0.1
    """Weight of decay in search ranking (``ranked``)."""


def half_life(reinforcement_count: int, policy: DecayPolicy) -> float:
    """The memo's half-life in days."""
    return policy.half_life_days * (1.0 + policy.stretch * max(0, reinforcement_count))


def decay_score(age_days: float, reinforcement_count: int, policy: DecayPolicy) -> float:
    """``2 ** (-age_days / half_life)``, in (0, 1]; a negative age (clock skew) counts as 0."""
    return float(0.5 ** (max(0.0, age_days) / half_life(reinforcement_count, policy)))


def age_days(created: datetime, last_retrieved: datetime | None, now: datetime) -> float:
    """Days from the later of creation and last retrieval to ``now`` (aware datetimes)."""
    since = max(created, last_retrieved) if last_retrieved is not None else created
    return (now - since).total_seconds() / SECONDS_PER_DAY


def ranked(score: float, decay: float, weight: float) -> float:
    """A search score lowered by decay: ``score * (1 - weight + weight * decay)``. With ``weight`` 0.1 a
    fully faded memo keeps 90% of its score, so relevance stays first and decay only breaks near-ties."""
    return score * (1.0 - weight + weight * decay)


def days_until(threshold: float, age_days: float, reinforcement_count: int, policy: DecayPolicy) -> float:
    """Days from now until a memo of this age (``age_days``) falls under ``threshold`` (what ``botbin prune``
    archives), 0 when it already has; infinite for a threshold of 0 or less."""
    if threshold <= 0:
        return float("inf")
    if threshold >= 1:
        return 0.0
    return max(0.0, half_life(reinforcement_count, policy) * math.log2(1.0 / threshold) - max(0.0, age_days))


def curve(
    age_days: float, reinforcement_count: int, policy: DecayPolicy, ahead_days: float, points: int = 24
) -> tuple[tuple[float, float], ...]:
    """The retention curve from the memo's last retrieval (or creation), ``age_days`` ago, to ``ahead_days`` from
    now: ``points`` pairs (days from now, negative in the past; score), evenly spaced, with no retrieval after it."""
    start, end = -max(0.0, age_days), max(0.0, ahead_days)
    steps = max(2, points)
    days = [start + (end - start) * i / (steps - 1) for i in range(steps)]
    return tuple((day, decay_score(day - start, reinforcement_count, policy)) for day in days)
