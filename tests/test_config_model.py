"""The settings model (config_model.py, config_experimental.py): each setting declared once with its bounds and
description; the research knobs under ``[experimental]`` in botbin.toml, an older flat file still read."""

from __future__ import annotations

from pathlib import Path

import pytest

from botbin.config import CONFIG_FILE, DEFAULTS, EXPERIMENTAL_KEYS, FIELDS, Settings, load_settings
from botbin.config_model import SECTIONS
from botbin.config_rules import field_bounds


def load(ws: Path, toml: str, env: dict[str, str] | None = None) -> tuple[Settings, tuple[str, ...]]:
    (ws / CONFIG_FILE).write_text(toml, encoding="utf-8")
    loaded = load_settings(ws, env=env or {})
    return loaded.settings, loaded.warnings


def test_every_setting_is_in_exactly_one_section_with_a_description() -> None:
    keys = [key for _, section in SECTIONS for key in section.model_fields]
    assert len(keys) == len(set(keys))
    assert sorted([*keys, *EXPERIMENTAL_KEYS]) == sorted(FIELDS)
    for key, field in FIELDS.items():
        assert field.description and not field.description.endswith("."), key


def test_the_experimental_table_sets_research_knobs_without_a_warning(tmp_path: Path) -> None:
    settings, warnings = load(tmp_path, "alpha = 0.5\n\n[experimental]\nnote_weight = 0.25\ndrift_cosine = 0.3\n")
    assert (settings.alpha, settings.note_weight, settings.drift_cosine) == (0.5, 0.25, 0.3)
    assert warnings == ()


def test_the_experimental_table_inside_a_botbin_table(tmp_path: Path) -> None:
    settings, warnings = load(tmp_path, "[botbin]\ntop_k = 4\n\n[botbin.experimental]\nneighbour_weight = 0\n")
    assert (settings.top_k, settings.neighbour_weight) == (4, 0.0)
    assert warnings == ()


def test_an_older_file_with_a_research_knob_at_the_top_still_applies_it_and_says_where_it_goes(
    tmp_path: Path,
) -> None:
    settings, warnings = load(tmp_path, "note_weight = 0.2\ntop_k = 3\n")
    assert (settings.note_weight, settings.top_k) == (0.2, 3)
    assert warnings == (
        f"{tmp_path / CONFIG_FILE}: setting 'note_weight' is experimental now: move it under [experimental] "
        "(it still applies)",
    )


def test_a_user_setting_under_experimental_still_applies_with_a_warning(tmp_path: Path) -> None:
    settings, warnings = load(tmp_path, "[experimental]\ntop_k = 3\n")
    assert settings.top_k == 3
    [warning] = warnings
    assert warning.startswith(f"{tmp_path / CONFIG_FILE}: setting 'top_k' is not experimental")


def test_experimental_that_is_not_a_table_is_named_and_the_rest_applies(tmp_path: Path) -> None:
    settings, warnings = load(tmp_path, "experimental = 3\ntop_k = 3\n")
    assert settings.top_k == 3
    assert warnings == (f"{tmp_path / CONFIG_FILE}: 'experimental' is not a table; ignored",)


def test_a_bad_experimental_value_falls_back_naming_the_file_and_key(tmp_path: Path) -> None:
    settings, warnings = load(tmp_path, "[experimental]\ndecay_weight = 3\n")
    assert settings.decay_weight == DEFAULTS.decay_weight
    assert warnings == (
        f"{tmp_path / CONFIG_FILE}: setting 'decay_weight' = 3.0 ignored (must be between 0 and 1); using the default",
    )


def test_research_knobs_keep_their_environment_variables(tmp_path: Path) -> None:
    settings, warnings = load(tmp_path, "", env={"BOTBIN_NOTE_WEIGHT": "0", "BOTBIN_ADMISSION_THRESHOLD": "0.5"})
    assert (settings.note_weight, settings.admission_threshold) == (0.0, 0.5)
    assert warnings == ()


BOUNDED = sorted(key for key, field in FIELDS.items() if field_bounds(field) != (None, False, None))


@pytest.mark.parametrize("key", BOUNDED)
def test_every_bound_of_the_model_is_enforced_on_load(tmp_path: Path, key: str) -> None:
    """A value just outside a field's bound (below its low one, else above its high one) falls back to the default
    with a warning naming the file, the key and the bound."""
    low, strict, high = field_bounds(FIELDS[key])
    bad = (low if strict else low - 1) if low is not None else (high or 0) + 1
    table = "[experimental]\n" if key in EXPERIMENTAL_KEYS else ""
    settings, warnings = load(tmp_path, f"{table}{key} = {bad!r}\n")
    assert getattr(settings, key) == getattr(DEFAULTS, key)
    [warning] = warnings
    assert warning.startswith(f"{tmp_path / CONFIG_FILE}: setting '{key}' = ")
    assert "(must " in warning and warning.endswith("using the default")


def test_a_setting_can_not_be_changed_nor_made_with_an_unknown_key() -> None:
    with pytest.raises(AttributeError):
        DEFAULTS.top_k = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="top_kk"):
        Settings(top_kk=3)  # type: ignore[call-arg]


def test_the_largest_kdf_settings_make_a_store_the_reader_opens() -> None:
    """The kdf_* settings' upper bounds are the reader's limits (one value): a store made with any valid setting
    can be read back."""
    from botbin.crypto.cipher import KdfParams

    highest = [field_bounds(FIELDS[key])[2] for key in ("kdf_time_cost", "kdf_memory_kib", "kdf_parallelism")]
    time_cost, memory_kib, parallelism = (int(v or 0) for v in highest)
    assert KdfParams(time_cost, memory_kib, parallelism).check() is None
    assert KdfParams(time_cost + 1, memory_kib, parallelism).check() is not None
