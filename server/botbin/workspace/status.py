"""``status``: what the index of a workspace holds, the notes changed since, its rule conflicts and encryption."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botbin.errors import BotbinError, ModelError
from botbin.sync.encryption import encryption_mode
from botbin.sync.scan import check_root
from botbin.sync.staleness import StaleNote, find_stale
from botbin.workspace.remote import TeamStatus, team_status

if TYPE_CHECKING:
    from collections.abc import Callable

    from botbin.directives.conflicts import Conflict
    from botbin.workspace import Workspace
    from botbin.workspace.migration_status import MigrationStatus


@dataclass(frozen=True)
class Status:
    """What ``botbin status`` reports."""

    workspace: str
    output_dir: str
    state_file: str
    model: str
    files: int
    """Notes in the index."""
    chunks: int
    """Chunks in the index, from the state file."""
    last_sync: str | None
    tracked: int
    """Tracked notes on disk now."""
    stale: tuple[StaleNote, ...] = ()
    """Notes whose index entry no longer matches the disk (changed, new, deleted)."""
    warnings: tuple[str, ...] = field(default=())
    conflicts: tuple[Conflict, ...] = ()
    """Pairs of indexed directives that contradict each other."""
    encryption: str = "off"
    """'on' (chunk blocks encrypted), 'off', or 'converting' (an encrypt/decrypt the next sync finishes)."""
    team: TeamStatus | None = None
    """The team database (backend = "postgres"), else None."""
    migration: MigrationStatus | None = None
    """The model migration that is due or under way (the ``model`` setting names another model than the index
    was built with), else None."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "outputDir": self.output_dir,
            "stateFile": self.state_file,
            "model": self.model,
            "files": self.files,
            "chunks": self.chunks,
            "lastSync": self.last_sync,
            "tracked": self.tracked,
            "stale": [{"path": s.path, "reason": s.reason} for s in self.stale],
            "warnings": list(self.warnings),
            "conflicts": [c.to_dict() for c in self.conflicts],
            "encryption": self.encryption,
            "team": self.team.to_dict() if self.team else None,
            "migration": self.migration.to_dict() if self.migration else None,
        }


def status(ws: Workspace, conflicts: Callable[[], list[Conflict]]) -> Status:
    """Index size, last sync and the notes that changed since (no hashing: size and mtime only); ``conflicts``
    gives the indexed rules' conflicts (it may raise BotbinError for a locked store).

    Raises WorkspaceError if the workspace folder is missing or unreadable.
    """
    check_root(ws.root)
    state, warnings = ws.state()
    found = find_stale(ws.root, ws.settings, state)
    warnings += found.warnings
    try:
        ws.models.follow(state.model if state.files else "")  # the model that answers: the index's
        model = ws.models.meta.name
    except ModelError as exc:
        model, warnings = "unavailable", [*warnings, str(exc)]
    found_conflicts: list[Conflict] = []
    encryption = "off"
    try:
        encryption = encryption_mode(ws.output_dir, state)
        found_conflicts = conflicts() if state.files else []
    except BotbinError as exc:  # an encrypted store without its passphrase still reports the rest
        warnings.append(str(exc))
    return Status(
        str(ws.root),
        str(ws.output_dir),
        str(ws.state_path),
        model,
        len(state.files),
        sum(e.chunks for e in state.files.values()),
        state.last_sync,
        found.tracked,
        found.stale,
        (*ws.warnings, *warnings),
        tuple(found_conflicts),
        encryption,
        team_status(ws.team, state),
        ws.migration.status(),
    )
