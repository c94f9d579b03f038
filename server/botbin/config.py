"""Settings: defaults, then botbin.toml, then BOTBIN_* environment variables, then overrides (later wins). The one
``Settings`` model is made of the sections of config_model.py and config_experimental.py.

Invalid values never stop the work: each one falls back to its default and yields a warning that names
the source (file, variable or flag) and the reason.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, get_args, get_origin

from pydantic.fields import FieldInfo

from botbin.config_experimental import ExperimentalSettings
from botbin.config_model import (
    DAILY_NOTE_GLOBS,
    VAULT_INCLUDE,
    EncryptionSettings,
    IndexingSettings,
    MemorySettings,
    SearchSettings,
    TeamSettings,
    TrackingSettings,
)
from botbin.config_model import DEFAULT_INCLUDE as DEFAULT_INCLUDE  # re-exported
from botbin.config_model import DEFAULT_INSTRUCTION_NOTES as DEFAULT_INSTRUCTION_NOTES
from botbin.config_model import EMBED_BATCH_SIZE as EMBED_BATCH_SIZE
from botbin.config_model import KDF_MAX_MEMORY_KIB as KDF_MAX_MEMORY_KIB
from botbin.config_model import KDF_MAX_PARALLELISM as KDF_MAX_PARALLELISM
from botbin.config_model import KDF_MAX_TIME_COST as KDF_MAX_TIME_COST
from botbin.config_model import MAX_K as MAX_K
from botbin.config_model import range_text as range_text
from botbin.config_model import shown_default as shown_default
from botbin.config_rules import WORKSPACE_PATH_KEYS as WORKSPACE_PATH_KEYS  # re-exported
from botbin.config_rules import check_ranges
from botbin.config_rules import field_bounds as field_bounds
from botbin.config_rules import number_text as number_text
from botbin.config_rules import path_glob as path_glob
from botbin.config_rules import safe_globs as safe_globs
from botbin.config_rules import unsafe_glob_reason as unsafe_glob_reason
from botbin.config_rules import windows_path_reason as windows_path_reason

CONFIG_FILE = "botbin.toml"
#: The table of botbin.toml that holds the research knobs (config_experimental.py).
EXPERIMENTAL_TABLE = "experimental"
#: Folders never scanned, whatever the globs say.
ALWAYS_EXCLUDED_DIRS: frozenset[str] = frozenset({".git", ".obsidian", ".trash", "node_modules"})


class Settings(
    ExperimentalSettings,
    TeamSettings,
    MemorySettings,
    EncryptionSettings,
    IndexingSettings,
    SearchSettings,
    TrackingSettings,
):
    """Every botbin setting; the keys are the same in botbin.toml, BOTBIN_<KEY> and LSP options (the research knobs
    of ExperimentalSettings go under ``[experimental]`` in botbin.toml)."""

    @property
    def written_globs(self) -> tuple[str, ...]:
        """Globs of the notes botbin writes itself: the daily notes of ``remember``, everything under
        ``soul_dir`` (conversations) and ``roots_note`` (consolidation). They are memory, never instruction
        notes, whatever ``instruction_notes`` or their frontmatter say: what they hold came from an agent or a
        conversation, and a remembered line must never become a hard rule (directives/partition.py)."""
        return (*DAILY_NOTE_GLOBS, f"{self.soul_dir.strip('/')}/**", self.roots_note)

    @property
    def instruction_globs(self) -> tuple[str, ...]:
        """``instruction_notes``, then one ``!glob`` per ``written_globs`` (a ``!`` glob excludes): what every
        instruction-note test of this workspace is given (directives/partition.py ``is_instruction_path``)."""
        return (*self.instruction_notes, *(f"!{g}" for g in self.written_globs))

    @property
    def tracked_globs(self) -> tuple[str, ...]:
        """The include globs in force (vault mode tracks every note)."""
        return VAULT_INCLUDE if self.vault else self.include


@dataclass(frozen=True)
class LoadedSettings:
    """Settings together with the warnings raised while reading them."""

    settings: Settings
    warnings: tuple[str, ...] = field(default=())


FIELDS: Final[Mapping[str, FieldInfo]] = Settings.model_fields
#: The default settings.
DEFAULTS: Final = Settings.model_construct()
_DEFAULTS = DEFAULTS
#: Keys of the research knobs (``[experimental]`` in botbin.toml).
EXPERIMENTAL_KEYS: Final = frozenset(ExperimentalSettings.model_fields)
#: ``instruction_globs`` of the default settings.
DEFAULT_INSTRUCTION_GLOBS: tuple[str, ...] = _DEFAULTS.instruction_globs
#: What an optional text setting holds, for the warning when it holds something else.
_EXPECTED = {
    "model": "a folder path",
    "rerank_model": "a folder path",
    "namespace": "a name",
    "distill_endpoint": "a URL",
    "postgres_url": "a URL",
}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _coerce(key: str, value: Any) -> Any:
    """Convert one raw value (TOML, env string or flag) to the type of Settings.<key> (its annotation).

    Raises ValueError with the reason when it does not fit.
    """
    kind = FIELDS[key].annotation
    if get_origin(kind) is tuple:
        if isinstance(value, str):
            value = [p.strip() for p in value.split(",") if p.strip()]
        if not isinstance(value, list | tuple) or not all(isinstance(p, str) for p in value):
            raise ValueError("expected a list of glob strings")
        return tuple(value)
    if type(None) in get_args(kind):
        if value in (None, ""):
            return None
        if not isinstance(value, str):
            raise ValueError(f"expected {_EXPECTED.get(key, 'a string')}")
        return value
    if kind is bool:
        if isinstance(value, str) and value.strip().lower() in (*_TRUE, *_FALSE):
            return value.strip().lower() in _TRUE
        if not isinstance(value, bool):
            raise ValueError("expected true or false")
        return value
    if kind in (int, float) and not isinstance(value, bool):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"expected a {kind.__name__}") from None
        if kind is int:
            if not number.is_integer():
                raise ValueError("expected a whole number")
            return int(number)
        return number
    if kind is str and isinstance(value, str) and value.strip():
        return value
    raise ValueError(f"expected a {getattr(kind, '__name__', kind)}")


def _apply(
    values: dict[str, Any], raw: Mapping[str, Any], source: str, warnings: list[str], sources: dict[str, str]
) -> None:
    for key, value in raw.items():
        if key not in FIELDS:
            warnings.append(f"{source}: unknown setting '{key}' ignored")
            continue
        try:
            coerced = _coerce(key, value)
            if key in ("include", "exclude", "instruction_notes"):
                coerced = _drop_unsafe_globs(key, coerced, source, warnings)
            values[key] = coerced
            sources[key] = source
        except ValueError as exc:
            warnings.append(f"{source}: setting '{key}' = {value!r} ignored ({exc}); using the default")


def _drop_unsafe_globs(key: str, globs: tuple[str, ...], source: str, warnings: list[str]) -> tuple[str, ...]:
    """``globs`` less those that could leave the workspace, each reported; raises ValueError when an
    ``include`` is left with none (so it falls back to the default like any bad value)."""
    for glob in globs:
        if (reason := unsafe_glob_reason(glob)) is not None:
            warnings.append(f"{source}: glob {glob!r} in '{key}' ignored ({reason})")
    kept = safe_globs(globs)
    if key == "include" and globs and not kept:
        raise ValueError("no glob left inside the workspace")
    return kept


def _read_toml(path: Path, warnings: list[str]) -> dict[str, Any]:
    """The settings of botbin.toml, flat: its keys (a flat file or a ``[botbin]`` table) and those of its
    ``[experimental]`` table. A key in the wrong place still applies, with a warning naming the file and the key:
    a file written before a setting became experimental keeps working."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        warnings.append(f"{path}: cannot read settings ({exc}); using defaults")
        return {}
    # Both a flat file and a [botbin] table are accepted.
    table = data.get("botbin", data)
    if not isinstance(table, dict):
        warnings.append(f"{path}: 'botbin' is not a table; settings in this file ignored")
        return {}
    flat = {k: v for k, v in table.items() if k != EXPERIMENTAL_TABLE}
    for key in EXPERIMENTAL_KEYS.intersection(flat):
        warnings.append(
            f"{path}: setting '{key}' is experimental now: move it under [{EXPERIMENTAL_TABLE}] (it still applies)"
        )
    experimental = table.get(EXPERIMENTAL_TABLE, data.get(EXPERIMENTAL_TABLE, {}))
    if not isinstance(experimental, dict):
        warnings.append(f"{path}: '{EXPERIMENTAL_TABLE}' is not a table; ignored")
        return flat
    for key in set(experimental).intersection(FIELDS).difference(EXPERIMENTAL_KEYS):
        warnings.append(
            f"{path}: setting '{key}' is not experimental: move it out of [{EXPERIMENTAL_TABLE}] (it still applies)"
        )
    return {**flat, **experimental}


def _read_env(env: Mapping[str, str]) -> dict[str, str]:
    return {
        name[len("BOTBIN_") :].lower(): value
        for name, value in env.items()
        if name.startswith("BOTBIN_") and name[len("BOTBIN_") :].lower() in FIELDS
    }


def load_settings(
    workspace: Path,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    overrides_source: str = "command line",
) -> LoadedSettings:
    """Read settings for ``workspace``: defaults < botbin.toml < BOTBIN_* < ``overrides``.

    ``overrides`` holds values from flags or LSP initializationOptions; None values are skipped.
    Never raises for a bad value: it is replaced by its default and reported in ``warnings``.
    """
    warnings: list[str] = []
    values: dict[str, Any] = _DEFAULTS.model_dump()
    sources: dict[str, str] = {}
    toml_path = workspace / CONFIG_FILE
    _apply(values, _read_toml(toml_path, warnings), str(toml_path), warnings, sources)
    for key, value in _read_env(os.environ if env is None else env).items():
        _apply(values, {key: value}, f"environment variable BOTBIN_{key.upper()}", warnings, sources)
    _apply(values, {k: v for k, v in (overrides or {}).items() if v is not None}, overrides_source, warnings, sources)
    # Twice: overlap_tokens is checked against target_tokens, which the first pass may have reset.
    for _ in range(2):
        for key, reason in check_ranges(values, FIELDS).items():
            fallback = getattr(_DEFAULTS, key)
            if key == "overlap_tokens":  # the default overlap breaks the rule when target_tokens is small
                fallback = min(fallback, values["target_tokens"] // 4)
            used = "the default" if fallback == getattr(_DEFAULTS, key) else str(fallback)
            warnings.append(
                f"{sources.get(key, 'defaults')}: setting '{key}' = {values[key]!r} ignored ({reason}); using {used}"
            )
            values[key] = fallback
    return LoadedSettings(Settings.model_construct(**values), tuple(warnings))  # every value checked above
