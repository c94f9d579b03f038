"""What the service facade returns: search results, directive reports and status (plain data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botbin.directives.conflicts import Conflict
    from botbin.directives.partition import Directive
    from botbin.index.store import Hit


@dataclass(frozen=True)
class SearchResult:
    """Hits for one query, and how they were obtained."""

    hits: list[Hit]
    degraded: bool = False
    """True when the model was unavailable and ranking fell back to BM25 alone."""
    warnings: tuple[str, ...] = ()
    indexed_at: str | None = None
    """``last_sync`` of the index searched (ISO 8601 UTC)."""


@dataclass(frozen=True)
class DirectiveReport:
    """Directives of the workspace (or of one path) and the conflicts that involve them."""

    directives: list[Directive]
    conflicts: list[Conflict]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class StaleNote:
    path: str
    reason: str


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace, "outputDir": self.output_dir, "stateFile": self.state_file,
            "model": self.model, "files": self.files, "chunks": self.chunks, "lastSync": self.last_sync,
            "tracked": self.tracked, "stale": [{"path": s.path, "reason": s.reason} for s in self.stale],
            "warnings": list(self.warnings), "conflicts": [c.to_dict() for c in self.conflicts],
            "encryption": self.encryption,
        }
