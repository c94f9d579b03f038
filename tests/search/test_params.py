"""The shared argument checks (wire/requests.py): one rule per argument for the CLI, LSP and MCP alike, given when a
request is validated."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from botbin.wire.requests import MAX_K, SearchFilters, check_alpha, check_k, problem


def check_filters(fields: dict[str, str], names: tuple[str, str, str] = ("kind", "date_from", "date_to")) -> str | None:
    """Why filters ``fields`` are refused, named as a surface names them (None when they are fine)."""
    try:
        SearchFilters.model_validate(fields)
    except ValidationError as exc:
        return problem(exc, dict(zip(("kind", "date_from", "date_to"), names, strict=True)))
    return None


@pytest.mark.parametrize("k", [None, 1, 10, MAX_K])
def test_good_k(k: object) -> None:
    assert check_k(k) is None


@pytest.mark.parametrize("k", [0, -1, MAX_K + 1, True, 2.5, "5"])
def test_bad_k_names_the_bounds(k: object) -> None:
    assert check_k(k) == f"k must be a whole number from 1 to {MAX_K}, not {k!r}"


@pytest.mark.parametrize("alpha", [None, 0, 0.5, 1.0])
def test_good_alpha(alpha: object) -> None:
    assert check_alpha(alpha) is None


@pytest.mark.parametrize("alpha", [-0.1, 1.5, True, "0.5"])
def test_bad_alpha(alpha: object) -> None:
    assert check_alpha(alpha) is not None and "alpha" in str(check_alpha(alpha))


@pytest.mark.parametrize("day", ["2026", "2026-11", "2026-11-03"])
def test_days_at_three_precisions(day: str) -> None:
    assert check_filters({"date_from": day, "date_to": day}) is None


@pytest.mark.parametrize("day", ["last week", "yesterday", "2026-13", "2026-11-32", "03/11/2026", "2026-11-03x"])
def test_words_for_dates_are_refused_not_silently_empty(day: str) -> None:
    problem = check_filters({"date_from": day})
    assert problem is not None and "date_from takes a date as YYYY, YYYY-MM or YYYY-MM-DD" in problem


def test_each_surface_names_the_argument_its_own_way() -> None:
    problem = check_filters({"date_to": "soon"}, ("--kind", "--since", "--until"))
    assert problem is not None and problem.startswith("--until ")
    assert check_filters({"kind": "rule"}) == "kind must be 'hard', 'soft' or 'lore', not 'rule'"
