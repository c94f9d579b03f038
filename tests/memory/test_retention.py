"""Decay (memory/retention.py): property tests of the half-life regression forgetting curve."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from botbin.memory.retention import DecayPolicy, age_days, decay_score, half_life, ranked

POLICY = DecayPolicy()
ages = st.floats(min_value=0.0, max_value=1e5, allow_nan=False)
counts = st.integers(min_value=0, max_value=10_000)
policies = st.builds(DecayPolicy, st.floats(0.01, 1e4), st.floats(0.0, 10.0), st.floats(0.0, 1.0))


@given(ages, counts, policies)
def test_score_is_in_zero_one(age: float, count: int, policy: DecayPolicy) -> None:
    assert 0.0 <= decay_score(age, count, policy) <= 1.0


@given(ages, ages, counts, policies)
def test_monotone_in_age(a: float, b: float, count: int, policy: DecayPolicy) -> None:
    young, old = sorted((a, b))
    assert decay_score(old, count, policy) <= decay_score(young, count, policy)


@given(ages, counts, st.integers(1, 100), policies)
def test_reinforcement_never_lowers_the_score(age: float, count: int, more: int, policy: DecayPolicy) -> None:
    assert decay_score(age, count + more, policy) >= decay_score(age, count, policy)


@given(ages, counts, policies)
def test_a_retrieval_never_lowers_the_score(age: float, count: int, policy: DecayPolicy) -> None:
    """A retrieval resets the age to 0 and adds one to the count: the score goes to 1."""
    assert decay_score(0.0, count + 1, policy) >= decay_score(age, count, policy)


def test_half_life_halves_and_stretches() -> None:
    assert decay_score(0.0, 0, POLICY) == 1.0
    assert decay_score(30.0, 0, POLICY) == 0.5
    assert half_life(3, POLICY) == 120.0  # 30 days * (1 + 1 * 3)
    assert decay_score(120.0, 3, POLICY) == 0.5
    assert decay_score(-5.0, 0, POLICY) == 1.0  # clock skew counts as now


def test_age_counts_from_the_later_of_creation_and_retrieval() -> None:
    created = datetime(2026, 1, 1).astimezone()
    now = created + timedelta(days=10)
    assert age_days(created, None, now) == 10.0
    assert age_days(created, created + timedelta(days=4), now) == 6.0


@given(st.floats(0.0, 10.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_ranked_lowers_by_at_most_the_weight(score: float, decay: float, weight: float) -> None:
    out = ranked(score, decay, weight)
    assert score * (1 - weight) - 1e-9 <= out <= score + 1e-9
    assert ranked(score, decay, 0.0) == score
