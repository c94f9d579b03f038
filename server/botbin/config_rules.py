"""What a valid setting is: globs that stay inside the workspace, paths written the POSIX way, each number within
its field's bounds (config_model.py declares them) and the rules between keys (config.py reads the settings; this
module only judges values)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from annotated_types import Ge, Gt, Le
from pydantic.fields import FieldInfo
from wcmatch import glob as wglob


def unsafe_glob_reason(pattern: str) -> str | None:
    """Why an include/exclude glob could reach outside the workspace (absolute, or a '..' segment); None if safe."""
    posix = pattern.replace("\\", "/")
    if posix.startswith("/") or re.match(r"[A-Za-z]:/", posix):
        return "an absolute glob; globs are relative to the workspace"
    if ".." in posix.split("/"):
        return "a '..' segment would leave the workspace"
    if "\\" in pattern:
        return f"a backslash is not a folder separator here; write {posix!r}"
    return None


def _names_instruction_note(rel: str, instruction_notes: tuple[str, ...]) -> bool:
    """True when an ``instruction_notes`` glob names note ``rel`` (any case, as directives/partition.py reads them)."""
    flags = wglob.GLOBSTAR | wglob.IGNORECASE | wglob.DOTGLOB | wglob.NEGATE
    return bool(instruction_notes) and wglob.globmatch(rel, list(instruction_notes), flags=flags)


def path_glob(pattern: str) -> Callable[[str], bool]:
    """A test of relative POSIX paths against a user's glob, as every botbin surface reads one: ``**`` spans
    folders, ``*`` and ``?`` stay inside one (``memory/*.md`` does not match ``memory/a/b.md``)."""
    matcher = wglob.compile([pattern], flags=wglob.GLOBSTAR)
    return lambda path: bool(matcher.match(path))


#: The ``roots_note`` setting's default.
DEFAULT_ROOTS_NOTE = "memory/roots.md"
#: Settings that name a path inside the workspace (POSIX, relative).
WORKSPACE_PATH_KEYS = ("output_dir", "roots_note", "soul_dir")


def windows_path_reason(value: str, relative: bool = True) -> str | None:
    """Why a path setting written the Windows way (backslashes, a drive letter, a UNC share) is refused:
    on POSIX it would name one folder with backslashes in its name, or a folder called "C:". None if fine.
    ``relative``: the path must stay inside the workspace (the hint then suggests the '/' spelling)."""
    drive = re.match(r"[A-Za-z]:", value) is not None
    if not drive and "\\" not in value:
        return None
    if drive or value.startswith("\\\\"):
        where = "a path relative to the workspace, with '/'" if relative else "a POSIX path"
        return f"a Windows drive or share path; write {where}"
    return f"a Windows-style path with backslashes; write {value.replace(chr(92), '/')!r}"


def safe_globs(globs: tuple[str, ...]) -> tuple[str, ...]:
    """``globs`` without those unsafe_glob_reason rejects."""
    return tuple(g for g in globs if unsafe_glob_reason(g) is None)


def number_text(value: float) -> str:
    """A bound as people write it: ``1`` for 1.0, ``1048576`` for 1 << 20, ``0.5``."""
    return str(int(value)) if float(value).is_integer() else str(value)


def field_bounds(field: FieldInfo) -> tuple[float | None, bool, float | None]:
    """``(low, strict, high)`` of a field's ``ge``/``gt``/``le`` (config_model.py); ``strict``: the low bound is
    ``gt`` (the value must be over it); None where the field has no such bound."""
    low: float | None = None
    high: float | None = None
    strict = False
    for bound in field.metadata:
        if isinstance(bound, Ge):
            low = float(bound.ge)  # type: ignore[arg-type]
        elif isinstance(bound, Gt):
            low, strict = float(bound.gt), True  # type: ignore[arg-type]
        elif isinstance(bound, Le):
            high = float(bound.le)  # type: ignore[arg-type]
    return low, strict, high


def bound_reason(field: FieldInfo, value: float) -> str | None:
    """Why ``value`` breaks the bounds of its field, in the words a warning uses ("must be between 0 and 1", "must
    be positive", "must not be negative"); None when within them."""
    low, strict, high = field_bounds(field)
    below = low is not None and (value <= low if strict else value < low)
    if not below and (high is None or value <= high):
        return None
    if low is not None and high is not None and not strict:
        return f"must be between {number_text(low)} and {number_text(high)}"
    if not below and high is not None:
        return f"must be at most {number_text(high)}"
    if low == 0:
        return "must be positive" if strict else "must not be negative"
    return f"must be {'over' if strict else 'at least'} {number_text(low or 0)}"


def check_ranges(values: dict[str, Any], fields: Mapping[str, FieldInfo]) -> dict[str, str]:
    """Return {key: reason} for values of the right type but out of range: each field's own bounds, then the rules
    between keys (a later rule's reason wins)."""
    bad: dict[str, str] = {}
    for key, field in fields.items():
        if isinstance(values[key], int | float) and (reason := bound_reason(field, values[key])) is not None:
            bad[key] = reason
    if (
        "recency_weight" not in bad
        and "scope_weight" not in bad
        and values["recency_weight"] + values["scope_weight"] > 1.0
    ):
        bad["scope_weight"] = "recency_weight + scope_weight must be at most 1 (the rest weighs similarity)"
    if values["target_tokens"] > 0 and values["overlap_tokens"] * 2 >= values["target_tokens"]:
        bad["overlap_tokens"] = "must be under half of target_tokens"
    endpoint = values["distill_endpoint"]
    if endpoint is not None and not re.match(r"https?://", endpoint):
        bad["distill_endpoint"] = "must be an http:// or https:// URL"
    bad.update(_path_reasons(values))
    if values["backend"] not in ("embedded", "postgres"):
        bad["backend"] = 'must be "embedded" or "postgres"'
    elif values["backend"] == "postgres" and not values["postgres_url"]:
        bad["backend"] = "postgres needs postgres_url (or BOTBIN_POSTGRES_URL)"
    for key in WORKSPACE_PATH_KEYS:  # checked last: its reason is the one to show
        if (reason := windows_path_reason(values[key])) is not None:
            bad[key] = reason
    for key in ("model", "rerank_model"):
        folder = values[key]
        if folder is not None and os.sep == "/" and (reason := windows_path_reason(folder, relative=False)) is not None:
            bad[key] = reason
    return bad


def _path_reasons(values: dict[str, Any]) -> dict[str, str]:
    """Why ``roots_note``, ``soul_dir`` or ``output_dir`` is not a path inside the workspace of the right kind."""
    bad: dict[str, str] = {}
    for key in ("roots_note", "soul_dir"):
        rel = Path(values[key])
        if rel.is_absolute() or ".." in rel.parts or rel == Path("."):
            bad[key] = "must be a path inside the workspace"
    if not values["roots_note"].endswith(".md"):
        bad["roots_note"] = "must be a .md note"
    elif values["roots_note"] != DEFAULT_ROOTS_NOTE and _names_instruction_note(
        values["roots_note"], values["instruction_notes"]
    ):  # the default under a broad glob ("memory/**") stays: botbin's own notes are never instructions anyway
        bad["roots_note"] = "is an instruction note (instruction_notes); botbin's roots are memory, never rules"
    out = Path(values["output_dir"])
    if out.is_absolute() or ".." in out.parts or out == Path("."):
        bad["output_dir"] = "must be a folder inside the workspace"
    return bad
