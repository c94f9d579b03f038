"""What a surface asks of botbin, typed once: ``SearchRequest``, ``RelatedRequest``, ``SyncRequest``,
``ContextRequest`` and the one ``SearchFilters``. Every adapter (argparse, LSP params, MCP arguments, the host ops,
the warm socket) validates its input into them on entry, and the domain passes them down whole: one rule per
argument, one message per mistake, whichever door the request came in by.

Pydantic, in the contract layer under the domain (docs/architecture.md): the domain imports these and nothing
else of ``botbin.wire``. ``problem`` turns a ValidationError into the one-line message each surface shows, naming
the argument as that surface calls it (a flag, a JSON key).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any, Final, Literal

from pydantic import Field, StrictBool, StrictInt, ValidationError, field_validator

from botbin.config import MAX_K as MAX_K  # the top_k setting's bound too (config_model.py)
from botbin.config_rules import path_glob
from botbin.wire.model import ChunkKind, WireModel

KINDS: tuple[ChunkKind, ...] = ("hard", "soft", "lore")
DEFAULT_BUDGET_TOKENS: Final = 2000
"""A context's token budget when a request names none (every surface: CLI, LSP, MCP, the studio)."""
MAX_BUDGET_TOKENS: Final = 10_000_000
"""The largest token budget a context request may ask (a JSON number a JavaScript client holds exactly)."""
#: A day as YYYY, YYYY-MM or YYYY-MM-DD (regular expression, for schemas too).
ISO_DAY_PATTERN = r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$"
_ISO_DAY = re.compile(ISO_DAY_PATTERN)


def check_k(k: object) -> str | None:
    """``k`` must be None or a whole number from 1 to MAX_K (never a bool or a string)."""
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K):
        return f"k must be a whole number from 1 to {MAX_K}, not {k!r}"
    return None


def check_alpha(alpha: object) -> str | None:
    """``alpha`` must be None or a number in [0, 1] (never NaN, a bool or a string)."""
    if alpha is not None and (
        not isinstance(alpha, int | float)
        or isinstance(alpha, bool)
        or math.isnan(alpha)
        or not 0.0 <= float(alpha) <= 1.0
    ):
        return f"alpha must be a number between 0 and 1, not {alpha!r}"
    return None


def _check_day(name: str, value: object) -> str | None:
    if value is not None and (not isinstance(value, str) or not _ISO_DAY.match(value)):
        return f"{name} takes a date as YYYY, YYYY-MM or YYYY-MM-DD, not {value!r}"
    if isinstance(value, str) and not _real_day(value):
        return f"{name} names a day the calendar lacks: {value!r}"
    return None


def _real_day(value: str) -> bool:
    """False for a day the calendar lacks (``2026-02-30``); a year or a month alone is always real."""
    try:
        return len(value) < 10 or datetime.date.fromisoformat(value) is not None
    except ValueError:
        return False


def check_budget(budget: object) -> str | None:
    """``budget_tokens`` must be a whole number from 1 to MAX_BUDGET_TOKENS (never a bool or a string)."""
    if not isinstance(budget, int) or isinstance(budget, bool) or not 1 <= budget <= MAX_BUDGET_TOKENS:
        return f"budget_tokens must be a whole number of tokens from 1 to {MAX_BUDGET_TOKENS:,}, not {budget!r}"
    return None


def _raise(problem: str | None) -> None:
    if problem:
        raise ValueError(problem)


class SearchFilters(WireModel):
    """Optional filters of a search; every one set narrows the hits."""

    path_glob: str | None = None
    """Glob over the note's workspace-relative path (``memory/**``; ``**`` spans folders)."""
    tag: str | None = None
    """A frontmatter tag the note must carry (case-insensitive; a parent tag matches its children)."""
    kind: ChunkKind | None = None
    """Only chunks of this kind."""
    date_from: str | None = None
    """Earliest note date, ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, inclusive."""
    date_to: str | None = None
    """Latest note date, ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, inclusive."""

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: object) -> object:
        if value is not None and value not in KINDS:
            raise ValueError(f"kind must be 'hard', 'soft' or 'lore', not {value!r}")
        return value

    @field_validator("date_from", "date_to", mode="before")
    @classmethod
    def _day(cls, value: object, info: Any) -> object:
        _raise(_check_day(str(info.field_name), value))
        return value

    @cached_property
    def _glob(self) -> Callable[[str], bool] | None:
        return path_glob(self.path_glob) if self.path_glob else None

    def admits_note(self, path: str, tags: Iterable[str], date: str | None) -> bool:
        """Whether a note passes the note-level filters (tag, dates, path glob); ``kind`` is a chunk's, see
        ``admits``. Pure: the embedded index and the team database both ask this. A tag matches itself and its
        sub-tags, case-insensitively (``#project`` admits ``Project/sub``); dates compare by day whatever time part
        either side carries, and a shorter ``date_to`` such as ``2026-11`` means the whole month; a note without a
        date fails a date filter."""
        if self.tag:
            want = self.tag.casefold().lstrip("#")
            if not any(t.casefold() == want or t.casefold().startswith(want + "/") for t in tags):
                return False
        if self.date_from and (date is None or date[:10] < self.date_from[:10]):
            return False
        until = self.date_to[:10] if self.date_to else None
        if until and (date is None or date[: len(until)] > until):
            return False
        return self._glob is None or self._glob(path)

    def admits(self, path: str, tags: Iterable[str], date: str | None, kind: str) -> bool:
        """Whether a chunk of kind ``kind`` in the note (``path``, ``tags``, ``date``) passes every filter."""
        return (not self.kind or kind == self.kind) and self.admits_note(path, tags, date)

    @property
    def note_level(self) -> bool:
        """True when a filter other than ``kind`` is set (each note must then be asked)."""
        return any((self.path_glob, self.tag, self.date_from, self.date_to))


class SearchRequest(WireModel):
    """A search of the notes by meaning: ``botbin search``, LSP ``botbin/search`` and ``workspace/symbol``, the
    warm socket, MCP ``search_memory`` (agent recall), a hover's related memories."""

    query: str
    """What to look for, in natural language (not empty)."""
    k: int | None = None
    """Hits wanted, 1-1000 (default: the ``top_k`` setting)."""
    alpha: float | None = None
    """Weight of the cosine against BM25, 0-1 (default: the ``alpha`` setting)."""
    filters: SearchFilters = Field(default_factory=SearchFilters)
    """Filters; none by default."""
    best_per_note: StrictBool = False
    """Keep only the best chunk of each note."""
    per_note: StrictInt | None = Field(default=None, ge=0)
    """At most this many hits of one note, 0 for no cap (default: the ``max_hits_per_note`` setting, daily notes
    exempt)."""
    show_all: StrictBool = False
    """Also return the hits under the relevance floor (hardly any similarity, no real keyword match), which are
    left out by default and counted in the result's ``hidden``."""
    explain: StrictBool = False
    """Also take each hit's score apart into what each ranking term added (the result's ``parts``: Recall Studio's
    search)."""

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        _raise(None if value.strip() else "the query is empty")
        return value

    @field_validator("k", mode="before")
    @classmethod
    def _k(cls, value: object) -> object:
        _raise(check_k(value))
        return value

    @field_validator("alpha", mode="before")
    @classmethod
    def _alpha(cls, value: object) -> object:
        _raise(check_alpha(value))
        return value

    @field_validator("filters", mode="before")
    @classmethod
    def _no_filters(cls, value: object) -> object:
        return SearchFilters() if value is None else value


class RelatedRequest(WireModel):
    """Memories related to a paragraph (LSP hover, ``botbin/related``): best first, one per note, never the
    paragraph itself."""

    text: str
    """The paragraph's text."""
    path: str | None = None
    """The note it comes from, relative to the workspace folder; its hits overlapping ``lines`` are left out."""
    lines: tuple[int, int] | None = None
    """The paragraph's lines, 0-based, end exclusive."""
    k: int = 5
    """Hits wanted, 1-1000."""
    source_md5: str | None = None
    """MD5 of the note's current text: when the index holds that version, the stored vector of the chunk at
    ``lines`` stands in for the paragraph's (no model run)."""
    show_all: StrictBool = False
    """Also return the hits under the relevance floor (see SearchRequest)."""

    @field_validator("k", mode="before")
    @classmethod
    def _k(cls, value: object) -> object:
        _raise(check_k(value))
        return value


class SyncRequest(WireModel):
    """A sync of the notes into AIF-BIN files (then the index patched and, backend ``postgres``, a publish)."""

    full: StrictBool = False
    """Re-read and re-chunk every note (embeddings are reused)."""
    prune: StrictBool = False
    """Drop the notes no longer tracked even when they are most of the index (else they are kept, and the report
    says so)."""
    only: frozenset[str] | None = None
    """Sync just these notes (workspace-relative POSIX paths) without a folder scan (a saved note)."""
    encryption: Literal["encrypt", "decrypt"] | None = None
    """Convert the whole store in place (``botbin encrypt`` / ``decrypt``)."""


EVERY_CHANGE = SyncRequest()
"""The plain sync: every changed note, nothing converted, nothing pruned."""


class ContextRequest(WireModel):
    """An agent's context for a task within a token budget (``botbin context``, LSP ``botbin/context``, MCP
    ``get_context``, the OpenClaw ``assemble`` op)."""

    query: str
    """The task or question at hand."""
    budget_tokens: StrictInt = DEFAULT_BUDGET_TOKENS
    """The most tokens the context may use (WordPiece tokens of all-MiniLM-L6-v2), positive."""
    max_chars: StrictInt | None = Field(default=None, ge=1)
    """Also at most this many characters (for a host that counts characters)."""

    @field_validator("budget_tokens", mode="before")
    @classmethod
    def _budget(cls, value: object) -> object:
        _raise(check_budget(value))
        return value


#: How the JSON surfaces (LSP params, Recall Studio's bodies) name each field in a message: their camelCase keys.
JSON_NAMES = {
    "kind": "filters.kind",
    "date_from": "filters.dateFrom",
    "date_to": "filters.dateTo",
    "best_per_note": "bestPerNote",
    "per_note": "perNote",
    "show_all": "showAll",
    "budget_tokens": "budgetTokens",
}


def problem(exc: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """The first mistake of ``exc`` as one line: the argument (dotted field path, each part renamed by ``names``:
    a surface's own spelling, e.g. ``{"date_to": "--until"}``), and the reason; "(and N more)" when there are
    several. A rule of this module (``check_k``, a date) gives its own message, which names the argument."""
    first = exc.errors()[0]
    context = first.get("ctx") or {}
    own = context.get("error")
    extra = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    parts = [str(p) for p in first["loc"]]
    if isinstance(own, ValueError):  # our rule: its message names the argument by its field name
        field, _, rest = str(own).partition(" ")
        return f"{(names or {}).get(field, field)} {rest}{extra}"
    where = ".".join((names or {}).get(p, p) for p in parts) or "the request"
    return f"{where}: {first['msg']}{extra}"
