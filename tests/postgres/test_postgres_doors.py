"""Issue 35: what reaches a teammate's search does not depend on the door a note came in by. A note that
``botbin watch`` syncs, the soul file the conversation observer behind MCP ``observe_turn`` writes, the one the host
ops' ``ingest`` writes, and the roots note of ``botbin consolidate`` are published to the team database (backend
``postgres``) by the sync that indexes them: the workspace's one post-sync pipeline (workspace/syncing.py), its
outcome in the report."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from botbin.service import MemoryService
from botbin.sync.report import SyncReport
from conftest import write_notes

NAMESPACE = "doors"
NOTES = {"MEMORY.md": "# Memory\n\nThe team ships on Tuesdays.\n"}
TURNS = [
    ("user", "Our staging database runs on port 5433 on host db-staging.internal."),
    ("assistant", "Noted: staging Postgres on db-staging.internal, port 5433."),
    ("user", "The release train leaves every second Thursday at noon."),
]


@dataclass(frozen=True)
class Turn:
    """A host's turn (agent/capture.py HostTurn)."""

    role: str
    content: str
    id: str | None = None
    timestamp: str | None = None
    session: str | None = None
    name: str | None = None


def _team(url: str, root: Path, embedder: Any, notes: dict[str, str] | None = None) -> MemoryService:
    svc = MemoryService(
        write_notes(root, {**NOTES, **(notes or {})}),
        {"backend": "postgres", "postgres_url": url, "namespace": NAMESPACE},
        embedder=embedder,
        env={},
    )
    svc.team.init()
    return svc


def _published(url: str) -> set[str]:
    """The notes of the namespace in the team database."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT path FROM botbin_notes WHERE namespace = %s", (NAMESPACE,)).fetchall()
    return {str(p) for (p,) in rows}


def test_botbin_watch_publishes_what_it_syncs(fresh_db: str, tmp_path: Path, fake_embedder: Any) -> None:
    svc = _team(fresh_db, tmp_path / "ws", fake_embedder)
    reports: list[SyncReport] = []
    first = threading.Event()

    def record(report: SyncReport) -> None:
        reports.append(report)
        first.set()

    watcher = threading.Thread(target=svc.watch, args=(record, 1), daemon=True)
    watcher.start()
    assert first.wait(60)
    assert _published(fresh_db) == {"MEMORY.md"}  # the first sync of the watch
    time.sleep(0.5)  # the watcher listens
    write_notes(svc.root, {"memory/freeze.md": "# Freeze\n\nNo deploys during the December freeze.\n"})
    watcher.join(60)
    assert not watcher.is_alive()
    assert "memory/freeze.md" in _published(fresh_db)
    published = reports[-1].published
    assert published is not None and published.published == ("memory/freeze.md",) and not reports[-1].publish_error


def test_the_observer_behind_observe_turn_publishes_the_soul_file(
    fresh_db: str, tmp_path: Path, fake_embedder: Any
) -> None:
    svc = _team(fresh_db, tmp_path / "ws", fake_embedder)
    svc.sync()
    observer = svc.observer(sync_each_block=True)  # what ``botbin mcp`` gives observe_turn (mcp.py)
    for role, content in TURNS:
        observer.observe_message(role, content, "ana", "s1")
    written = [d for d in observer.flush() if d.status == "written"]
    assert [d.soul_file for d in written] == ["memory/soul/ana.md"]
    assert "memory/soul/ana.md" in _published(fresh_db)


def test_the_host_ops_ingest_publishes_the_soul_file(fresh_db: str, tmp_path: Path, fake_embedder: Any) -> None:
    svc = _team(fresh_db, tmp_path / "ws", fake_embedder)
    svc.sync()
    report = svc.hosts.ingest([Turn(role, content, f"t{i}") for i, (role, content) in enumerate(TURNS)], "ana", None,
                              flush=True)  # fmt: skip
    assert report.written == ("memory/soul/ana.md",)
    assert "memory/soul/ana.md" in _published(fresh_db)


def test_consolidation_publishes_the_roots_note(fresh_db: str, tmp_path: Path, fake_embedder: Any) -> None:
    recurring = {
        "memory/2026-11-02.md": "# 2026-11-02\n\n- Deploys go out from the blue cluster in Frankfurt.\n",
        "memory/2026-11-09.md": "# 2026-11-09\n\n- Deploys go out from the blue cluster in Frankfurt now.\n",
    }
    svc = _team(fresh_db, tmp_path / "ws", fake_embedder, recurring)
    svc.sync()
    assert svc.consolidate().roots
    assert "memory/roots.md" in _published(fresh_db)
