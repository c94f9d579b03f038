"""Every generated file (botbin.generate.targets) is what its one Python source generates, so no value is kept in two
places: the TypeScript names and values, the hook's host types, README.md's settings, VS Code's settings. A drift is
caught, and the parts of a file that are not generated are kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from botbin.config import FIELDS
from botbin.generate import Target, readme, settings_docs, targets
from conftest import REPO


def current(target: Target) -> str:
    return (REPO / target.path).read_text(encoding="utf-8")


@pytest.mark.parametrize("target", targets(), ids=lambda t: t.path)
def test_the_checked_in_file_is_what_its_source_generates(target: Target) -> None:
    assert not target.stale(current(target)), f"{target.path}: run python scripts/gen_protocol.py"


def test_a_changed_default_in_the_readme_table_is_caught() -> None:
    [readme] = [t for t in targets() if t.path == "README.md"]
    text = current(readme)
    assert "| `top_k` | `10` |" in text
    assert readme.stale(text.replace("| `top_k` | `10` |", "| `top_k` | `12` |"))


def test_the_readme_outside_the_markers_is_kept() -> None:
    blocks = ["\n".join(readme.markers(name, source)) for name, source, _ in readme.BLOCKS]
    text = "# Title\n\nbefore\n" + "\nbetween\n".join(blocks) + "\nafter\n"
    made = readme.readme(text.replace("-->\n<!-- end", "-->\nold table\n<!-- end"))
    assert made.startswith("# Title\n\nbefore\n") and made.endswith("\nafter\n") and "\nbetween\n" in made
    assert "old table" not in made and "| `alpha` | `0.7` | 0 – 1 |" in made
    assert "`4` embedding model unavailable" in made
    with pytest.raises(ValueError, match="must enclose"):
        readme.readme("no markers\n")


def test_vscode_settings_of_the_model_are_replaced_in_place_and_the_extensions_own_kept() -> None:
    manifest = {
        "contributes": {
            "configuration": {
                "properties": {
                    "botbin.server.path": {"type": "string"},
                    "botbin.alpha": {"type": "number", "maximum": 9},
                    "botbin.noteWeight": {"type": "number"},  # a model setting no editor offers: removed
                    "botbin.hover.enabled": {"type": "boolean"},
                }
            }
        }
    }
    made = json.loads(settings_docs.vscode_manifest(json.dumps(manifest)))
    properties = made["contributes"]["configuration"]["properties"]
    names = list(properties)
    assert names[:2] == ["botbin.server.path", "botbin.alpha"] and names[-1] == "botbin.hover.enabled"
    assert {"botbin.include", "botbin.topK"} <= set(names) and "botbin.noteWeight" not in names
    assert properties["botbin.alpha"]["maximum"] == 1 and properties["botbin.topK"]["minimum"] == 1
    assert properties["botbin.server.path"] == {"type": "string"}
    assert str(FIELDS["top_k"].description)[1:] in properties["botbin.topK"]["markdownDescription"]


def test_the_cli_help_gives_each_settings_flag_its_default_and_range_from_the_model() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "server"), "PYTHONIOENCODING": "ascii"}
    run = subprocess.run(
        [sys.executable, "-m", "botbin", "search", "--help"], capture_output=True, text=True, env=env, check=True
    )
    help_text = " ".join(run.stdout.split())  # argparse wraps lines
    for key, shown in (("top_k", "10, 1 - 1000"), ("alpha", "0.7, 0 - 1"), ("output_dir", '"memory/aifbin"')):
        assert f"(the {key} setting, default {shown}" in help_text, key
    assert "4 embedding model unavailable" in help_text
