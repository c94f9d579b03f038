"""Deterministic crash windows: a real `botbin sync` process SIGKILLs itself at one chosen point.

A small runner (a subprocess, the fast FakeEmbedder) replaces ``botbin.sync.run.save_state`` with
``os.kill(os.getpid(), SIGKILL)``: the process dies after every output of the run is written and before
the state file records them, the longest window a random kill hits (test_sigkill.py). Promises checked:
- nothing is lost but bookkeeping: the next sync re-embeds nothing and converges to a fresh sync;
- an output the state file does not own yet is removed when its note is deleted (the journal file tells
  the next sync that the last one was killed, so it sweeps outputs no entry owns);
- a note edited and then reverted across such a crash gets its output back (that sync also distrusts
  outputs whose source_md5 disagrees with the state file).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from botbin import aifbin
from botbin.service import MemoryService
from botbin.sync.state import STATE_FILE
from conftest import FakeEmbedder, run_checker, write_notes

from .verify import assert_same_store, outputs

TESTS = Path(__file__).resolve().parents[1]
SETTINGS = {"include": ["**/*.md"]}
NOTES = {
    "a.md": "# Alpha\n\nThe cat sat on the mat while the build ran.\n",
    "b.md": "# Beta\n\nDeploys happen on Tuesdays after the review.\n",
    "c/d.md": "# Delta\n\nThe cache keeps vectors by chunk hash.\n",
}
RUNNER = """
import os, signal, sys
sys.path.insert(0, {tests!r})
from conftest import FakeEmbedder
import botbin.sync.run as run
from botbin.service import MemoryService

run.save_state = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
MemoryService({ws!r}, {settings!r}, embedder=FakeEmbedder(), env={{}}).sync()
"""


def sync_killed_before_state_save(ws: Path) -> None:
    """Sync ``ws`` in a process that is SIGKILLed when it first saves the state file."""
    code = RUNNER.format(tests=str(TESTS), ws=str(ws), settings=SETTINGS)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != -9:  # not an assertion: a broken runner is an error, not a failed promise
        raise RuntimeError(f"the runner was not killed (exit {done.returncode}): {done.stderr[-2000:]}")


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.fixture
def service(make_service: Callable[..., MemoryService]) -> Callable[[], MemoryService]:
    """service() -> a fresh MemoryService (fake embedder) over the workspace holding NOTES."""
    ws = make_service(NOTES, **SETTINGS).root
    return lambda: make_service(root=ws, **SETTINGS)


def test_crash_before_state_save_loses_no_embedding(
    service: Callable[[], MemoryService], fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    svc = service()
    svc.sync()
    state_before = svc.ws.state_path.read_bytes()
    write_notes(svc.root, {"a.md": NOTES["a.md"] + "\nA new line about lunch.\n", "e.md": "# Echo\n\nNew note.\n"})
    sync_killed_before_state_save(svc.root)
    assert svc.ws.state_path.read_bytes() == state_before
    assert (svc.output_dir / "e.aif-bin").is_file()
    embedded = fake_embedder.embedded
    report = service().sync()
    assert fake_embedder.embedded == embedded, "the outputs written before the crash were not reused"
    assert (report.added, report.modified) == (("e.md",), ("a.md",))
    reference = MemoryService(
        write_notes(
            tmp_path / "fresh",
            {
                p.relative_to(svc.root).as_posix(): p.read_bytes()
                for p in svc.root.rglob("*.md")
                if svc.output_dir not in p.parents
            },
        ),
        SETTINGS,
        embedder=FakeEmbedder(),
        env={},
    )
    reference.sync()
    assert_same_store(svc.root, reference.root)


@pytest.mark.parametrize(
    "synced_before",
    [
        pytest.param(True, id="state-file-exists"),
        pytest.param(False, id="cold-sync-no-state-file"),
    ],
)
def test_output_of_a_note_deleted_after_a_crash_is_removed(
    service: Callable[[], MemoryService], synced_before: bool
) -> None:
    svc = service()
    if synced_before:
        svc.sync()
    write_notes(svc.root, {"e.md": "# Echo\n\nA note that lives one crash long.\n"})
    sync_killed_before_state_save(svc.root)
    if not (svc.output_dir / "e.aif-bin").is_file() or svc.ws.state_path.is_file() != synced_before:
        raise RuntimeError("the crash did not leave e.aif-bin written and the state file as it was")
    (svc.root / "e.md").unlink()
    report = service().sync()
    assert not (svc.output_dir / "e.aif-bin").exists(), f"orphan output kept; report: {report}"
    checked = run_checker(svc.root, svc.output_dir)
    assert checked.returncode == 0, checked.stdout


def test_edit_reverted_after_a_crash_gets_its_output_back(service: Callable[[], MemoryService]) -> None:
    svc = service()
    svc.sync()
    original = (svc.root / "a.md").read_bytes()
    output = svc.output_dir / "a.aif-bin"
    size_before = output.stat().st_size
    (svc.root / "a.md").write_bytes(original.replace(b"cat", b"bat"))  # same length: same output size
    sync_killed_before_state_save(svc.root)
    if output.stat().st_size != size_before or "bat" not in aifbin.decode(output.read_bytes(), "a").chunks[0].text:
        raise RuntimeError("the crash did not leave a same-size output of the edited note")
    (svc.root / "a.md").write_bytes(original)  # the user undoes the edit
    report = service().sync()
    doc = aifbin.decode(output.read_bytes(), str(output))
    assert doc.metadata["source_md5"] == md5(svc.root / "a.md"), f"stale output kept; report: {report}"
    assert "cat" in doc.chunks[0].text
    assert len(outputs(svc.root)) == 3
    assert (svc.output_dir / STATE_FILE).is_file()
