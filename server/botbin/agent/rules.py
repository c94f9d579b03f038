"""The rules of a workspace: its indexed directives (all, or a note's or folder's) and the conflicts among them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from botbin.directives.conflicts import Conflict, find_conflicts
from botbin.directives.partition import is_instruction_path
from botbin.directives.rulebook import collect_rules
from botbin.errors import BotbinError
from botbin.notes_io import directives_on_disk, relative_path
from botbin.parsing import decode_note
from botbin.sync.scan import check_root, read_note, scan_workspace

if TYPE_CHECKING:
    from botbin.directives.partition import Directive
    from botbin.index.store import MemoryIndex
    from botbin.workspace import Workspace

#: Bytes of a note's start read to see whether its frontmatter may mark it ``botbin: instructions``.
_HEAD_BYTES = 4096


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
            chosen = directives_on_disk(ws.root, rel, ws.settings.instruction_notes)
            every = [*every, *chosen]
    keep = {id(d) for d in chosen}
    conflicts = [c for c in find_conflicts(every) if id(c.first.directive) in keep or id(c.second.directive) in keep]
    return DirectiveReport(chosen, conflicts, tuple(warnings))


def _may_instruct(rel: str, head: bytes, globs: tuple[str, ...]) -> bool:
    """Cheap filter before parsing: an instruction note's path, or a frontmatter that names botbin."""
    return is_instruction_path(rel, globs) or b"botbin:" in head


def unindexed_rules(ws: Workspace, index: MemoryIndex) -> list[Directive]:
    """Rules of the instruction notes on disk that ``index`` does not hold yet, read and partitioned on the spot
    (no embedding; directives/rulebook.py): what an agent must get while the first sync is still embedding.
    A note that cannot be read is skipped (the sync reports it)."""
    return rules_on_disk(ws, frozenset(index.note_paths()))


def rules_on_disk(ws: Workspace, skip: frozenset[str] = frozenset()) -> list[Directive]:
    """Hard and soft rules of the instruction notes on disk now (but those of ``skip``), read and partitioned on the
    spot, in tier order: what a session starts with, current even when a note changed since the last sync."""
    try:
        tracked = scan_workspace(ws.root, ws.settings).files
    except BotbinError:
        return []
    texts: list[tuple[str, str]] = []
    for rel in tracked:
        if rel in skip:
            continue
        try:
            data = read_note(ws.root, rel, ws.settings.follow_symlinks)
            if _may_instruct(rel, data[:_HEAD_BYTES], ws.settings.instruction_notes):
                texts.append((rel, decode_note(data, rel).text))
        except (OSError, BotbinError):
            continue
    book = collect_rules(texts, ws.settings.instruction_notes)
    return [*book.hard, *book.instruction_soft]
