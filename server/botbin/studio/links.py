"""Links that open a note in the user's editor: ``vscode://file/<path>:<line>:1`` (VS Code) or
``obsidian://open?path=<path>`` (Obsidian, which opens the note, not a line). The path is always percent-encoded
after a fixed scheme, so a note named ``javascript:...`` or holding quotes stays a path."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Literal
from urllib.parse import quote

Editor = Literal["vscode", "obsidian", "none"]
#: A note's link: (workspace-relative POSIX path, 0-based line) -> URL, or None without an editor.
Link = Callable[[str, int], str | None]


def detect_editor(root: Path) -> Editor:
    """The editor a folder is most likely kept in: Obsidian when it or a folder above it is a vault (``.obsidian``),
    VS Code when it has a ``.vscode`` folder or ``code`` is on the PATH, else none."""
    for folder in (root, *root.parents):
        if (folder / ".obsidian").is_dir():
            return "obsidian"
    if (root / ".vscode").is_dir() or shutil.which("code") is not None:
        return "vscode"
    return "none"


def vscode_url(path: Path, line: int) -> str:
    """VS Code's link to 0-based ``line`` of the file at absolute ``path``."""
    posix = path.as_posix()
    return f"vscode://file{'' if posix.startswith('/') else '/'}{quote(posix, safe='/')}:{line + 1}:1"


def obsidian_url(path: Path) -> str:
    """Obsidian's link to the note at absolute ``path`` (the vault that holds it opens it)."""
    return f"obsidian://open?path={quote(path.as_posix(), safe='')}"


def linker(editor: Editor, root: Path) -> Link:
    """The Link of ``editor`` for notes of the workspace folder ``root``."""

    def link(rel: str, line: int) -> str | None:
        path = root / rel
        if editor == "vscode":
            return vscode_url(path, line)
        if editor == "obsidian":
            return obsidian_url(path)
        return None

    return link
