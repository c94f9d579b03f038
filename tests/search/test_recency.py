"""Recall ranking for agents (search/recency.py): scopes, note ages, decay and the combined score."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botbin.search.recency import SCOPE_PREFERENCE, RecencyPolicy, age_hours, final_score, recency, scope_of

NOW = datetime(2026, 11, 4, 12, 0, tzinfo=UTC)
DEFAULT = RecencyPolicy()


@pytest.mark.parametrize(
    ("path", "instruction", "scope"),
    [
        ("MEMORY.md", True, "instructions"),
        ("AGENTS.md", True, "instructions"),
        ("memory/team/CLAUDE.md", True, "instructions"),
        ("memory/2026-11-03.md", True, "instructions"),  # an instruction note is one, whatever its name
        ("memory/2026-11-03.md", False, "daily"),
        ("2026-11-03.md", False, "daily"),
        ("memory/journal/2026-11-03.md", False, "daily"),
        ("memory/notes.md", False, "durable"),
        ("memory/2026-11-03-standup.md", False, "durable"),
        ("memory/2026-11-03.md.bak", False, "durable"),
        ("memory/x2026-11-03.md", False, "durable"),
        ("memory/2026-11.md", False, "durable"),
    ],
)
def test_scope_of(path: str, instruction: bool, scope: str) -> None:
    assert scope_of(path, instruction) == scope


@pytest.mark.parametrize(
    ("date", "hours"),
    [
        ("2026-11-04", 12.0),  # a date alone is midnight UTC
        ("2026-11-03", 36.0),
        ("2026-11-04T06:00:00Z", 6.0),
        ("2026-11-04T06:00:00+00:00", 6.0),
        ("2026-11-04T08:00:00+02:00", 6.0),
        ("2026-11-04T06:00:00", 6.0),  # naive: taken as UTC
        ("2026-11-04T11:30", 0.5),
        ("2026-11-05", 0.0),  # in the future: never negative
        ("2030-01-01T00:00:00Z", 0.0),
    ],
)
def test_age_hours(date: str, hours: float) -> None:
    assert age_hours(date, NOW) == pytest.approx(hours)


@pytest.mark.parametrize("date", [None, "", "yesterday", "2026-13-45", "2026-02-30", "11/03/2026", "2026-11-03 x"])
def test_age_hours_without_a_usable_date_is_none(date: str | None) -> None:
    assert age_hours(date, NOW) is None


def test_age_hours_with_a_now_in_another_timezone() -> None:
    local = NOW.astimezone(timezone(timedelta(hours=-5)))
    assert age_hours("2026-11-04", local) == pytest.approx(12.0)


@pytest.mark.parametrize("age", [None, 0.0, 72.0, 1e6])
def test_instruction_notes_never_decay(age: float | None) -> None:
    assert recency("instructions", age, DEFAULT) == 1.0


@pytest.mark.parametrize("scope", ["daily", "durable"])
def test_unknown_age_counts_half(scope: str) -> None:
    assert recency(scope, None, DEFAULT) == 0.5


@pytest.mark.parametrize(("scope", "half_life"), [("daily", 72.0), ("durable", 2160.0)])
def test_recency_halves_at_each_half_life(scope: str, half_life: float) -> None:
    assert recency(scope, 0.0, DEFAULT) == 1.0
    assert recency(scope, half_life, DEFAULT) == 0.5
    assert recency(scope, 2 * half_life, DEFAULT) == 0.25
    assert 0.5 < recency(scope, half_life / 2, DEFAULT) < 1.0


def test_custom_half_lives() -> None:
    policy = RecencyPolicy(daily_half_life_h=24.0, durable_half_life_h=48.0)
    assert recency("daily", 24.0, policy) == 0.5 and recency("durable", 48.0, policy) == 0.5


weights = st.floats(0, 1)
ages = st.one_of(st.none(), st.floats(0, 1e9))
scopes = st.sampled_from(sorted(SCOPE_PREFERENCE))
policies = st.builds(
    RecencyPolicy,
    recency_weight=weights,
    scope_weight=weights,
    daily_half_life_h=st.floats(1e-3, 1e6),
    durable_half_life_h=st.floats(1e-3, 1e6),
)


@settings(max_examples=300, deadline=None, database=None)
@given(st.floats(allow_nan=False), scopes, ages, policies)
def test_final_score_stays_in_unit_interval(
    similarity: float, scope: str, age: float | None, policy: RecencyPolicy
) -> None:
    score = final_score(similarity, scope, age, policy)
    assert math.isfinite(score) and 0.0 <= score <= 1.0


@settings(max_examples=200, deadline=None, database=None)
@given(st.floats(0, 1), scopes, ages)
def test_final_score_is_the_similarity_when_both_weights_are_zero(
    similarity: float, scope: str, age: float | None
) -> None:
    policy = RecencyPolicy(recency_weight=0.0, scope_weight=0.0)
    assert final_score(similarity, scope, age, policy) == similarity


@settings(max_examples=200, deadline=None, database=None)
@given(st.floats(0, 1), st.sampled_from(["daily", "durable"]), st.floats(0, 1e5), st.floats(0, 1e5), policies)
def test_final_score_never_rises_with_age(
    similarity: float, scope: str, a: float, b: float, policy: RecencyPolicy
) -> None:
    young, old = sorted((a, b))
    assert final_score(similarity, scope, young, policy) >= final_score(similarity, scope, old, policy)


@settings(max_examples=200, deadline=None, database=None)
@given(st.floats(0, 1), st.floats(0, 1), scopes, ages)
def test_final_score_never_falls_with_similarity(a: float, b: float, scope: str, age: float | None) -> None:
    low, high = sorted((a, b))
    assert final_score(low, scope, age, DEFAULT) <= final_score(high, scope, age, DEFAULT)


def test_similarity_is_clipped() -> None:
    assert final_score(7.0, "durable", None, DEFAULT) == final_score(1.0, "durable", None, DEFAULT)
    assert final_score(-3.0, "durable", None, DEFAULT) == final_score(0.0, "durable", None, DEFAULT)


def test_recent_daily_note_outranks_an_old_one_at_equal_similarity() -> None:
    recent = final_score(0.6, "daily", age_hours("2026-11-04", NOW), DEFAULT)
    old = final_score(0.6, "daily", age_hours("2026-10-01", NOW), DEFAULT)
    assert recent > old


def test_scope_breaks_ties_durable_over_daily() -> None:
    assert (
        final_score(0.5, "instructions", None, DEFAULT)
        > final_score(0.5, "durable", 0.0, DEFAULT)
        > final_score(0.5, "daily", 0.0, DEFAULT)
    )


def test_default_score_formula() -> None:
    expected = 0.75 * 0.8 + 0.15 * 0.5 + 0.10 * 0.4  # similarity, one half-life old, a daily note
    assert final_score(0.8, "daily", 72.0, DEFAULT) == pytest.approx(expected)
