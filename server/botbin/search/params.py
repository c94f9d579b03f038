"""Validation of the search arguments every surface shares (CLI flags, LSP params, MCP tool arguments): one
rule per argument, one message per mistake. Each check returns the reason a value is bad, or None."""

from __future__ import annotations

import re

from botbin.config import MAX_K as MAX_K  # the top_k setting's bound too
from botbin.index.hits import SearchFilters

KINDS = ("hard", "soft", "lore")
#: A day as YYYY, YYYY-MM or YYYY-MM-DD (regular expression, for schemas too).
ISO_DAY_PATTERN = r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$"
_ISO_DAY = re.compile(ISO_DAY_PATTERN)


def check_k(k: object) -> str | None:
    """``k`` must be None or a whole number from 1 to MAX_K."""
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K):
        return f"k must be a whole number from 1 to {MAX_K}, not {k!r}"
    return None


def check_alpha(alpha: object) -> str | None:
    """``alpha`` must be None or a number in [0, 1]."""
    if alpha is not None and (
        not isinstance(alpha, int | float) or isinstance(alpha, bool) or not 0.0 <= float(alpha) <= 1.0
    ):
        return f"alpha must be a number between 0 and 1, not {alpha!r}"
    return None


def check_filters(filters: SearchFilters, names: tuple[str, str, str] = ("kind", "date_from", "date_to")) -> str | None:
    """Kind one of KINDS; dates as YYYY, YYYY-MM or YYYY-MM-DD (``last week`` would match nothing). ``names``:
    what the caller's surface calls the kind and the two dates (a flag, a JSON key)."""
    if filters.kind is not None and filters.kind not in KINDS:
        return f"{names[0]} must be 'hard', 'soft' or 'lore', not {filters.kind!r}"
    for name, value in ((names[1], filters.date_from), (names[2], filters.date_to)):
        if value is not None and not _ISO_DAY.match(value):
            return f"{name} takes a date as YYYY, YYYY-MM or YYYY-MM-DD, not {value!r}"
    return None
