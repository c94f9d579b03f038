"""A memo row read back from the sidecar store, checked: the file lies in the shared output folder and SQLite keeps
any value in any column, so every value must have the type and range botbin writes before it becomes a memo."""

from __future__ import annotations

import json
from datetime import datetime

PLACE_OK = (
    "typeof(id) = 'text' AND typeof(path) = 'text' AND typeof(start_line) = 'integer' "
    "AND typeof(end_line) = 'integer' AND start_line >= 0 AND end_line >= start_line"
)
"""SQL: the rows whose place has the types botbin writes (a place query leaves the others out, and the next
reconcile writes their place again)."""

Row = tuple[
    str, str, int, int, datetime, "datetime | None", tuple[str, ...], int, float, "datetime | None", "str | None"
]
"""A memo's fields in ``Memo``'s order (memory/memos.py)."""


def checked(r: tuple[object, ...]) -> Row:
    """The fields of row ``r`` (id, path, start_line, end_line, created, last_retrieved, tags,
    reinforcement_count, decay_score, archived_at, archived_text). Raises ValueError for a value of the wrong
    type or range (an integer line as text, a decay of 1e999, tags that are not a JSON list of strings, a time
    that is not ISO 8601)."""
    (mid, path, start, end, created, last, tags, count, decay, archived, text) = r
    if not (isinstance(mid, str) and isinstance(path, str) and isinstance(start, int) and isinstance(end, int)):
        raise ValueError("id, path or line range of the wrong type")
    if not 0 <= start <= end:
        raise ValueError("a line range that goes backwards")
    if not (isinstance(count, int) and count >= 0 and isinstance(decay, int | float) and 0.0 <= decay <= 1.0):
        raise ValueError("reinforcement_count or decay_score out of range")  # NaN fails 0 <= decay too
    parsed = json.loads(tags) if isinstance(tags, str) else None
    if not (isinstance(parsed, list) and all(isinstance(t, str) for t in parsed)):
        raise ValueError("tags are not a JSON list of strings")
    return (
        mid,
        path,
        start,
        end,
        _when(created),
        _when(last) if last is not None else None,
        tuple(parsed),
        count,
        float(decay),
        _when(archived) if archived is not None else None,
        None if text is None else str(text),
    )


def _when(value: object) -> datetime:
    """A time column read back, with its time zone (a naive one is taken as local, as reconcile does); raises
    ValueError unless it is an ISO 8601 string."""
    if not isinstance(value, str):
        raise ValueError("a time that is not a string")
    when = datetime.fromisoformat(value)
    return when if when.tzinfo else when.astimezone()
