"""What a valid setting is: globs that stay inside the workspace, paths written the POSIX way, and the range of
every number (config.py reads the settings; this module only judges values)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def check_ranges(values: dict[str, Any]) -> dict[str, str]:
    """Return {key: reason} for values of the right type but out of range."""
    bad: dict[str, str] = {}
    if not 0.0 <= values["alpha"] <= 1.0:
        bad["alpha"] = "must be between 0 and 1"
    for key in ("recency_weight", "scope_weight"):
        if not 0.0 <= values[key] <= 1.0:
            bad[key] = "must be between 0 and 1"
    if (
        0 <= values["recency_weight"] <= 1
        and 0 <= values["scope_weight"] <= 1
        and values["recency_weight"] + values["scope_weight"] > 1.0
    ):
        bad["scope_weight"] = "recency_weight + scope_weight must be at most 1 (the rest weighs similarity)"
    for key in ("daily_half_life_h", "durable_half_life_h"):
        if values[key] <= 0:
            bad[key] = "must be positive"
    for key in ("top_k", "target_tokens", "batch_size", "max_note_bytes", "rerank_top_n", "rerank_budget_ms"):
        if values[key] <= 0:
            bad[key] = "must be positive"
    for key in (
        "overlap_tokens",
        "min_tokens",
        "lock_timeout_s",
        "debounce_ms",
        "max_hits_per_note",
        "note_weight",
        "neighbour_weight",
    ):
        if values[key] < 0:
            bad[key] = "must not be negative"
    if values["target_tokens"] > 0 and values["overlap_tokens"] * 2 >= values["target_tokens"]:
        bad["overlap_tokens"] = "must be under half of target_tokens"
    for key, low, high in (("kdf_time_cost", 1, 16), ("kdf_parallelism", 1, 16), ("kdf_memory_kib", 8192, 1 << 20)):
        if not low <= values[key] <= high:
            bad[key] = f"must be between {low} and {high}"
    for key in (
        "decay_weight",
        "prune_threshold",
        "consolidate_duplicate_cosine",
        "distill_min_centroid",
        "distill_min_coverage",
        "drift_cosine",
        "duplicate_block_cosine",
        "admission_threshold",
    ):
        if not 0.0 <= values[key] <= 1.0:
            bad[key] = "must be between 0 and 1"
    for key in ("decay_half_life_days", "turn_buffer_size", "consolidate_min_reinforcement"):
        if values[key] <= 0:
            bad[key] = "must be positive"
    if values["reinforcement_stretch"] < 0:
        bad["reinforcement_stretch"] = "must not be negative"
    endpoint = values["distill_endpoint"]
    if endpoint is not None and not re.match(r"https?://", endpoint):
        bad["distill_endpoint"] = "must be an http:// or https:// URL"
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
    if values["backend"] not in ("embedded", "postgres"):
        bad["backend"] = 'must be "embedded" or "postgres"'
    elif values["backend"] == "postgres" and not values["postgres_url"]:
        bad["backend"] = "postgres needs postgres_url (or BOTBIN_POSTGRES_URL)"
    for key in ("postgres_ef_search", "postgres_timeout_s"):
        if values[key] <= 0:
            bad[key] = "must be positive"
    out = Path(values["output_dir"])
    if out.is_absolute() or ".." in out.parts or out == Path("."):
        bad["output_dir"] = "must be a folder inside the workspace"
    for key in WORKSPACE_PATH_KEYS:  # checked last: its reason is the one to show
        if (reason := windows_path_reason(values[key])) is not None:
            bad[key] = reason
    for key in ("model", "rerank_model"):
        folder = values[key]
        if folder is not None and os.sep == "/" and (reason := windows_path_reason(folder, relative=False)) is not None:
            bad[key] = reason
    return bad
