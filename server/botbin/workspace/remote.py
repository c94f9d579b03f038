"""The team database of a workspace (backend = "postgres"): opening it, and publishing the notes whose AIF-BIN
output changed since the last publish (no re-embedding: the vectors come from the local files)."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from botbin.aifbin import decode
from botbin.errors import AifBinFormatError, RemoteIndexError

if TYPE_CHECKING:
    from botbin.index.postgres.connect import ConnectOptions
    from botbin.index.postgres.index import PostgresIndex
    from botbin.sync.state import FileEntry, SyncState
    from botbin.workspace import Workspace

log = logging.getLogger(__name__)


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

    def to_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "namespace": self.namespace,
            "published": list(self.published),
            "removed": list(self.removed),
            "failed": [{"path": p, "reason": r} for p, r in self.failed],
            "unchanged": self.unchanged,
        }


def namespace_of(ws: Workspace) -> str:
    """The namespace ``ws`` publishes into: the ``namespace`` setting, else the folder's name."""
    return ws.settings.namespace or ws.root.name


def _options(ws: Workspace) -> ConnectOptions:
    try:
        from botbin.index.postgres.connect import ConnectOptions
    except ImportError as exc:
        raise RemoteIndexError(f"backend postgres needs psycopg: pip install 'botbin[postgres]' ({exc})") from None
    s = ws.settings
    if not s.postgres_url:
        raise RemoteIndexError("no team database: set postgres_url in botbin.toml or BOTBIN_POSTGRES_URL")
    return ConnectOptions(s.postgres_url, s.postgres_timeout_s, s.postgres_timeout_s * 6000)


def init_database(ws: Workspace) -> tuple[str, list[int]]:
    """``botbin db init``: create or migrate the schema. Returns the URL (no password) and the versions
    applied. Raises RemoteIndexError."""
    from botbin.index.postgres.connect import connect_once, redact
    from botbin.index.postgres.schema import migrate

    options = _options(ws)
    with connect_once(options) as conn:
        return redact(options.url), migrate(conn, redact(options.url))


def grant_role(ws: Workspace, role: str, namespace: str, write: bool) -> None:
    """``botbin db grant``: let ``role`` read (and with ``write``, write) ``namespace``. Raises
    RemoteIndexError."""
    import psycopg

    from botbin.index.postgres.connect import clean_reason, connect_once, redact
    from botbin.index.postgres.schema import grant

    options = _options(ws)
    with connect_once(options) as conn:
        try:
            grant(conn, role, namespace, write)
        except psycopg.Error as exc:
            raise RemoteIndexError(f"team database {redact(options.url)}: {clean_reason(exc, options.url)}") from exc


def open_remote(ws: Workspace) -> PostgresIndex | None:
    """The team database of ``ws``, None for the embedded backend. Raises RemoteIndexError."""
    s = ws.settings
    if s.backend != "postgres":
        return None
    from botbin.index.postgres.index import PostgresIndex

    return PostgresIndex(_options(ws), namespace_of(ws), s.search_namespaces, s.postgres_ef_search)


def fingerprint(state: SyncState, entry: FileEntry) -> str:
    """Changes whenever the note's AIF-BIN output was rewritten (its hash, sync time, model or chunker)."""
    facts = [entry.hash, entry.synced_at, entry.chunks, state.model, sorted(state.chunker.items())]
    return hashlib.md5(json.dumps(facts).encode(), usedforsecurity=False).hexdigest()


def publish(ws: Workspace, remote: PostgresIndex) -> PublishReport:
    """Publish into ``remote`` every note of ``ws`` whose output changed since the last publish, each in one
    transaction, and drop the notes no longer in the workspace. A note whose file cannot be read is reported
    and skipped. Raises RemoteIndexError when the database fails (notes done so far stay published)."""
    state, _ = ws.state()
    have = remote.fingerprints()
    keys = ws.keys() if state.encrypted else None
    keyring = keys.keyring if keys else None
    published: list[str] = []
    failed: list[tuple[str, str]] = []
    unchanged = 0
    for rel, entry in sorted(state.files.items()):
        stamp = fingerprint(state, entry)
        if have.get(rel) == stamp:
            unchanged += 1
            continue
        path = ws.root / entry.output
        try:
            doc = decode(path.read_bytes(), str(path), keyring)
        except (OSError, AifBinFormatError) as exc:
            failed.append((rel, str(exc)))
            log.warning("%s: not published (%s)", rel, exc)
            continue
        if doc.source != rel:  # the state's key is the note's path
            doc = replace(doc, metadata={**doc.metadata, "source": rel})
        remote.publish(doc, stamp)
        published.append(rel)
    gone = sorted(p for p in have if p not in state.files)
    remote.remove(gone)
    return PublishReport(remote.url, remote.namespace, tuple(published), tuple(gone), tuple(failed), unchanged)
