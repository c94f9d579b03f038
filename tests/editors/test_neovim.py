"""Neovim end to end: Debian's headless ``nvim`` (0.7.2; scripts/setup.sh installs it) with the documented
0.7-0.9 config, ``editors/nvim/botbin.lua`` loaded verbatim, against a real ``botbin lsp`` (the real model) on a
copy of examples/workspace. ``tests/editors/nvim_driver.lua`` presses ``K`` on a paragraph, asks
``workspace/symbol`` and saves a new line, then searches for it; this test checks what it saw. About 60 s."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

SNIPPET = REPO / "editors" / "nvim" / "botbin.lua"
DRIVER = Path(__file__).with_name("nvim_driver.lua")
NVIM = shutil.which("nvim")

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(NVIM is None, reason="nvim is absent (scripts/setup.sh installs Debian's neovim)"),
]


def test_the_docs_show_the_shipped_snippet_verbatim() -> None:
    docs = (REPO / "docs" / "neovim.md").read_text(encoding="utf-8")
    assert SNIPPET.read_text(encoding="utf-8").strip() in docs


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """What the driver saw in one nvim session (hover, symbols, save-then-search)."""
    workspace = tmp_path_factory.mktemp("nvim") / "notes"
    shutil.copytree(REPO / "examples" / "workspace", workspace)
    result = workspace.parent / "result.json"
    bin_dir = str(Path(sys.executable).parent)  # `botbin` of this environment, as the snippet's cmd names it
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO / "server"),
        "BOTBIN_NVIM_RESULT": str(result),
        "XDG_STATE_HOME": str(workspace.parent / "state"),  # nvim's lsp.log stays out of the home folder
    }
    command = [str(NVIM), "--headless", "--clean", "-c", f"luafile {SNIPPET}", "-c", "edit MEMORY.md"]
    command += ["-c", f"luafile {DRIVER}"]
    done = subprocess.run(command, cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
    assert result.exists(), f"nvim wrote no result (exit {done.returncode}): {done.stderr[-2000:]}"
    seen: dict[str, object] = json.loads(result.read_text(encoding="utf-8"))
    assert seen.get("error") is None, seen
    return seen


def test_the_first_index_covers_the_notes(seen: dict[str, object]) -> None:
    status = seen["status"]
    assert isinstance(status, dict)
    assert status["files"] == 16 and status["chunks"] > 0 and status["model"]


def test_k_shows_related_memories(seen: dict[str, object]) -> None:
    assert seen["mapping"] == "botbin: related memories"
    hover = str(seen["hover"])
    assert hover.startswith("**Related memories**"), hover[:300]
    assert "MEMORY.md#L" in hover or "memory/" in hover


def test_workspace_symbol_finds_the_decision(seen: dict[str, object]) -> None:
    symbols = seen["symbols"]
    assert isinstance(symbols, list)
    assert "memory/2026-11-12.md" in [s["path"] for s in symbols[:3]], symbols[:3]


def test_a_saved_line_is_found_by_search(seen: dict[str, object]) -> None:
    after = seen["after_save"]
    assert isinstance(after, list) and after, "the saved words were never found"
    assert after[0]["path"] == "MEMORY.md" and "quokka mascot" in after[0]["name"]
