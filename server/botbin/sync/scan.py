"""Find the tracked notes of a workspace: include/exclude globs, always-excluded folders, stat data."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from wcmatch import glob as wglob

from botbin.config import ALWAYS_EXCLUDED_DIRS, Settings
from botbin.errors import WorkspaceError

_GLOB_FLAGS = wglob.GLOBSTAR
_MAGIC = re.compile(r"[*?\[{]")


@dataclass(frozen=True)
class FileStat:
    """What the fast path of change detection compares."""

    size: int
    """Size in bytes."""
    mtime_ns: int
    """Modification time, nanoseconds since the epoch."""


@dataclass(frozen=True)
class ScanResult:
    """The tracked notes found in one scan."""

    files: dict[str, FileStat]
    """Relative POSIX path -> stat, for every tracked note."""
    unreadable_dirs: tuple[str, ...] = ()
    """Relative folders that could not be listed; notes under them are kept as they were."""
    warnings: tuple[str, ...] = ()
    """Problems found, each naming the path and the reason."""

    def covers(self, rel: str) -> bool:
        """True if ``rel`` lies under a folder that could not be read (so its absence proves nothing)."""
        return any(rel == d or rel.startswith(d.rstrip("/") + "/") or d == "" for d in self.unreadable_dirs)


def _walk_roots(globs: tuple[str, ...]) -> list[str]:
    """Folders to walk: each glob's literal leading folders ("memory/**/*.md" -> "memory")."""
    roots: set[str] = set()
    for pattern in globs:
        parts = pattern.split("/")
        literal = []
        for part in parts[:-1]:
            if _MAGIC.search(part):
                break
            literal.append(part)
        else:
            if not _MAGIC.search(parts[-1]):
                roots.add("/".join(parts[:-1]))  # a plain file path: its folder
                continue
        roots.add("/".join(literal))
    # Drop roots nested under another root.
    ordered = sorted(roots, key=len)
    kept: list[str] = []
    for root in ordered:
        if not any(root == k or k == "" or root.startswith(k + "/") for k in kept):
            kept.append(root)
    return kept


class TrackedMatcher:
    """Decides which relative paths are tracked notes; the globs are compiled once."""

    def __init__(self, settings: Settings) -> None:
        self._out = settings.output_dir.strip("/")
        self._include = wglob.compile(list(settings.tracked_globs), flags=_GLOB_FLAGS)
        self._exclude = wglob.compile(list(settings.exclude), flags=_GLOB_FLAGS) if settings.exclude else None

    def __call__(self, rel: str) -> bool:
        """True if the relative POSIX path ``rel`` is a tracked note."""
        # Only ".md" exactly: "a.md" and "a.MD" would otherwise share one output file.
        if not rel.endswith(".md") or rel.startswith(self._out + "/"):
            return False
        if any(p in ALWAYS_EXCLUDED_DIRS for p in rel.split("/")[:-1]):
            return False
        if not self._include.match(rel):
            return False
        return not (self._exclude is not None and self._exclude.match(rel))



def check_root(root: Path) -> None:
    """Raise WorkspaceError unless ``root`` is a folder that can be listed."""
    if not root.is_dir():
        raise WorkspaceError("workspace folder does not exist or is not a folder; nothing was changed", root)
    try:
        with os.scandir(root):
            pass
    except OSError as exc:
        raise WorkspaceError(f"workspace folder cannot be read ({exc.strerror}); nothing was changed", root) from exc


def scan_workspace(root: Path, settings: Settings) -> ScanResult:
    """List the tracked notes under ``root``. Raises WorkspaceError if ``root`` itself is unreadable."""
    check_root(root)
    files: dict[str, FileStat] = {}
    unreadable: list[str] = []
    warnings: list[str] = []
    out = settings.output_dir.strip("/")
    tracked = TrackedMatcher(settings)

    def on_error(exc: OSError) -> None:
        rel = Path(exc.filename).relative_to(root).as_posix() if exc.filename else "?"
        if isinstance(exc, FileNotFoundError):
            return  # a folder removed while scanning: its notes are simply gone
        unreadable.append("" if rel == "." else rel)
        warnings.append(f"{exc.filename}: folder cannot be read ({exc.strerror}); its notes are kept as they were")

    for start in _walk_roots(settings.tracked_globs):
        top = root / start if start else root
        if not top.is_dir():
            continue
        for folder, dirs, names in os.walk(top, onerror=on_error):
            rel_dir = Path(folder).relative_to(root).as_posix()
            rel_dir = "" if rel_dir == "." else rel_dir
            dirs[:] = sorted(
                d for d in dirs
                if d not in ALWAYS_EXCLUDED_DIRS and not d.startswith(".") and f"{rel_dir}/{d}".lstrip("/") != out
            )
            for name in names:
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if not tracked(rel):
                    continue
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:
                    continue  # vanished or a dangling link
                if os.path.isfile(os.path.join(folder, name)):
                    files[rel] = FileStat(st.st_size, st.st_mtime_ns)
    return ScanResult(dict(sorted(files.items())), tuple(unreadable), tuple(warnings))
