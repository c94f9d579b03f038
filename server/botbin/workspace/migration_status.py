"""What ``botbin status`` and the editors show of a model migration: its phase and progress, read from the
progress record any process writes (sync/model_trees.py), and whether a process is at it now."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from botbin.sync.lock import LOCK_FILE
from botbin.sync.model_trees import MigrationRecord, read_record

PHASES = ("embedding", "switching", "paused", "failed", "refused")
"""``embedding``: the new model's tree is being built (the current index answers); ``switching``: the live tree is
being replaced; ``paused``: due, no process is at it (the next sync or server start resumes it); ``failed``: the
last run stopped (``message`` says why; the next sync tries again); ``refused``: the ``model`` setting names no
usable model (the current index keeps answering)."""


@dataclass(frozen=True)
class MigrationStatus:
    """A model migration that is due (the ``model`` setting names another model than the index was built with)."""

    phase: str
    """One of PHASES."""
    to_model: str
    """The model id the index moves to (for ``refused``: the setting as written)."""
    from_model: str
    """The model id the index was built with, which answers searches until the switch."""
    notes_done: int = 0
    """Notes the new model's tree holds so far."""
    notes_total: int = 0
    """Notes of the current index."""
    chunks_embedded: int = 0
    """Chunks embedded by the run under way (or the last one)."""
    chunks_to_embed: int = 0
    """Chunks that run counted to embed."""
    message: str = ""
    """Why it failed, is refused or waits; empty otherwise."""
    started_at: str | None = None
    """When the migration first started (ISO 8601 UTC), None before it did."""
    updated_at: str | None = None
    """When its progress was last recorded (ISO 8601 UTC)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "toModel": self.to_model,
            "fromModel": self.from_model,
            "notesDone": self.notes_done,
            "notesTotal": self.notes_total,
            "chunksEmbedded": self.chunks_embedded,
            "chunksToEmbed": self.chunks_to_embed,
            "message": self.message,
            "startedAt": self.started_at,
            "updatedAt": self.updated_at,
        }

    def describe(self) -> str:
        """One line for people: ``to X: embedding, 412 of 1,735 notes (3,100 of 6,000 chunks)``."""
        done = f"{self.notes_done:,} of {self.notes_total:,} notes"
        chunks = f" ({self.chunks_embedded:,} of {self.chunks_to_embed:,} chunks)" if self.chunks_to_embed else ""
        why = f": {self.message}" if self.message else ""
        if self.phase == "refused":
            return f"refused{why}"
        return f"to {self.to_model}: {self.phase}, {done}{chunks}{why}"


def migration_status(
    models_dir: Path, to_model: str, from_model: str, notes_total: int, running_here: bool
) -> MigrationStatus:
    """The status of the migration to ``to_model``, from its record in ``models_dir`` (none yet: ``paused`` with
    nothing done); ``running_here``: this process's migration thread is alive (else the migration lock says whether
    another process holds it)."""
    record = read_record(models_dir)
    if record is None or record.to_model != to_model:
        record = MigrationRecord(to_model, from_model, "paused", notes_total=notes_total)
    running = running_here or _held_elsewhere(models_dir)
    phase = record.phase if running or record.phase == "failed" else "paused"
    if running and phase == "failed":
        phase = "embedding"  # a new run started since the last one failed
    return MigrationStatus(
        phase,
        to_model,
        from_model,
        record.notes_done,
        record.notes_total or notes_total,
        record.chunks_embedded,
        record.chunks_to_embed,
        record.message if phase in ("failed", "paused") else "",
        record.started_at or None,
        record.updated_at or None,
    )


def _held_elsewhere(models_dir: Path) -> bool:
    """True when a process holds the migration lock (a probe that never creates the folder)."""
    path = models_dir / LOCK_FILE
    if not path.is_file() or not os.access(path, os.W_OK):
        return False
    lock = FileLock(str(path), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return True
    except OSError:
        return False
    lock.release()
    return False
