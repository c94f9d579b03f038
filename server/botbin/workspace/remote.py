"""The team database of a workspace (backend = "postgres"): ``TeamDatabase`` opens it on first use, publishes the
notes whose AIF-BIN output changed since the last publish (no re-embedding: the vectors come from the local files),
and sets it up (``botbin db``). It knows the workspace's folder, settings and state file, never the Workspace."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from botbin.aifbin import decode
from botbin.config import Settings
from botbin.errors import AifBinFormatError, BotbinError, RemoteIndexError
from botbin.sync.atomic import atomic_write
from botbin.sync.confine import Confined, read_confined
from botbin.sync.report import PublishReport
from botbin.sync.state import FileEntry, SyncState

if TYPE_CHECKING:
    from botbin.index.postgres.connect import ConnectOptions
    from botbin.index.postgres.index import PostgresIndex

log = logging.getLogger(__name__)
T = TypeVar("T")
PUBLISHER_FILE = "publisher-id"
"""Beside the sync state: the id this workspace's notes carry in the team database."""


class TeamDatabase:
    """One workspace's side of the team database. For the embedded backend ``index`` is None and nothing is
    published; the connection is made on first use (and made again after a failure)."""

    def __init__(self, root: Path, settings: Settings, state: Callable[[], tuple[SyncState, list[str]]]) -> None:
        """``root``: the workspace folder; ``state``: reads its sync state file (and the problems met)."""
        self.root, self.settings, self._state = root, settings, state

    @property
    def output_dir(self) -> Path:
        return self.root / self.settings.output_dir

    def state(self) -> tuple[SyncState, list[str]]:
        return self._state()

    @cached_property
    def index(self) -> PostgresIndex | None:
        """The team database (backend = "postgres"), connected on first use; None for the embedded backend.
        Raises RemoteIndexError (the URL shown without its password)."""
        return open_remote(self)

    @property
    def namespace(self) -> str:
        """The namespace this workspace publishes into."""
        return namespace_of(self)

    def publish(self) -> PublishReport | None:
        """Publish the notes changed since the last publish; None for the embedded backend. Raises
        RemoteIndexError."""
        remote = self.index
        return None if remote is None else publish(self, remote)

    def publish_outcome(self) -> tuple[PublishReport | None, str | None]:
        """What a publish after a sync did, or why it failed (logged: the local sync stands either way); (None,
        None) for the embedded backend and a reader (``postgres_publish = false``)."""
        if self.settings.backend != "postgres" or not self.settings.postgres_publish:
            return None, None
        try:
            return self.publish(), None
        except BotbinError as exc:
            log.warning("notes synced locally but not published: %s", exc)
            return None, str(exc)

    def spanned_namespaces(self) -> tuple[str, ...]:
        """The namespaces a search reads when they are more than this workspace's own (else ())."""
        asked = tuple(self.settings.search_namespaces or ())
        return () if asked in ((), (self.namespace,)) else asked

    def unreadable_namespaces(self) -> list[str]:
        """Of the namespaces searched, those this role reads no note of (no such namespace, or no grant)."""
        remote = self.index
        return [] if remote is None else remote.unreadable()

    def init(self) -> tuple[str, list[int]]:
        """``botbin db init`` (``init_database``)."""
        return init_database(self)

    def grant(self, role: str, namespace: str, write: bool) -> str:
        """``botbin db grant`` (``grant_role``)."""
        return grant_role(self, role, namespace, write)

    def revoke(self, role: str, namespace: str) -> bool:
        """``botbin db revoke`` (``revoke_role``)."""
        return revoke_role(self, role, namespace)


@dataclass(frozen=True)
class TeamStatus:
    """``botbin status`` on the postgres backend: where the workspace publishes, and what it has not yet."""

    url: str
    """The database, without its password."""
    namespace: str
    publishes: bool
    """False for a reader (``postgres_publish = false``)."""
    unpublished: int | None = None
    """Synced notes whose output the database does not hold yet (None: the database was not reached)."""
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "namespace": self.namespace,
            "publishes": self.publishes,
            "unpublished": self.unpublished,
            "error": self.error,
        }


def team_status(team: TeamDatabase, state: SyncState) -> TeamStatus | None:
    """The team database's side of ``botbin status`` (None for the embedded backend); a database that cannot
    be reached is reported in it, never raised."""
    s = team.settings
    if s.backend != "postgres":
        return None
    from botbin.index.postgres.connect import redact

    shown = redact(s.postgres_url or "")
    try:
        remote = team.index
        notes = {} if remote is None else remote.published()
    except RemoteIndexError as exc:
        return TeamStatus(shown, namespace_of(team), s.postgres_publish, error=str(exc))
    if state.encrypted or s.encryption:
        return TeamStatus(shown, namespace_of(team), False, error=_sealed(team, notes, _saved_publisher_id(team)))
    waiting = sum(notes.get(rel, ("",))[0] != fingerprint(state, entry) for rel, entry in state.files.items())
    return TeamStatus(shown, namespace_of(team), s.postgres_publish, waiting)


def _sealed(team: TeamDatabase, notes: dict[str, tuple[str, str | None]], me: str | None) -> str:
    """Why an encrypted store is not published, and what it published before it was encrypted."""
    left = sum(who == me for _, who in notes.values())
    earlier = (
        f"; {left} notes it published before it was encrypted are still there, readable by the namespace's roles "
        "(the owner can delete them: docs/postgres.md)"
        if left
        else ""
    )
    return (
        f"{team.output_dir}: this store is encrypted, and the team database would hold its notes' text and vectors "
        f'in the clear: nothing was published (share through an unencrypted workspace, or set backend = "embedded")'
        + earlier
    )


def publisher_id(team: TeamDatabase) -> str:
    """This workspace's publisher id, made on first use and bound to the workspace's folder (a copy of the
    folder, with its ``memory/aifbin``, gets an id of its own): a sync removes from the namespace only the notes
    it published itself, so workspaces can share one namespace without deleting each other's notes."""
    found = _saved_publisher_id(team)
    if found:
        return found
    path = team.output_dir / PUBLISHER_FILE
    found = uuid.uuid4().hex
    try:
        atomic_write(path, f"{found}\n{team.root}\n".encode())  # a missing output folder is made 0700
    except OSError as exc:
        raise RemoteIndexError(
            f"{path}: cannot write this workspace's publisher id ({exc}): nothing was published"
        ) from None
    return found


def _saved_publisher_id(team: TeamDatabase) -> str | None:
    """The publisher id saved for this very folder, None when there is none (or it was made for a copy's
    original: the file names the folder it was made for)."""
    path = team.output_dir / PUBLISHER_FILE
    try:  # read back, so untrusted: never through a link out of the folder, and only an id this botbin makes
        lines = read_confined(team.output_dir, path)[:4096].decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    found, root = (lines[0].strip(), lines[1].strip()) if len(lines) > 1 else ("", "")
    if found and not re.fullmatch(r"[0-9a-f]{32}", found):
        log.warning("%s: not a publisher id botbin made (%r); this folder gets a new one", path, found[:40])
        return None
    if found and root != str(team.root):
        log.info("%s: made for %s; this folder gets a publisher id of its own", path, root)
    return found if found and root == str(team.root) else None


def namespace_of(team: TeamDatabase) -> str:
    """The namespace ``team`` publishes into: the ``namespace`` setting, else the folder's name."""
    return team.settings.namespace or team.root.name


def _options(team: TeamDatabase) -> ConnectOptions:
    try:
        from botbin.index.postgres.connect import ConnectOptions
    except ImportError as exc:
        raise RemoteIndexError(f"backend postgres needs psycopg: pip install 'botbin[postgres]' ({exc})") from None
    s = team.settings
    if not s.postgres_url:
        raise RemoteIndexError("no team database: set postgres_url in botbin.toml or BOTBIN_POSTGRES_URL")
    return ConnectOptions(s.postgres_url, s.postgres_timeout_s, s.postgres_timeout_s * 6000)


def init_database(team: TeamDatabase) -> tuple[str, list[int]]:
    """``botbin db init``: create or migrate the schema. Returns the URL (no password) and the versions
    applied. Raises RemoteIndexError."""
    import psycopg

    from botbin.index.postgres.connect import clean_reason, connect_once, redact
    from botbin.index.postgres.schema import migrate

    options = _options(team)
    shown = redact(options.url)
    with connect_once(options) as conn:
        try:
            return shown, migrate(conn, shown)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise RemoteIndexError(
                f"team database {shown}: {clean_reason(exc, options.url)}: run `botbin db init` as the database's "
                "owner; where only a superuser may create extensions, ask one to run `CREATE EXTENSION vector` in "
                "that database first (nothing was changed)"
            ) from None
        except psycopg.Error as exc:
            raise RemoteIndexError(f"team database {shown}: {clean_reason(exc, options.url)}") from None


def grant_role(team: TeamDatabase, role: str, namespace: str, write: bool) -> str:
    """``botbin db grant``: let ``role`` read (and with ``write``, write) ``namespace``; returns the role as
    granted (``public``: every role). Raises RemoteIndexError."""
    from botbin.index.postgres.schema import grant, grant_role_name

    _admin(team, lambda conn: grant(conn, role, namespace, write))
    return grant_role_name(role)


def revoke_role(team: TeamDatabase, role: str, namespace: str) -> bool:
    """``botbin db revoke``: take ``namespace`` away from ``role``; True when it had a grant. Raises
    RemoteIndexError."""
    from botbin.index.postgres.schema import revoke

    return _admin(team, lambda conn: revoke(conn, role, namespace))


def _admin(team: TeamDatabase, action: Callable[[Any], T]) -> T:
    """Run ``action`` on one connection to a database holding this botbin's schema version."""
    import psycopg

    from botbin.index.postgres.connect import clean_reason, connect_once, redact
    from botbin.index.postgres.schema import check_version

    options = _options(team)
    shown = redact(options.url)
    with connect_once(options) as conn:
        try:
            check_version(conn, shown)
            return action(conn)
        except psycopg.Error as exc:
            raise RemoteIndexError(f"team database {shown}: {clean_reason(exc, options.url)}") from exc


def open_remote(team: TeamDatabase) -> PostgresIndex | None:
    """The team database of ``team``, None for the embedded backend. Raises RemoteIndexError."""
    s = team.settings
    if s.backend != "postgres":
        return None
    from botbin.index.postgres.index import PostgresIndex

    return PostgresIndex(_options(team), namespace_of(team), s.search_namespaces, s.postgres_ef_search)


def fingerprint(state: SyncState, entry: FileEntry) -> str:
    """Changes whenever the note's AIF-BIN output was rewritten (its hash, sync time, model or chunker)."""
    facts = [entry.hash, entry.synced_at, entry.chunks, state.model, sorted(state.chunker.items())]
    return hashlib.md5(json.dumps(facts).encode(), usedforsecurity=False).hexdigest()


def publish(team: TeamDatabase, remote: PostgresIndex) -> PublishReport:
    """Publish into ``remote`` every note of ``team`` whose output changed since the last publish, each in one
    transaction, and drop the notes this workspace published that are no longer in it (another workspace's
    notes in the same namespace stay). A note whose file cannot be read is reported and skipped. Raises
    RemoteIndexError when the database fails (notes done so far stay published), and for an encrypted store
    (the database would hold its text in the clear)."""
    state, _ = team.state()
    me = publisher_id(team)
    notes = remote.published()
    if state.encrypted or team.settings.encryption:
        raise RemoteIndexError(_sealed(team, notes, me))
    stamps = {rel: fingerprint(state, entry) for rel, entry in state.files.items()}
    # a note holding exactly this workspace's output is this workspace's: after a lost publisher-id, a moved
    # folder or a database migrated from schema version 1, its notes become its own again
    same = {rel: fp for rel, fp in stamps.items() if rel in notes and notes[rel][0] == fp}
    claimed = remote.claim(me, {rel: fp for rel, fp in same.items() if notes[rel][1] != me})
    mine = {p for p, (_, who) in notes.items() if who == me} | claimed
    published: list[str] = []
    failed: list[tuple[str, str]] = []
    replaced: list[str] = []
    guard = Confined(team.output_dir)
    for rel, entry in sorted(state.files.items()):
        if rel in same:
            continue
        path = team.root / entry.output
        try:  # never through a link out of the output folder: its target would be published to the team
            with guard.open(path) as handle:
                doc = decode(handle.read(), str(path))
        except (OSError, AifBinFormatError) as exc:
            failed.append((rel, str(exc)))
            log.warning("%s: not published (%s)", rel, exc)
            continue
        if doc.source != rel:  # the state's key is the note's path
            doc = replace(doc, metadata={**doc.metadata, "source": rel})
        remote.publish(doc, stamps[rel], me)
        published.append(rel)
        if rel in notes and rel not in mine:
            replaced.append(rel)
    if replaced:
        log.warning(
            "%s: replaced the version another workspace published in namespace %s (one path in one namespace is "
            "one note: give each member a namespace and span them with search_namespaces; docs/postgres.md)",
            ", ".join(replaced[:5]) + (", ..." if len(replaced) > 5 else ""),
            remote.namespace,
        )
    gone = sorted(p for p in mine if p not in state.files)
    remote.remove(gone)
    others = len(set(notes) - mine - set(published))
    return PublishReport(
        remote.url, remote.namespace, tuple(published), tuple(gone), tuple(failed), len(same), others, tuple(replaced)
    )
