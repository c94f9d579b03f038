"""What one sync did (``SyncReport``): notes added, modified, deleted, excluded, re-chunked, failed, and what its
publish to the team database did (``PublishReport``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from botbin.aifbin import AifBinDocument


@dataclass(frozen=True)
class NoteFailure:
    """A note that could not be synced this time (its previous output, if any, is kept)."""

    path: str
    reason: str


@dataclass(frozen=True)
class PublishReport:
    """What one publish did."""

    url: str
    """The database, without its password."""
    namespace: str
    published: tuple[str, ...]
    """Notes written (new or changed), relative paths."""
    removed: tuple[str, ...]
    """Notes dropped from the namespace (gone from the workspace)."""
    failed: tuple[tuple[str, str], ...]
    """(note, reason) for notes whose AIF-BIN file could not be read; the database keeps their old version."""
    unchanged: int
    """Notes already up to date."""
    others: int = 0
    """Notes of the namespace published by other workspaces (never removed by this one)."""
    replaced: tuple[str, ...] = ()
    """Notes written over another workspace's version of the same path."""

    def to_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "namespace": self.namespace,
            "published": list(self.published),
            "removed": list(self.removed),
            "failed": [{"path": p, "reason": r} for p, r in self.failed],
            "unchanged": self.unchanged,
            "others": self.others,
            "replaced": list(self.replaced),
        }


@dataclass(frozen=True)
class SyncReport:
    """What one sync did."""

    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    """Notes whose content changed."""
    deleted: tuple[str, ...] = ()
    """Notes gone from disk, removed from the index."""
    excluded: tuple[str, ...] = ()
    """Notes still on disk that the include/exclude globs no longer match, removed from the index."""
    kept_excluded: tuple[str, ...] = ()
    """Notes still on disk that the globs no longer match, kept in the index because removing them would drop
    most of it; a sync with ``prune=True`` removes them."""
    rechunked: tuple[str, ...] = ()
    """Notes with the same bytes whose output a ``full`` sync rewrote (vectors reused); also counted in
    ``unchanged``, never in ``modified``."""
    renamed: tuple[tuple[str, str], ...] = ()
    """(old path, new path) pairs: a deleted note whose bytes reappeared under a new path."""
    unchanged: int = 0
    failed: tuple[NoteFailure, ...] = ()
    warnings: tuple[str, ...] = ()
    chunks_embedded: int = 0
    """Chunks sent to the model."""
    chunks_reused: int = 0
    """Chunks of changed notes whose embedding came from the cache."""
    elapsed_ms: float = 0.0
    synced_at: str | None = None
    """ISO 8601 UTC time this sync finished (the state file's ``last_sync``)."""
    documents: dict[str, AifBinDocument] = field(default_factory=dict, repr=False)
    """Documents written in this sync, by note path, when asked for (to patch an in-memory index)."""
    published: PublishReport | None = None
    """What the publish after the sync did (backend "postgres"); None for the embedded backend, a reader
    (``postgres_publish = false``) or a publish that failed."""
    publish_error: str | None = None
    """Why the publish after the sync failed (the local sync stands), None when it did not."""

    @property
    def changed(self) -> bool:
        """True if any output was written or removed."""
        return bool(self.added or self.modified or self.deleted or self.excluded or self.rechunked)

    @property
    def removed(self) -> tuple[str, ...]:
        """Every note removed from the index (deleted and excluded)."""
        return (*self.deleted, *self.excluded)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON (camelCase), for ``botbin sync --json`` and the language server's sync commands."""
        return {
            "added": list(self.added),
            "modified": list(self.modified),
            "deleted": list(self.deleted),
            "excluded": list(self.excluded),
            "keptExcluded": list(self.kept_excluded),
            "rechunked": list(self.rechunked),
            "renamed": [{"from": a, "to": b} for a, b in self.renamed],
            "unchanged": self.unchanged,
            "failed": [{"path": f.path, "reason": f.reason} for f in self.failed],
            "warnings": list(self.warnings),
            "chunksEmbedded": self.chunks_embedded,
            "chunksReused": self.chunks_reused,
            "elapsedMs": round(self.elapsed_ms, 1),
        }
