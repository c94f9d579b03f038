"""A model migration killed with SIGKILL: while it builds the new model's tree (the next run goes on from what was
written), and in the middle of the switch (readers still get one model; the next sync finishes the switch)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from botbin.aifbin import decode
from botbin.embedding import BUNDLED_MODEL_ID
from botbin.service import MemoryService
from botbin.sync.model_trees import MODELS_DIR, SWITCH_FILE, tree_name

from .conftest import SETTINGS
from .test_migration import ask, found, model_id

TESTS = Path(__file__).resolve().parents[1]
#: A migration in a child process; ``GROUP_CHUNKS`` small, so that a workspace this size is written in many groups.
BUILDER = """
import sys
import botbin.sync.run as run
from botbin.service import MemoryService

run.GROUP_CHUNKS = 8
MemoryService({root!r}, {settings!r}, env={{}}).ws.migrate()
"""
#: A migration that SIGKILLs itself at the ``limit``-th file it puts in place (the switch's hard links).
SWITCHER = """
import os, signal
import botbin.sync.tree_switch as switch
from botbin.service import MemoryService

real, calls = switch.link_over, [0]

def link_over(src, dst):
    calls[0] += 1
    if calls[0] == {limit}:
        os.kill(os.getpid(), signal.SIGKILL)
    real(src, dst)

switch.link_over = link_over
MemoryService({root!r}, {settings!r}, env={{}}).ws.migrate()
"""


def test_a_migration_killed_while_building_resumes_where_it_stopped(
    workspace: Callable[..., MemoryService], second_model: Path
) -> None:
    svc = workspace(model=str(second_model))
    total = svc.status().chunks
    tree = svc.output_dir / MODELS_DIR / tree_name(model_id(second_model))
    code = BUILDER.format(root=str(svc.root), settings={**SETTINGS, "model": str(second_model)})
    child = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not list(tree.rglob("*.aif-bin")) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    assert child.wait(30) == -signal.SIGKILL, "the migration ended before it could be killed"
    written = len(list(tree.rglob("*.aif-bin")))
    assert written > 0
    status = svc.status()
    assert status.model == BUNDLED_MODEL_ID and status.migration is not None and status.migration.phase == "paused"
    assert not svc.search(ask(), reinforce=False).degraded

    report = workspace(model=str(second_model)).ws.migrate()
    assert report is not None and report.switched
    assert 0 < report.chunks_embedded < total, "the resumed run embedded everything again"
    after = workspace(model=str(second_model)).status()
    assert (after.model, after.chunks, after.migration) == (model_id(second_model), total, None)


def test_a_migration_killed_mid_switch_never_mixes_models_and_the_next_sync_finishes_it(
    workspace: Callable[..., MemoryService], second_model: Path
) -> None:
    svc = workspace(model=str(second_model))
    before = svc.status()
    old_answer = found(svc.search(ask(), reinforce=False))
    # keep_live links every note once, then put_new links each: die half-way through putting the new files in place
    limit = before.files + before.files // 2
    code = SWITCHER.format(root=str(svc.root), limit=limit, settings={**SETTINGS, "model": str(second_model)})
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=600, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-2000:]
    models = svc.output_dir / MODELS_DIR
    assert (models / SWITCH_FILE).is_file()
    live = json.loads((svc.output_dir / "sync-state.json").read_text())
    assert live["model"] == BUNDLED_MODEL_ID
    names = {decode(p.read_bytes(), str(p)).metadata["model"]["name"] for p in svc.output_dir.glob("notes/*.aif-bin")}
    assert names == {BUNDLED_MODEL_ID, model_id(second_model)}, "the kill did not land mid-switch"

    reader = workspace(model=str(second_model))  # another process reading now: the old model, whole
    index, warnings = reader.index()
    assert not warnings and not reader.ws.index.damaged and len(index) == before.chunks
    assert found(reader.search(ask(), reinforce=False)) == old_answer

    synced = workspace(model=str(second_model)).sync()  # its first step finishes the switch
    assert not synced.failed and synced.chunks_embedded == 0
    after = workspace(model=str(second_model)).status()
    assert (after.model, after.files, after.chunks, after.migration) == (
        model_id(second_model),
        before.files,
        before.chunks,
        None,
    )
    assert not (models / SWITCH_FILE).exists()
    names = {decode(p.read_bytes(), str(p)).metadata["model"]["name"] for p in svc.output_dir.glob("notes/*.aif-bin")}
    assert names == {model_id(second_model)}
    back = workspace().ws.migrate()  # the old model's files were all kept
    assert back is not None and back.switched and back.chunks_embedded == 0
