"""The crash tests' workspace: the obsidian-help notes plus generated ones in a temp folder, the `botbin sync`
CLI run as a subprocess, and the edits a user makes between syncs.

Every edit writes content never seen before (a counter is part of it), so no note ever returns to an
earlier version; notes are deleted or renamed only while the state file on disk owns them (see
test_crash_windows.py for the two crash windows these rules keep the random harness away from).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from botbin.sync.state import STATE_FILE
from conftest import OBSIDIAN_HELP

OUTPUT_DIR = "memory/aifbin"
CONFIG = 'include = ["**/*.md"]\n'
BOTBIN = Path(sys.executable).with_name("botbin")
#: The environment of every CLI run: no BOTBIN_* setting of the caller leaks in, and no network.
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}, "HF_HUB_OFFLINE": "1"}
WORDS = [
    "sync",
    "embed",
    "vector",
    "chunk",
    "memory",
    "note",
    "vault",
    "index",
    "search",
    "query",
    "model",
    "token",
    "heading",
    "paragraph",
    "lock",
    "crash",
    "kill",
    "write",
    "rename",
    "delete",
    "folder",
    "output",
    "state",
    "cache",
    "batch",
    "signal",
    "process",
    "disk",
    "recall",
    "context",
    "agent",
]


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def sync_cmd(ws: Path, *args: str) -> list[str]:
    """The `botbin sync --json` command line for workspace ``ws``."""
    return [str(BOTBIN), "sync", "-w", str(ws), "--json", *args]


def run_sync(
    ws: Path, *args: str, env: dict[str, str] | None = None, timeout_s: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run `botbin sync` to the end."""
    return subprocess.run(
        sync_cmd(ws, *args), capture_output=True, text=True, env=env or ENV, timeout=timeout_s, check=False
    )


def phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generated_note(rng: random.Random, title: str) -> str:
    parts = [f"# {title}\n", f"{phrase(rng, 30)}.\n"]
    for section in range(rng.randint(1, 3)):
        parts.append(f"## Part {section}\n\n{phrase(rng, rng.randint(20, 60))}.\n")
    return "\n".join(parts)


def is_user_file(ws: Path, path: Path) -> bool:
    return path.is_file() and (ws / OUTPUT_DIR) not in path.parents


def user_files(ws: Path) -> dict[str, str]:
    """MD5 of every file outside the output folder (the user's notes and config), by relative path."""
    return {p.relative_to(ws).as_posix(): md5(p.read_bytes()) for p in ws.rglob("*") if is_user_file(ws, p)}


def note_paths(ws: Path) -> list[str]:
    """Tracked notes (every .md outside the output folder), sorted as the sync engine visits them."""
    return sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*.md") if is_user_file(ws, p))


def build_vault(dest: Path, total_notes: int, seed: int) -> Path:
    """Copy the obsidian-help notes to ``dest``, add generated notes up to ``total_notes``, track every .md."""
    shutil.copytree(OBSIDIAN_HELP, dest)
    rng = random.Random(seed)
    for i in range(total_notes - len(note_paths(dest))):
        path = dest / "Generated" / f"note {i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generated_note(rng, f"Generated note {i}"), encoding="utf-8")
    (dest / "botbin.toml").write_text(CONFIG, encoding="utf-8")
    return dest


def copy_user_files(src: Path, dest: Path) -> Path:
    """A fresh workspace holding exactly the user files of ``src`` (mtimes kept), no output folder."""
    for rel in user_files(src):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, target)
    return dest


def state_on_disk(ws: Path) -> dict[str, object] | None:
    """The state file as JSON, or None when absent or unreadable."""
    try:
        raw = json.loads((ws / OUTPUT_DIR / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


@dataclass
class Mutator:
    """Edits, adds, deletes and renames notes of ``ws`` the way a user would, and remembers every version."""

    ws: Path
    rng: random.Random
    counter: int = 0
    history: dict[str, dict[str, bytes]] = field(default_factory=dict)
    """Relative path -> MD5 -> bytes of every version a note had under that path."""
    written: list[str] = field(default_factory=list)
    """Notes given new content (edited, added, renamed to) since ``take_written`` was last called."""
    held_back: int = 0
    """Notes left out of delete and rename picks because the state file did not own their output yet."""

    def __post_init__(self) -> None:
        for rel in note_paths(self.ws):
            self._remember(rel)

    def _remember(self, rel: str) -> None:
        data = (self.ws / rel).read_bytes()
        self.history.setdefault(rel, {})[md5(data)] = data
        self.written.append(rel)

    def _tick(self) -> int:
        self.counter += 1
        return self.counter

    def take_written(self) -> list[str]:
        out, self.written = sorted(set(self.written)), []
        return out

    def _pick(self, n: int, owned_only: bool) -> list[str]:
        notes = note_paths(self.ws)
        if owned_only:
            state = state_on_disk(self.ws)
            files = state.get("files") if state else None
            owned = set(files) if isinstance(files, dict) else set()
            kept = [rel for rel in notes if rel in owned]
            self.held_back += len(notes) - len(kept) if n else 0
            notes = kept
        return self.rng.sample(notes, min(n, len(notes)))

    def _append(self, rel: str, text: str) -> None:
        with (self.ws / rel).open("a", encoding="utf-8") as handle:
            handle.write(text)
        self._remember(rel)

    def text_edit(self, n: int) -> None:
        """Append a new paragraph (new text to embed) to ``n`` notes."""
        for rel in self._pick(n, owned_only=False):
            self._append(rel, f"\nEdit {self._tick()}: {phrase(self.rng, 25)}.\n")

    def blank_edit(self, n: int) -> None:
        """Append an empty line to ``n`` notes: new bytes, same chunk texts (the sync rewrites them, embeds nothing)."""
        for rel in self._pick(n, owned_only=False):
            self._append(rel, "\n")

    def add(self, n: int) -> None:
        for _ in range(n):
            k = self._tick()
            rel = f"Added/new {k:04d}.md"
            (self.ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.ws / rel).write_text(generated_note(self.rng, f"Added note {k}"), encoding="utf-8")
            self._remember(rel)

    def delete(self, n: int) -> None:
        for rel in self._pick(n, owned_only=True):
            (self.ws / rel).unlink()

    def rename(self, n: int, keep_name: bool = True) -> None:
        """Move ``n`` notes to a new folder (``keep_name``: the title, hence every chunk, stays the same and
        nothing is embedded) or give them a new file name (a new title: their chunks are embedded again)."""
        for rel in self._pick(n, owned_only=True):
            k = self._tick()
            new = f"Moved {k}/{rel.rsplit('/', 1)[-1]}" if keep_name else rel[:-3] + f" r{k}.md"
            (self.ws / new).parent.mkdir(parents=True, exist_ok=True)
            os.rename(self.ws / rel, self.ws / new)
            self._remember(new)
