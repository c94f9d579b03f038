"""Conversation turns: one JSON object per line (JSONL) -> Turn, with a clear message for every bad line.

Each line is an object with ``role`` (who speaks: ``user``, ``assistant`` or a name) and ``content`` (a string,
or a list of ``{"type": "text", "text": ...}`` parts), and optionally ``timestamp`` (ISO 8601, Unix seconds, or
LoCoMo's ``1:56 pm on 8 May, 2023``), ``session`` (string or number), ``user`` (whose soul file the turn goes
to) and ``name`` (the speaker's display name, else the role). A bad line is reported (file, 1-based line,
reason) and skipped; the rest of the file goes on. A bad timestamp keeps the turn, without a timestamp.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from botbin.errors import BotbinError

#: The user of a turn that names none (and no ``--user`` was given).
DEFAULT_USER = "user"
#: Roles of the user's own turns (the user's directives are rules; gate.py).
USER_ROLES = frozenset({"user", "human"})
#: Timestamps outside these years are treated as mistakes (a millisecond value read as seconds, say).
_YEARS = (1970, 2200)


@dataclass(frozen=True)
class Turn:
    """One utterance of a conversation."""

    role: str
    """Who speaks: ``user``, ``assistant``, ``system``, ``tool`` or a person's name (stripped, never empty)."""
    content: str
    """What was said (never empty or blank)."""
    user: str = DEFAULT_USER
    """Whose memory this turn belongs to: it picks the soul file."""
    session: str | None = None
    """Conversation session id, if known."""
    timestamp: datetime | None = None
    """When it was said, if known (timezone-aware when the source says so)."""
    name: str | None = None
    """The speaker's display name, if it differs from the role."""
    line: int | None = None
    """1-based line of the JSONL file it came from (None for turns from the MCP tool)."""

    @property
    def speaker(self) -> str:
        """The label written before the turn's words in the soul file: ``name``, else the user's name for the
        user's own turn (role ``user`` or ``human`` of a ``user`` the host named), else the role."""
        if self.name:
            return self.name
        mine = self.role.casefold() in USER_ROLES and self.user != DEFAULT_USER
        return self.user if mine else self.role


@dataclass(frozen=True)
class LineProblem:
    """Why a line of a JSONL file was skipped, or what was dropped from it."""

    path: str
    """The file, as given."""
    line: int
    """1-based line number."""
    reason: str
    skipped: bool = True
    """True when the whole line was skipped; False when the turn was kept (e.g. without its timestamp)."""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}" + ("" if self.skipped else " (turn kept)")


class TurnError(BotbinError, ValueError):
    """A turn object that cannot be used; the message names the field."""


def parse_timestamp(value: Any) -> datetime:
    """ISO 8601 text (``Z`` allowed), Unix seconds, or LoCoMo's ``1:56 pm on 8 May, 2023`` -> datetime.

    Raises TurnError for anything else, or a date before 1970 or after 2200.
    """
    if isinstance(value, bool) or value is None:
        raise TurnError(f"timestamp {value!r} is not a date")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise TurnError(f"timestamp {value!r} is not a number of seconds")
        try:
            when = datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise TurnError(f"timestamp {value!r} is out of range") from exc
    elif isinstance(value, str):
        when = _parse_text_date(value.strip())
    else:
        raise TurnError(f"timestamp must be a string or a number, not {type(value).__name__}")
    if not _YEARS[0] <= when.year <= _YEARS[1]:
        raise TurnError(f"timestamp {value!r} is out of range ({_YEARS[0]}-{_YEARS[1]})")
    return when


def _parse_text_date(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    try:  # LoCoMo: "1:56 pm on 8 May, 2023"
        return datetime.strptime(" ".join(text.replace(",", " ").split()).upper(), "%I:%M %p ON %d %B %Y")
    except ValueError:
        raise TurnError(f"timestamp {text[:60]!r} is not ISO 8601 (e.g. 2026-05-08T14:30:00Z)") from None


def _content(value: Any) -> str:
    if isinstance(value, list):  # chat API style: [{"type": "text", "text": "..."}, ...]
        parts = [p.get("text") for p in value if isinstance(p, dict) and p.get("type", "text") == "text"]
        value = "\n".join(p for p in parts if isinstance(p, str))
    if not isinstance(value, str):
        raise TurnError("'content' must be a string" if value is not None else "missing 'content'")
    if not value.strip():
        raise TurnError("'content' is empty")
    if "\x00" in value:
        raise TurnError("'content' holds a NUL character")
    return value


def _label(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise TurnError(f"'{key}' must be a string or a number, not {type(value).__name__}")
    if isinstance(value, str) and "\x00" in value:  # it is written into a soul file, which a NUL makes binary
        raise TurnError(f"'{key}' holds a NUL character")
    return str(value).strip()


def turn_from_object(obj: Any, default_user: str | None = None, line: int | None = None) -> tuple[Turn, str | None]:
    """A Turn from one decoded JSON value, and a note about a dropped bad timestamp (else None).

    ``default_user`` is the user of an object without one (else DEFAULT_USER). Raises TurnError naming
    the bad or missing field.
    """
    if not isinstance(obj, dict):
        raise TurnError(f"expected a JSON object, got {type(obj).__name__}")
    role = obj.get("role")
    if not isinstance(role, str) or not role.strip():
        raise TurnError("missing 'role'" if role is None else "'role' must be a non-empty string")
    if "\x00" in role:
        raise TurnError("'role' holds a NUL character")
    content = _content(obj.get("content"))
    user = _label(obj, "user") or default_user or DEFAULT_USER
    session, name = _label(obj, "session"), _label(obj, "name")
    timestamp, note = None, None
    if obj.get("timestamp") not in (None, ""):
        try:
            timestamp = parse_timestamp(obj["timestamp"])
        except TurnError as exc:
            note = str(exc)
    return Turn(role.strip(), content, user, session, timestamp, name, line), note


def read_turns(path: Path, default_user: str | None = None) -> Iterator[Turn | LineProblem]:
    """The turns of JSONL file ``path`` in order, with a LineProblem for each bad line (which is skipped);
    a turn kept without its bad timestamp comes right after a LineProblem with ``skipped=False``.

    Blank lines are ignored; a UTF-8 byte order mark is allowed; a line that is not UTF-8 or not JSON is a
    problem, not an error. An empty file yields one LineProblem (line 1). Raises OSError if the file cannot
    be opened or read.
    """
    shown = str(path)
    seen = False
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            seen = True
            yield from _parse_line(raw, shown, number, default_user)
    if not seen:
        yield LineProblem(shown, 1, "empty file: no turns")


def _parse_line(raw: bytes, path: str, number: int, default_user: str | None) -> list[Turn | LineProblem]:
    """[Turn], [LineProblem] for a skipped line, or [LineProblem (kept), Turn] for a turn that lost a field."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [LineProblem(path, number, f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")]
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return [LineProblem(path, number, f"not JSON ({exc.msg} at column {exc.colno})")]
    except RecursionError:
        return [LineProblem(path, number, "not JSON (nested too deeply)")]
    try:
        turn, note = turn_from_object(obj, default_user, number)
    except TurnError as exc:
        return [LineProblem(path, number, str(exc))]
    return [turn] if note is None else [LineProblem(path, number, note, skipped=False), turn]
