"""SearchFilters.admits: the one filter predicate the embedded index (store.py ``_mask``) and the team database
(postgres/query.py) share. The filters are built unvalidated here (``model_construct``): a date with a time part,
which no surface accepts, still compares by day."""

from __future__ import annotations

import pytest

from botbin.wire.requests import SearchFilters as Validated

SearchFilters = Validated.model_construct

NOTE = ("memory/2026-11-05.md", ("Incident", "project/api"), "2026-11-05T09:30:00")


@pytest.mark.parametrize(
    ("filters", "admitted"),
    [
        (SearchFilters(), True),
        (SearchFilters(tag="incident"), True),  # case-insensitive
        (SearchFilters(tag="#project"), True),  # a leading '#' is dropped; a parent tag admits its sub-tags
        (SearchFilters(tag="project/api"), True),
        (SearchFilters(tag="proj"), False),  # a prefix of a tag's name is not its parent
        (SearchFilters(tag="api"), False),
        (SearchFilters(path_glob="memory/*.md"), True),
        (SearchFilters(path_glob="*.md"), False),  # '*' stays inside one folder
        (SearchFilters(path_glob="**/2026-11-0?.md"), True),
        (SearchFilters(date_from="2026-11-05"), True),  # by day, whatever the time part
        (SearchFilters(date_from="2026-11-06T00:00:00"), False),
        (SearchFilters(date_to="2026-11-05T00:00:00"), True),
        (SearchFilters(date_to="2026-11"), True),  # a month as date_to: the whole month
        (SearchFilters(date_to="2026-10"), False),
        (SearchFilters(date_to="2026-11-04"), False),
        (SearchFilters(path_glob="memory/**", tag="incident", date_from="2026-11-01", date_to="2026-11-30"), True),
        (SearchFilters(path_glob="notes/**", tag="incident"), False),
    ],
)
def test_admits_note(filters: Validated, admitted: bool) -> None:
    assert filters.admits_note(*NOTE) is admitted
    assert filters.admits(*NOTE, kind="lore") is admitted  # no kind filter: the chunk's kind does not matter


def test_kind_and_undated_notes() -> None:
    assert SearchFilters(kind="hard").admits(*NOTE, kind="hard")
    assert not SearchFilters(kind="hard").admits(*NOTE, kind="soft")
    assert SearchFilters(kind="hard").admits_note(*NOTE)  # kind is a chunk's, not the note's
    undated = ("ideas.md", (), None)
    assert SearchFilters().admits_note(*undated)
    assert not SearchFilters(date_from="2026-01-01").admits_note(*undated)
    assert not SearchFilters(date_to="2026-12-31").admits_note(*undated)
    assert not SearchFilters(tag="x").admits_note(*undated)
