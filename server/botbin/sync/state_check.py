"""What a state file and its journal lines may hold: every field read back is checked for its type and range
(no float, no boolean for a number, no integer past 64 bits, no path outside the output folder), so that a
tampered or damaged file is rebuilt from the AIF-BIN files instead of crashing or steering a sync.

``Fields`` reads one JSON object; a bad value raises ``BadValue`` naming where it is (``files['a.md'].chunks``).
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import Any

from botbin.sync.confine import note_path_problem
from botbin.sync.output_paths import mirrored

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
"""What a stat field (ns times, inodes, sizes) can be: a signed 64-bit integer."""
_MD5 = re.compile(r"[0-9a-f]{32}")
_LOG_ID = re.compile(r"[0-9a-f]{1,64}")
MAX_TEXT = 4096
"""Longest string a field may hold (a model id, an ISO time): more is damage, not data."""


class BadValue(ValueError):
    """A field read back from the state file or its journal has the wrong type or range."""

    def __init__(self, where: str, reason: str) -> None:
        self.where, self.reason = where, reason
        super().__init__(f"{where} {reason}")


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


class Fields:
    """The fields of one JSON object read back, each checked as it is taken; ``where`` names the object."""

    def __init__(self, raw: object, where: str) -> None:
        """Raises BadValue unless ``raw`` is a JSON object (a dict)."""
        if not isinstance(raw, dict):
            raise BadValue(where, f"is a {_kind(raw)}, expected an object")
        self.raw: dict[str, Any] = raw
        self.where = where

    def bad(self, name: str, reason: str) -> BadValue:
        return BadValue(f"{self.where}.{name}", reason)

    def integer(self, name: str, default: int | None = None, low: int = INT_MIN, high: int = INT_MAX) -> int:
        """An integer in [``low``, ``high``] (``default`` when absent and a default is given)."""
        if name not in self.raw and default is not None:
            return default
        value = self.raw.get(name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.bad(name, f"is a {_kind(value)}, expected an integer")
        if not low <= value <= high:
            shown = str(value) if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
            raise self.bad(name, f"is {shown}, outside {low}..{high}")
        return value

    def text(self, name: str, default: str | None = None, pattern: re.Pattern[str] | None = None) -> str:
        """A string of at most MAX_TEXT characters matching ``pattern`` when given (``default`` when absent)."""
        if name not in self.raw and default is not None:
            return default
        value = self.raw.get(name)
        if not isinstance(value, str):
            raise self.bad(name, f"is a {_kind(value)}, expected a string")
        if len(value) > MAX_TEXT or (pattern is not None and not pattern.fullmatch(value)):
            raise self.bad(name, f"is not a valid value ({value[:40]!r})")
        return value

    def md5(self, name: str) -> str:
        """32 lowercase hex digits."""
        return self.text(name, pattern=_MD5)

    def log_id(self, name: str) -> str:
        """A journal id (hex), '' when absent or empty."""
        return "" if not self.raw.get(name) else self.text(name, pattern=_LOG_ID)

    def optional_text(self, name: str) -> str | None:
        """A string, or None when absent or null."""
        return None if self.raw.get(name) is None else self.text(name)

    def flag(self, name: str) -> bool:
        """A boolean (False when absent)."""
        value = self.raw.get(name, False)
        if not isinstance(value, bool):
            raise self.bad(name, f"is a {_kind(value)}, expected true or false")
        return value

    def int_map(self, name: str) -> dict[str, int]:
        """An object of non-negative 32-bit integers (the chunker's parameters); {} when absent."""
        if name not in self.raw:
            return {}
        inner = Fields(self.raw[name], f"{self.where}.{name}")
        return {str(key): inner.integer(str(key), low=0, high=2**31 - 1) for key in inner.raw}


def note_key(rel: object, where: str) -> str:
    """``rel`` (a key of the ``files`` map) when it is a note path a scan could find; raises BadValue."""
    problem = note_path_problem(rel)
    if problem is not None:
        raise BadValue(where, problem)
    return str(rel)


def pinned_output(fields: Fields, rel: str, expected: tuple[str, ...]) -> str:
    """The entry's ``output``: one of ``expected`` (the note's mirrored path under the output folder, or the one
    it had before folders were escaped), or, when the output folder is not known (``()``), a relative path
    ending with the note's plain mirrored name and free of '..'. Raises BadValue for anything else (an absolute
    path, '../x', another note's output)."""
    output = fields.text("output")
    tails = ("/" + mirrored(rel), "/" + rel[:-3] + ".aif-bin")
    if expected:
        ok = output in expected
    else:
        ok = output.endswith(tails) and not output.startswith("/") and ".." not in output.split("/")
    if not ok:
        wanted = " or ".join(expected) or "..." + tails[0]
        raise fields.bad("output", f"is {output[:80]!r}, not this note's output ({wanted})")
    return output


_ENTRY_KEYS = ("hash", "synced_at", "chunks", "output", "size", "mtime_ns", "created_at", "output_bytes", "ino")
_ENTRY_TYPES = (str, str, int, str, int, int, str, int, int)
_SHAPES = {
    (*_ENTRY_KEYS, "output_ctime_ns"): ((*_ENTRY_TYPES, int), itemgetter(4, 5, 7, 8, 9), itemgetter(*range(9), 5, 9)),
    (*_ENTRY_KEYS, "ctime_ns", "output_ctime_ns"): (
        (*_ENTRY_TYPES, int, int),
        itemgetter(4, 5, 7, 8, 9, 10),
        itemgetter(*range(11)),
    ),
}
"""The key orders this botbin writes (``FileEntry.to_dict``, with or without ``ctime_ns``) -> each value's type,
the stat integers' places, and the values in ``FileEntry``'s field order (``ctime_ns`` from ``mtime_ns``)."""


def plain_entry(rel: str, raw: object, output_prefix: str) -> tuple[Any, ...] | None:
    """The ``FileEntry`` fields, in order, of ``raw`` (the entry of note ``rel`` read back) if it is exactly what
    this botbin writes: its keys in its order, each value of its type, ``hash`` 32 hex digits, ``chunks`` in
    0..2**31, every stat integer in -1..INT_MAX, ``output`` the note's mirrored path under ``output_prefix``
    (the output folder and '/'), ``rel`` a note path without empty, '.' or '..' parts. A cheap check for the
    10,000 entries of a big vault; None sends the entry to the full check, which names what is wrong (or
    accepts what is only unusual: a time before 1970, an entry of an older botbin, a name like ``a..b.md``)."""
    if type(raw) is not dict:
        return None
    shape = _SHAPES.get(tuple(raw))
    values = tuple(raw.values())
    if shape is None or tuple(map(type, values)) != shape[0]:
        return None
    stats = shape[1](values)
    plain = (
        0 <= values[2] < 2**31
        and min(stats) >= -1
        and max(stats) <= INT_MAX
        and values[3] == f"{output_prefix}{rel[:-3]}.aif-bin"
        and len(values[1]) + len(values[6]) <= MAX_TEXT
        and len(values[0]) == 32
        and not values[0].strip("0123456789abcdef")  # 32 lowercase hex digits (a third of the regex's time)
        and rel.endswith(".md")
        and not rel.startswith(("/", "./", "../"))
        and "//" not in rel
        and "/./" not in rel
        and "/../" not in rel
        and "\0" not in rel
    )
    return shape[2](values) if plain else None
