"""Tests for botbin.config: defaults < botbin.toml < BOTBIN_* < overrides, and bad values fall back with a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from botbin.config import (
    CONFIG_FILE,
    DEFAULT_INCLUDE,
    VAULT_INCLUDE,
    LoadedSettings,
    Settings,
    load_settings,
)


def env_source(key: str) -> str:
    return f"environment variable BOTBIN_{key.upper()}"


def load(
    ws: Path, toml: str | None = None, env: dict[str, str] | None = None, overrides: dict[str, object] | None = None
) -> LoadedSettings:
    if toml is not None:
        (ws / CONFIG_FILE).write_text(toml, encoding="utf-8")
    return load_settings(ws, overrides=overrides, env=env or {})


def one_warning(loaded: LoadedSettings) -> str:
    assert len(loaded.warnings) == 1, loaded.warnings
    return loaded.warnings[0]


def test_defaults(tmp_path: Path) -> None:
    loaded = load(tmp_path)
    assert loaded == LoadedSettings(Settings(), ())
    s = loaded.settings
    assert s.include == DEFAULT_INCLUDE == ("MEMORY.md", "AGENTS.md", "CLAUDE.md", "memory/**/*.md")
    assert s.exclude == ()
    assert s.output_dir == "memory/aifbin"
    assert (s.alpha, s.top_k, s.target_tokens, s.overlap_tokens, s.min_tokens) == (0.7, 10, 256, 32, 50)
    assert s.model is None and s.vault is False and s.compress is False
    assert s.tracked_globs == DEFAULT_INCLUDE


def test_flat_toml(tmp_path: Path) -> None:
    s = load(
        tmp_path,
        'alpha = 0.5\ntop_k = 3\ninclude = ["notes/**/*.md"]\nexclude = ["notes/private/**"]\n'
        'compress = true\nlock_timeout_s = 2\nmodel = "models/mini"\n',
    ).settings
    assert (s.alpha, s.top_k, s.include, s.exclude, s.compress) == (
        0.5,
        3,
        ("notes/**/*.md",),
        ("notes/private/**",),
        True,
    )
    assert s.lock_timeout_s == 2.0 and isinstance(s.lock_timeout_s, float)
    assert s.model == "models/mini"


def test_botbin_table(tmp_path: Path) -> None:
    loaded = load(tmp_path, '[botbin]\nalpha = 0.25\noutput_dir = "out/aif"\n\n[tool.other]\nx = 1\n')
    assert loaded.settings.alpha == 0.25
    assert loaded.settings.output_dir == "out/aif"
    assert loaded.warnings == ()


def test_env_variables(tmp_path: Path) -> None:
    env = {
        "BOTBIN_ALPHA": "0.4",
        "BOTBIN_TOP_K": "7",
        "BOTBIN_VAULT": "yes",
        "BOTBIN_INCLUDE": "a.md, b/*.md",
        "BOTBIN_COMPRESS": "0",
        "BOTBIN_MODEL": "",
        "HOME": "/root",
        "XBOTBIN_ALPHA": "0.1",
    }
    loaded = load(tmp_path, env=env)
    s = loaded.settings
    assert (s.alpha, s.top_k, s.vault, s.include, s.compress, s.model) == (
        0.4,
        7,
        True,
        ("a.md", "b/*.md"),
        False,
        None,
    )
    assert loaded.warnings == ()


def test_unknown_env_variable_is_not_a_setting(tmp_path: Path) -> None:
    # Other BOTBIN_* variables (e.g. used by scripts) are not settings and raise no warning.
    assert load(tmp_path, env={"BOTBIN_SOMETHING_ELSE": "1"}) == LoadedSettings(Settings(), ())


def test_real_environment_is_ignored_when_env_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOTBIN_ALPHA", "0.1")
    assert load(tmp_path).settings.alpha == 0.7
    assert load_settings(tmp_path).settings.alpha == 0.1


def test_precedence_toml_env_overrides(tmp_path: Path) -> None:
    toml = "alpha = 0.1\ntop_k = 1\ntarget_tokens = 200\n"
    env = {"BOTBIN_ALPHA": "0.2", "BOTBIN_TOP_K": "2"}
    s = load(tmp_path, toml, env, overrides={"alpha": 0.3}).settings
    assert (s.alpha, s.top_k, s.target_tokens) == (0.3, 2, 200)


def test_none_overrides_are_skipped(tmp_path: Path) -> None:
    s = load(tmp_path, "top_k = 4\n", overrides={"top_k": None, "model": None}).settings
    assert s.top_k == 4


def test_override_source_is_named(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, overrides={"top_k": "many"}, env={}, overrides_source="initializationOptions")
    assert one_warning(loaded).startswith("initializationOptions: setting 'top_k'")


@pytest.mark.parametrize(
    ("toml", "key", "default"),
    [
        ("alpha = 2\n", "alpha", 0.7),
        ("alpha = -0.1\n", "alpha", 0.7),
        ("top_k = -1\n", "top_k", 10),
        ("top_k = 0\n", "top_k", 10),
        ("include = 5\n", "include", DEFAULT_INCLUDE),
        ('include = ["a.md", 3]\n', "include", DEFAULT_INCLUDE),
        ('top_k = "lots"\n', "top_k", 10),
        ('vault = "maybe"\n', "vault", False),
        ("compress = 1\n", "compress", False),
        ("min_tokens = -5\n", "min_tokens", 50),
        ("model = 3\n", "model", None),
        ('output_dir = ""\n', "output_dir", "memory/aifbin"),
    ],
)
def test_bad_toml_value_falls_back_with_warning_naming_source_and_key(
    tmp_path: Path, toml: str, key: str, default: object
) -> None:
    loaded = load(tmp_path, toml)
    assert getattr(loaded.settings, key) == default
    warning = one_warning(loaded)
    assert warning.startswith(str(tmp_path / CONFIG_FILE) + ": ")
    assert f"'{key}'" in warning


@pytest.mark.parametrize(
    ("var", "value", "key"),
    [
        ("BOTBIN_ALPHA", "2", "alpha"),
        ("BOTBIN_TOP_K", "-1", "top_k"),
        ("BOTBIN_TOP_K", "x", "top_k"),
        ("BOTBIN_VAULT", "nah", "vault"),
    ],
)
def test_bad_env_value_names_the_environment(tmp_path: Path, var: str, value: str, key: str) -> None:
    loaded = load(tmp_path, env={var: value})
    assert getattr(loaded.settings, key) == getattr(Settings(), key)
    warning = one_warning(loaded)
    assert warning.startswith(env_source(key) + ": ") and var in warning
    assert f"'{key}'" in warning


def test_bad_override_names_the_command_line(tmp_path: Path) -> None:
    loaded = load(tmp_path, overrides={"alpha": 5})
    assert loaded.settings.alpha == 0.7
    assert one_warning(loaded).startswith("command line: setting 'alpha'")


def test_bad_value_does_not_hide_other_settings(tmp_path: Path) -> None:
    loaded = load(tmp_path, "alpha = 2\ntop_k = 5\n")
    assert (loaded.settings.alpha, loaded.settings.top_k) == (0.7, 5)


def test_malformed_toml(tmp_path: Path) -> None:
    loaded = load(tmp_path, "alpha = = 2\n", env={"BOTBIN_TOP_K": "3"})
    assert loaded.settings == Settings(top_k=3)
    warning = one_warning(loaded)
    assert warning.startswith(str(tmp_path / CONFIG_FILE) + ": ")
    assert "cannot read settings" in warning


def test_toml_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_bytes(b"alpha = 0.5 # \xff\n")
    loaded = load(tmp_path)
    assert loaded.settings == Settings()
    assert one_warning(loaded).startswith(str(tmp_path / CONFIG_FILE))


def test_unknown_key(tmp_path: Path) -> None:
    loaded = load(tmp_path, "alpah = 0.5\n")
    assert loaded.settings == Settings()
    assert one_warning(loaded) == f"{tmp_path / CONFIG_FILE}: unknown setting 'alpah' ignored"


def test_unknown_override_key(tmp_path: Path) -> None:
    assert one_warning(load(tmp_path, overrides={"colour": "red"})) == "command line: unknown setting 'colour' ignored"


@pytest.mark.parametrize("output_dir", ["../x", "/abs", "a/../../x", ".", "memory/../.."])
@pytest.mark.parametrize("where", ["toml", "env", "override"])
def test_output_dir_escaping_the_workspace_is_rejected(tmp_path: Path, output_dir: str, where: str) -> None:
    if where == "toml":
        loaded = load(tmp_path, f'output_dir = "{output_dir}"\n')
    elif where == "env":
        loaded = load(tmp_path, env={"BOTBIN_OUTPUT_DIR": output_dir})
    else:
        loaded = load(tmp_path, overrides={"output_dir": output_dir})
    assert loaded.settings.output_dir == "memory/aifbin"
    warning = one_warning(loaded)
    assert "'output_dir'" in warning
    source = {"toml": str(tmp_path / CONFIG_FILE), "env": env_source("output_dir"), "override": "command line"}[where]
    assert warning.startswith(source + ": ")


def test_output_dir_inside_the_workspace_is_kept(tmp_path: Path) -> None:
    loaded = load(tmp_path, 'output_dir = "build/aif-bin"\n')
    assert loaded.settings.output_dir == "build/aif-bin"
    assert loaded.warnings == ()


def test_range_warning_names_source_and_key(tmp_path: Path) -> None:
    loaded = load(tmp_path, "alpha = 2\n", env={"BOTBIN_TOP_K": "-1"})
    assert (loaded.settings.alpha, loaded.settings.top_k) == (0.7, 10)
    assert sorted(loaded.warnings) == sorted(
        [
            f"{tmp_path / CONFIG_FILE}: setting 'alpha' = 2.0 ignored (must be between 0 and 1); using the default",
            f"{env_source('top_k')}: setting 'top_k' = -1 ignored (must be positive); using the default",
        ]
    )


def test_overlap_must_be_under_half_the_target(tmp_path: Path) -> None:
    loaded = load(tmp_path, "target_tokens = 256\noverlap_tokens = 128\n")
    assert loaded.settings.overlap_tokens == 32
    assert "'overlap_tokens'" in one_warning(loaded)


def test_fallback_values_are_consistent(tmp_path: Path) -> None:
    s = load(tmp_path, "target_tokens = 64\n").settings
    assert s.overlap_tokens * 2 < s.target_tokens


def test_fractional_integer_setting_is_reported(tmp_path: Path) -> None:
    loaded = load(tmp_path, "top_k = 2.7\n")
    assert loaded.settings.top_k == 10
    assert "'top_k'" in one_warning(loaded)


def test_vault_mode(tmp_path: Path) -> None:
    s = load(tmp_path, 'vault = true\ninclude = ["only.md"]\n').settings
    assert s.vault is True
    assert s.tracked_globs == VAULT_INCLUDE == ("**/*.md",)
    assert s.include == ("only.md",)
    assert load(tmp_path, env={"BOTBIN_VAULT": "off"}).settings.tracked_globs == ("only.md",)


@pytest.mark.parametrize(
    ("raw", "expected"), [("1", True), ("TRUE", True), (" on ", True), ("no", False), ("0", False), ("Off", False)]
)
def test_boolean_strings(tmp_path: Path, raw: str, expected: bool) -> None:
    assert load(tmp_path, env={"BOTBIN_COMPRESS": raw}).settings.compress is expected


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Settings().alpha = 0.1  # type: ignore[misc]
