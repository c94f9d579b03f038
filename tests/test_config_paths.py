"""Issue 20, item 5: Windows-style paths in settings are refused with a warning naming the key, and never
become a folder literally named ``memory\\aifbin`` (or ``C:``) inside the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from botbin.config import CONFIG_FILE, Settings, load_settings
from botbin.service import MemoryService
from conftest import FakeEmbedder, write_notes


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("output_dir", "memory\\\\aifbin"),
        ("output_dir", "C:\\\\Users\\\\me\\\\aifbin"),
        ("output_dir", "C:/aifbin"),
        ("soul_dir", "memory\\\\soul"),
        ("roots_note", "memory\\\\roots.md"),
        ("model", "C:\\\\models\\\\mini"),
    ],
)
def test_windows_paths_in_botbin_toml_fall_back_with_a_warning_naming_the_key(
    tmp_path: Path, key: str, value: str
) -> None:
    (tmp_path / CONFIG_FILE).write_text(f'{key} = "{value}"\n', encoding="utf-8")
    loaded = load_settings(tmp_path, env={})
    assert getattr(loaded.settings, key) == getattr(Settings(), key)
    (warning,) = loaded.warnings
    assert f"setting '{key}'" in warning and "Windows" in warning and str(tmp_path / CONFIG_FILE) in warning


def test_backslash_path_suggests_the_forward_slash_spelling(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, {"output_dir": "notes\\index"}, env={}, overrides_source="LSP settings")
    assert loaded.settings.output_dir == "memory/aifbin"
    assert loaded.warnings[0].startswith("LSP settings: setting 'output_dir'") and "'notes/index'" in loaded.warnings[0]


@pytest.mark.parametrize("glob", ["memory\\**\\*.md", "notes\\*.md"])
def test_backslash_globs_are_dropped_with_a_warning(tmp_path: Path, glob: str) -> None:
    loaded = load_settings(tmp_path, {"include": ["MEMORY.md", glob], "exclude": [glob]}, env={})
    assert loaded.settings.include == ("MEMORY.md",) and loaded.settings.exclude == ()
    assert len(loaded.warnings) == 2 and all("backslash" in w for w in loaded.warnings)
    assert "'include'" in loaded.warnings[0] and "'exclude'" in loaded.warnings[1]


def test_a_windows_output_dir_creates_no_literal_folder_and_indexes_the_notes(
    tmp_path: Path, fake_embedder: FakeEmbedder
) -> None:
    root = write_notes(tmp_path / "ws", {"MEMORY.md": "# Memory\n\nAlways lint.\n", "memory/a.md": "# A\n\nHerons.\n"})
    (root / CONFIG_FILE).write_text('output_dir = "memory\\\\aifbin"\n', encoding="utf-8")
    service = MemoryService(root, embedder=fake_embedder, env={})
    report = service.sync()
    assert sorted(report.added) == ["MEMORY.md", "memory/a.md"]
    assert not [p for p in root.rglob("*") if "\\" in p.name or p.name.endswith(":")]
    assert any("output_dir" in w for w in service.warnings)
