"""A real PostgreSQL 16 + pgvector for the team-memory tests: ``BOTBIN_TEST_POSTGRES_URL`` when set (a
superuser URL), else one ``pgserver`` (PyPI) started per test session in a temp folder. Each test gets a
database of its own (``fresh_db``)."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

_COUNTER = itertools.count()


def with_database(url: str, dbname: str) -> str:
    """``url`` pointing at database ``dbname`` instead."""
    return urlunsplit(urlsplit(url)._replace(path="/" + dbname))


def with_user(url: str, user: str, password: str) -> str:
    """``url`` logging in as ``user`` with ``password``."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{user}:{password}@{host}"))


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A superuser URL of a running PostgreSQL with pgvector available."""
    given = os.environ.get("BOTBIN_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    pgserver = pytest.importorskip("pgserver")
    # Not pytest's tmp_path: as root, pgserver runs the server as its own user, which must reach the folder,
    # and pytest prunes old base folders that a parallel session may still use.
    folder = Path(tempfile.mkdtemp(prefix="botbin-pg-"))
    server = pgserver.get_server(folder / "data", cleanup_mode="stop")
    try:
        yield str(server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def fresh_db(postgres_url: str) -> str:
    """A superuser URL of a new, empty database (dropped with the server at the end of the session)."""
    name = f"botbin_t{os.getpid()}_{next(_COUNTER)}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(postgres_url, name)
