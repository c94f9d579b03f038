"""Connections to the team database: one psycopg 3 pool per URL, connect and statement timeouts, and errors
that name the URL without its password."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool, PoolTimeout

from botbin.errors import RemoteIndexError

__all__ = ["ConnectOptions", "RemoteIndexError", "clean_reason", "connect_once", "open_pool", "redact"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConnectOptions:
    """How to reach the team database."""

    url: str
    """A libpq URL or conninfo string (``postgresql://user:pw@host/db``); it may hold a password."""
    connect_timeout_s: int = 5
    """Seconds a connection attempt may take."""
    statement_timeout_ms: int = 30_000
    """Milliseconds one statement may run before the server cancels it."""
    max_connections: int = 4
    """Largest pool size."""


_USERINFO = re.compile(r"(://[^:/?#@]*:).*@")
"""A URL's ``user:password@``, up to the last ``@`` (a password may hold an unencoded ``@``, ``/``, ``?`` or ``#``;
a URL with an ``@`` further on loses a little more than its password)."""


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***`` (URL or ``key=value`` form)."""
    if "://" in url:
        masked = _USERINFO.sub(r"\1***@", url, count=1)
        return re.sub(r"(?i)(password=)[^&]*", r"\1***", masked)
    return re.sub(r"(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", url)


def _passwords(url: str) -> list[str]:
    """The password as libpq reads ``url``, and as written between ``user:`` and the last ``@`` with its pieces
    between ``@``, ``/``, ``?`` and ``#`` (libpq cuts there and shows the rest as host or path), longest first."""
    found: set[str] = set()
    try:
        secret = psycopg.conninfo.conninfo_to_dict(url).get("password")
        found.add(str(secret or ""))
    except psycopg.ProgrammingError:
        pass
    written = _USERINFO.search(url)
    if written:
        raw = url[written.end(1) : written.end() - 1]
        found.update([raw, *re.split(r"[@/?#]", raw)])
    return sorted((p for p in found if len(p) >= 2), key=len, reverse=True)


def clean_reason(exc: BaseException, url: str) -> str:
    """The first line of ``exc``'s message, with the URL's password (if it appears) masked."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    for secret in _passwords(url):
        text = text.replace(secret, "***")
    return text


def connect_once(options: ConnectOptions) -> psycopg.Connection[tuple[Any, ...]]:
    """One autocommit connection (``botbin db``). Raises RemoteIndexError naming the redacted URL."""
    try:
        return psycopg.connect(options.url, connect_timeout=options.connect_timeout_s, autocommit=True)
    except psycopg.Error as exc:
        shown = redact(options.url)
        raise RemoteIndexError(
            f"cannot connect to the team database {shown}: {clean_reason(exc, options.url)}"
        ) from None


def open_pool(options: ConnectOptions) -> ConnectionPool[psycopg.Connection[tuple[Any, ...]]]:
    """A pool of autocommit connections with pgvector's types registered. One connection is made at once, so
    an unreachable or unprepared database is reported here. Raises RemoteIndexError naming the redacted URL."""
    shown = redact(options.url)
    with connect_once(options) as probe:  # libpq's own reason is clearer than a pool timeout
        has_vector = probe.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
    if has_vector is None:
        raise RemoteIndexError(f"the team database {shown} has no pgvector extension: run `botbin db init`")

    def configure(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        register_vector(conn)

    pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] = ConnectionPool(
        options.url,
        min_size=1,
        max_size=options.max_connections,
        kwargs={
            "autocommit": True,
            "connect_timeout": options.connect_timeout_s,
            "options": f"-c statement_timeout={options.statement_timeout_ms}",
        },
        configure=configure,
        open=False,
        name="botbin",
    )
    try:
        pool.open(wait=True, timeout=options.connect_timeout_s + 1)
    except PoolTimeout as exc:
        pool.close()
        raise RemoteIndexError(
            f"cannot connect to the team database {shown}: {clean_reason(exc, options.url)}"
        ) from None
    return pool
