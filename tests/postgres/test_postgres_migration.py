"""A model migration of a workspace that publishes to the team database (backend ``postgres``): the switch is
published by the workspace's one post-sync pipeline (workspace/syncing.py ``Syncer.publish``), so a teammate's
search reads the new model's vectors, never a mix of the two."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import psycopg
import pytest

from botbin.aifbin import decode
from botbin.service import MemoryService
from conftest import write_notes
from migration.conftest import make_second_model, topic_notes

NAMESPACE = "migrating"


@pytest.fixture(scope="module")
def second_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_second_model(tmp_path_factory.mktemp("models") / "minilm-l3")


def test_a_migration_publishes_the_new_models_vectors(fresh_db: str, tmp_path: Path, second_model: Path) -> None:
    notes = topic_notes(1)
    root = write_notes(tmp_path / "ws", notes)
    team = {"vault": True, "backend": "postgres", "postgres_url": fresh_db, "namespace": NAMESPACE}
    first = MemoryService(root, team, env={})
    first.team.init()
    synced = first.sync()
    assert synced.published is not None and not synced.publish_error

    svc = MemoryService(root, {**team, "model": str(second_model)}, env={})
    report = svc.ws.migrate()
    assert report is not None and report.switched, report
    assert report.publish is not None and not report.publish.publish_error
    assert report.publish.published is not None and sorted(report.publish.published.published) == sorted(notes)
    state, _ = svc.ws.state()
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT path, ord, embedding::text FROM botbin_chunks WHERE namespace = %s", (NAMESPACE,)
        ).fetchall()
    assert {str(path) for path, _, _ in rows} == set(notes)
    for path, ord_, text in rows:
        output = svc.root / state.files[str(path)].output
        local = decode(output.read_bytes(), str(output)).chunks[int(ord_)].embedding
        assert np.allclose(np.asarray(json.loads(str(text)), dtype=np.float32), local, atol=1e-5), (path, ord_)
