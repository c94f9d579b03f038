"""The rules of a workspace: its indexed directives (all, or a note's or folder's) and the conflicts among them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from botbin.directives.conflicts import Conflict, find_conflicts
from botbin.notes_io import directives_on_disk, relative_path
from botbin.sync.scan import check_root

if TYPE_CHECKING:
    from botbin.directives.partition import Directive
    from botbin.workspace import Workspace


@dataclass(frozen=True)
class DirectiveReport:
    """Directives of the workspace (or of one path) and the conflicts that involve them."""

    directives: list[Directive]
    conflicts: list[Conflict]
    warnings: tuple[str, ...] = ()


def directive_report(ws: Workspace, path: str | None = None) -> DirectiveReport:
    """Indexed directives (all, or those of a note or folder ``path``, relative to the workspace) and the
    conflicts involving them; an .md file that is not indexed is read and partitioned on the spot.

    Raises WorkspaceError if the workspace folder is missing; BotbinError for an unreadable ``path``.
    """
    check_root(ws.root)
    index, warnings = ws.index.get()
    every = index.directives()
    chosen = every
    if path is not None:
        rel = relative_path(ws.root, path)
        chosen = [d for d in every if d.path == rel or d.path.startswith(rel.rstrip("/") + "/") or rel == "."]
        if not chosen and rel.lower().endswith(".md"):
            chosen = directives_on_disk(ws.root, rel)
            every = [*every, *chosen]
    keep = {id(d) for d in chosen}
    conflicts = [
        c for c in find_conflicts(every) if id(c.first.directive) in keep or id(c.second.directive) in keep
    ]
    return DirectiveReport(chosen, conflicts, tuple(warnings))
