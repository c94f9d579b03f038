"""Is an indexed note still true? Which of some note paths are gone from disk or excluded by the settings
now (a stat per path and one glob match, meant for the top hits of a search, not the whole index)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from botbin.config import Settings
from botbin.sync.names import blocked_folder
from botbin.sync.scan import TrackedMatcher


@dataclass(frozen=True)
class Freshness:
    """What a freshness check found among the paths it was given (each in the order given)."""

    gone: tuple[str, ...] = ()
    """Paths whose note is no longer a file on disk (deleted or moved since the last sync)."""
    excluded: tuple[str, ...] = ()
    """Paths still on disk that the current include/exclude settings no longer track."""
    unreadable: tuple[str, ...] = ()
    """Paths that cannot be looked at (a folder's permissions deny it): kept, as the last sync left them, since a
    sync keeps them too (sync/scan.py); gone or not, nobody can tell yet."""
    blocked: tuple[str, ...] = ()
    """The folders (relative POSIX, "" the workspace) whose permissions hide the ``unreadable`` paths."""

    @property
    def dropped(self) -> frozenset[str]:
        """Every path that should not be returned."""
        return frozenset((*self.gone, *self.excluded))

    @property
    def stale(self) -> bool:
        """True if any path was dropped (the index is behind the disk or the settings)."""
        return bool(self.gone or self.excluded)

    def warning(self) -> str | None:
        """One line for a search answer naming what was dropped or could not be checked, or None."""
        kept = self._kept_warning()
        parts = [
            f"{len(names)} {word} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
            for word, names in (("deleted", self.gone), ("excluded", self.excluded))
            if names
        ]
        if not parts:
            return kept
        advice = ["run `botbin sync`"] if self.gone else []
        if self.excluded:  # often a workspace synced with --vault (or other globs) and searched without
            advice.append("excluded means not tracked by these settings: synced with --vault? search with it too")
        stale = f"the index is stale: left out {' and '.join(parts)} notes; {'; '.join(advice)}"
        return stale if kept is None else f"{stale}; {kept}"

    def _kept_warning(self) -> str | None:
        if not self.unreadable:
            return None
        folders = ", ".join(f or "the workspace folder" for f in self.blocked[:3]) + (
            ", ..." if len(self.blocked) > 3 else ""
        )
        notes = f"{', '.join(self.unreadable[:3])}{', ...' if len(self.unreadable) > 3 else ''}"
        return (
            f"folder {folders} cannot be read (permission denied): its notes ({notes}) are shown as the last "
            "sync left them, and stay indexed until it can be read again"
        )


@lru_cache(maxsize=8)
def _matcher(settings: Settings) -> TrackedMatcher:
    return TrackedMatcher(settings)


def freshness(root: Path, settings: Settings, paths: list[str] | tuple[str, ...]) -> Freshness:
    """Check note ``paths`` (relative POSIX, as hits carry them) against the disk under ``root`` and the
    tracked globs of ``settings``. A path reached through a symbolic link counts as on disk while the link
    leads to a file; one that a folder's permissions hide is ``unreadable`` (kept). Never raises: a path that
    cannot be checked otherwise counts as gone."""
    tracked = _matcher(settings)
    gone: list[str] = []
    excluded: list[str] = []
    unreadable: list[str] = []
    blocked: dict[str, None] = {}
    for rel in dict.fromkeys(paths):
        try:
            present = stat.S_ISREG(os.stat(root / rel).st_mode)
        except PermissionError:
            unreadable.append(rel)
            blocked[blocked_folder(root, rel)] = None
            continue
        except (OSError, ValueError):
            present = False
        if not present:
            gone.append(rel)
        elif not tracked(rel):
            excluded.append(rel)
    return Freshness(tuple(gone), tuple(excluded), tuple(unreadable), tuple(blocked))
