"""YAML frontmatter -> metadata: safe load, every key a string, dates as ISO strings, tags and aliases."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from botbin.parsing.bounded_yaml import MAX_DEPTH, BaseLoader, YamlBoundsError, bounded_load

_DATE_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")


@dataclass(frozen=True)
class FrontMatter:
    """Metadata of one note, from its YAML frontmatter (never embedded as body text)."""

    data: dict[str, Any] = field(default_factory=dict)
    """The whole frontmatter as plain data: string keys; dates as ISO 8601 strings."""
    tags: tuple[str, ...] = ()
    """Tags from ``tags``/``tag`` (leading '#' removed), plus inline #tags from the body."""
    aliases: tuple[str, ...] = ()
    """Alternative names from ``aliases``/``alias``."""
    title: str | None = None
    """The ``title`` key, if it is a string."""
    date: str | None = None
    """The note's date (``date`` or ``created`` key, else a YYYY-MM-DD in the file name), ISO 8601."""
    warnings: tuple[str, ...] = ()
    """Problems found (malformed YAML, not a mapping), each naming the file and line."""


#: MessagePack integers are 64-bit; larger YAML integers are kept as strings.
_INT_RANGE = (-(2**63), 2**64 - 1)
#: Deeper YAML nesting (or a self-referencing alias) is cut off and shown as a string.
_MAX_DEPTH = MAX_DEPTH


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value: str) -> str:
    """``value`` with lone surrogates (from a YAML escape such as ``"\\ud800"``) as U+FFFD: UTF-8 cannot hold them,
    so MessagePack and the tokenizer would fail on them. An escaped surrogate pair becomes its character."""
    if _SURROGATE.search(value) is None:
        return value
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def to_plain(value: Any, _depth: int = 0) -> Any:
    """Make YAML data MessagePack- and JSON-safe: string keys, ISO dates, lists for sequences, valid UTF-8.

    Integers outside 64 bits become strings; nesting deeper than 32 (a self-referencing alias such as
    ``&x [*x]`` is infinitely deep) is cut off as the string "…"; lone surrogates become U+FFFD.
    """
    if _depth > _MAX_DEPTH:
        return "…"
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {
            _text(k if isinstance(k, str) else str(to_plain(k, _depth + 1))): to_plain(v, _depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [to_plain(v, _depth + 1) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not _INT_RANGE[0] <= value <= _INT_RANGE[1]:
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _as_written(resolved: Any, raw: Any, _depth: int = 0) -> list[str]:
    """The scalars of a YAML value as the user wrote them, flattened in order.

    ``resolved`` is the value from the safe loader (YAML 1.1: ``yes`` is True, ``2024-01-01`` a date,
    ``1.10`` the float 1.1, ``010`` the int 8); ``raw`` the same node from the base loader, where every
    scalar is its text. A null (``~``, ``null``, nothing) is left out; nested lists are flattened; a
    mapping gives its keys (``tags: {a: , b: }``)."""
    if resolved is None or _depth > _MAX_DEPTH:
        return []
    if isinstance(resolved, list) and isinstance(raw, list) and len(raw) == len(resolved):
        return [s for r, w in zip(resolved, raw, strict=True) for s in _as_written(r, w, _depth + 1)]
    if isinstance(resolved, dict) and isinstance(raw, dict):
        return [str(k) for k in raw]
    if isinstance(raw, str):
        return [_text(raw)]
    return [str(to_plain(resolved))]


def _names(values: list[str], separator: str | None) -> tuple[str, ...]:
    """Names from the written scalars of a key, each split on the ``separator`` regex (None: not split),
    '#' removed."""
    parts = (p for v in values for p in (re.split(separator, v) if separator else [v]))
    names = (part.strip().lstrip("#").strip() for part in parts)
    return tuple(dict.fromkeys(n for n in names if n))


#: ``tags: #a #b`` or a ``- #a`` item: YAML reads a '#' after a space as a comment, Obsidian users mean tags.
_COMMENT_TAGS = re.compile(r"^(?:tags?:|\s*-)\s+(#[^\s#].*)$")


def _comment_tags(yaml_text: str) -> list[str]:
    """Tags written as YAML comments under the ``tags``/``tag`` key (what YAML drops as comments)."""
    found: list[str] = []
    in_tags = False
    for line in yaml_text.splitlines():
        starts = re.match(r"tags?:", line) is not None
        if starts or (in_tags and re.match(r"\s*-", line)):
            in_tags = True
            match = _COMMENT_TAGS.match(line)
            if match:
                found += [t for t in re.split(r"\s+", match.group(1)) if t.startswith("#")]
        elif line and not line[0].isspace():
            in_tags = False
    return found


def _raw(yaml_text: str) -> Any:
    """``yaml_text`` read by the base loader (every scalar its text), None if that fails."""
    try:
        return bounded_load(yaml_text, BaseLoader)
    except Exception:  # it parsed as safe YAML a moment ago; the resolved values are kept
        return None


def _written(raw: Any, data: dict[str, Any], keys: tuple[str, ...]) -> tuple[list[str], bool]:
    """The scalars of the first of ``keys`` set in ``data``, as written (``raw``: the base loader's
    mapping), and whether that value is a list."""
    key = next((k for k in keys if data.get(k) is not None), None)
    if key is None:
        return [], False
    return _as_written(data[key], raw.get(key) if isinstance(raw, dict) else None), isinstance(data[key], list)


def _note_date(data: dict[str, Any], path: str) -> str | None:
    for key in ("date", "created"):
        value = data.get(key)
        if isinstance(value, str) and _DATE_IN_NAME.match(value):
            return value
    found = _DATE_IN_NAME.search(path.rsplit("/", 1)[-1])
    return found.group(1) if found else None


def parse_frontmatter(yaml_text: str | None, path: str, first_line: int = 0) -> FrontMatter:
    """Parse the YAML between the ``---`` fences of ``path``; ``first_line`` is the opening fence (0-based).

    Never raises: malformed YAML, a non-mapping, or YAML over the bounds of ``parsing/bounded_yaml.py`` (an
    alias bomb: measured before it is expanded) gives empty metadata and a warning with the line; the body is
    still indexed, as for any frontmatter botbin cannot use.
    """
    warnings: list[str] = []
    data: dict[str, Any] = {}
    if yaml_text is not None and yaml_text.strip():
        try:
            loaded = bounded_load(yaml_text)
        except YamlBoundsError as exc:  # an alias bomb, or more data than any note's metadata needs
            warnings.append(
                f"{path}:{first_line + 1}: YAML frontmatter not loaded ({exc.reason}); metadata ignored, body indexed"
            )
            loaded = None
        except Exception as exc:
            # Not only YAMLError: PyYAML raises ValueError for impossible dates such as 2026-13-45,
            # AttributeError for "!!timestamp x", TypeError, RecursionError... All mean malformed YAML.
            mark = getattr(exc, "problem_mark", None)
            line = first_line + 2 + mark.line if mark is not None else first_line + 1
            problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
            warnings.append(f"{path}:{line}: malformed YAML frontmatter ({problem}); metadata ignored, body indexed")
            loaded = None
        if isinstance(loaded, dict):
            data = to_plain(loaded)
        elif loaded is not None:
            warnings.append(
                f"{path}:{first_line + 1}: frontmatter is a {type(loaded).__name__}, not a mapping; ignored"
            )
    title = data.get("title")
    text = yaml_text or ""
    raw = _raw(text) if any(k in data for k in ("tags", "tag", "aliases", "alias")) else None
    # A string is split (Obsidian: "a, b" or "a b"); list items are names as they stand.
    tags, listed = _written(raw, data, ("tags", "tag"))
    if "tags" in data or "tag" in data:
        tags += [t for t in _comment_tags(text) if t not in tags]
    aliases, aliases_listed = _written(raw, data, ("aliases", "alias"))
    return FrontMatter(
        data=data,
        tags=_names(tags, None if listed else r"[,\s]+"),
        aliases=_names(aliases, None if aliases_listed else r","),
        title=title if isinstance(title, str) and title.strip() else None,
        date=_note_date(data, path),
        warnings=tuple(warnings),
    )
