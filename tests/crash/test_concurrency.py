"""Two writers on one workspace: an in-process MemoryService (the server side) and `botbin sync` CLI
subprocesses, while notes are edited, added, deleted and renamed.

Both sides use the real all-MiniLM-L6-v2: a CLI process always does, and a service with the FakeEmbedder
would record another model id, so each side would re-embed every note the other one wrote.

Promises checked (issue 9, "Concurrency"):
- the lock serializes writers: while the service syncs, a CLI sync waits and writes nothing, then succeeds;
  with a small lock_timeout_s it exits 3 with one `botbin: error: ... another botbin process is syncing`
  line and no traceback; a service sync while the CLI holds the lock raises LockedError naming the lock file;
- a reader decoding every .aif-bin (and the state file) during the writes never sees a half-written file:
  decode succeeds or the file is absent;
- no update is lost: after the last sync, every note's latest bytes are what its output and the state file
  hold, no output is left for a deleted or moved note, and a service loading the index from the outputs
  holds each note's latest version and finds its last edit by BM25;
- a sync that waited for the lock does not undo what the other process synced meanwhile (it scans under the
  lock), and a loaded index learns what a CLI synced while the service waited (it reloads under the lock).
"""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

import botbin.sync.engine as engine
from botbin.aifbin import decode
from botbin.errors import AifBinFormatError, LockedError
from botbin.service import MemoryService
from botbin.sync.documents import output_rel
from botbin.sync.lock import LOCK_FILE
from botbin.sync.state import STATE_FILE
from botbin.wire.requests import SearchRequest

from .vault import CONFIG, ENV, OUTPUT_DIR, generated_note, md5, note_paths, run_sync, sync_cmd
from .verify import outputs

pytestmark = [pytest.mark.crash, pytest.mark.model]
PATIENT_ENV = {**ENV, "BOTBIN_LOCK_TIMEOUT_S": "300"}


def make_workspace(root: Path, n: int = 16) -> Path:
    rng = random.Random(n)
    for i in range(n):
        path = root / "notes" / f"note {i:02d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generated_note(rng, f"Note {i}"), encoding="utf-8")
    (root / "botbin.toml").write_text(CONFIG, encoding="utf-8")
    return root


def service(ws: Path, lock_timeout_s: float = 300) -> MemoryService:
    return MemoryService(ws, {"lock_timeout_s": lock_timeout_s}, env={})


def snapshot(ws: Path) -> dict[str, tuple[int, int]]:
    files = [*outputs(ws), ws / OUTPUT_DIR / STATE_FILE]
    return {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in files if p.exists()}


def append(ws: Path, rel: str, line: str) -> None:
    with (ws / rel).open("a", encoding="utf-8") as handle:
        handle.write(f"\n{line}\n")


class Reader(threading.Thread):
    """Decodes every output and parses the state file over and over until stopped."""

    def __init__(self, ws: Path) -> None:
        super().__init__(daemon=True)
        self.ws, self.stop, self.decoded = ws, threading.Event(), 0
        self.bad: list[str] = []

    def run(self) -> None:
        state = self.ws / OUTPUT_DIR / STATE_FILE
        while not self.stop.is_set():
            for path in [*outputs(self.ws), state]:
                try:
                    data = path.read_bytes()
                    if path == state:
                        json.loads(data)
                    else:
                        decode(data, str(path))
                    self.decoded += 1
                except FileNotFoundError:
                    continue
                except (AifBinFormatError, ValueError) as exc:
                    self.bad.append(f"{path}: {exc}")
            time.sleep(0.002)


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[Reader]:
    thread = Reader(make_workspace(tmp_path / "ws"))
    thread.start()
    yield thread
    thread.stop.set()
    thread.join(10)
    assert not thread.bad, thread.bad[:5]


def test_the_lock_serializes_the_service_and_the_cli(reader: Reader) -> None:
    ws = reader.ws
    svc = service(ws)
    svc.sync()
    append(ws, "notes/note 00.md", "A change the service is syncing.")
    inside, release = threading.Event(), threading.Event()

    def hold(_done: int, _total: int) -> None:
        inside.set()
        release.wait(600)

    server = threading.Thread(target=svc.sync, kwargs={"progress": hold})
    server.start()
    try:
        assert inside.wait(60), "the service sync never started"
        quick = run_sync(ws, env={**ENV, "BOTBIN_LOCK_TIMEOUT_S": "0.5"})
        assert quick.returncode == 3, quick.stderr
        assert quick.stderr.startswith("botbin: error: ") and quick.stderr.count("\n") == 1, quick.stderr
        assert "another botbin process is syncing" in quick.stderr and LOCK_FILE in quick.stderr
        before = snapshot(ws)
        waiting = subprocess.Popen(
            sync_cmd(ws), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=PATIENT_ENV
        )
        time.sleep(5)  # it starts, scans and polls for the lock (filelock shows no sign of waiting)
        assert waiting.poll() is None, "the CLI sync did not wait for the lock"
        assert snapshot(ws) == before, "the CLI wrote while the service held the lock"
    finally:
        release.set()
        server.join(120)
    _out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err

    for i in range(1, 9):  # enough new text that the CLI holds the lock for seconds (model load, embedding)
        append(ws, f"notes/note {i:02d}.md", f"Second round {i}: {generated_note(random.Random(i), 'x')}")
    cli = subprocess.Popen(sync_cmd(ws), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    probe = FileLock(str(ws / OUTPUT_DIR / LOCK_FILE))
    while cli.poll() is None:
        try:
            probe.acquire(timeout=0)
            probe.release()
            time.sleep(0.01)
        except Timeout:
            break  # the CLI holds the lock
    assert cli.poll() is None, "the CLI finished before the probe saw it hold the lock"
    with pytest.raises(LockedError, match="another botbin process is syncing") as raised:
        service(ws, lock_timeout_s=0.2).sync()
    assert raised.value.path == str(ws / OUTPUT_DIR / LOCK_FILE)
    report = svc.sync()  # a patient service waits for the CLI, then finds nothing left to do
    assert cli.wait(300) == 0
    assert not report.failed
    assert_store_current(ws)


def test_interleaved_edits_and_syncs_lose_no_update(reader: Reader) -> None:
    ws, rng = reader.ws, random.Random(7)
    svc = service(ws)
    svc.sync()
    svc.index()  # loaded: each sync patches it, a sync after a CLI sync reloads it
    last_edit: dict[str, str] = {}
    serial = 0

    def edit(rel: str) -> None:
        nonlocal serial
        serial += 1
        last_edit[rel] = f"zedit{serial}q"
        append(ws, rel, f"Edit {serial} mentions {last_edit[rel]} and {generated_note(rng, 'y')[:200]}")

    for round_no in range(4):
        notes = note_paths(ws)
        for rel in rng.sample(notes, 2):
            edit(rel)
        gone, moved = rng.sample([n for n in notes if n not in last_edit], 2)
        (ws / gone).unlink()
        (ws / moved).rename(ws / moved.replace(".md", f" r{round_no}.md"))
        new = f"notes/new {round_no}.md"
        (ws / new).write_text(generated_note(rng, f"New {round_no}"), encoding="utf-8")
        cli = subprocess.Popen(sync_cmd(ws), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=PATIENT_ENV)
        errors: list[BaseException] = []
        server = threading.Thread(target=_catch, args=(errors, svc.sync))
        time.sleep(rng.uniform(0, 1.5))
        server.start()
        for _ in range(3):  # edits while both writers run
            time.sleep(rng.uniform(0.1, 1.0))
            edit(rng.choice(note_paths(ws)))
        server.join(300)
        _out, err = cli.communicate(timeout=300)
        assert cli.returncode == 0, err
        assert not errors, errors
    report = svc.sync()  # the last sync: it starts after the last edit
    assert not report.failed
    assert reader.decoded > 100, "the reader hardly ran"
    assert_store_current(ws)
    # A new service (another editor, a CLI search) loads the index from the outputs, and the live one
    # reloads what the CLI synced.
    assert_index_current(service(ws), last_edit)
    assert_index_current(svc, last_edit)


def _catch(errors: list[BaseException], call: Callable[[], object]) -> None:
    try:
        call()
    except BaseException as exc:  # reported by the test thread
        errors.append(exc)


def assert_store_current(ws: Path) -> None:
    """The outputs and the state file hold exactly the notes on disk, at their latest bytes."""
    notes = note_paths(ws)
    assert sorted(p.relative_to(ws).as_posix() for p in outputs(ws)) == sorted(output_rel(n, OUTPUT_DIR) for n in notes)
    state = json.loads((ws / OUTPUT_DIR / STATE_FILE).read_text(encoding="utf-8"))
    assert sorted(state["files"]) == notes
    for rel in notes:
        current = md5((ws / rel).read_bytes())
        doc = decode((ws / output_rel(rel, OUTPUT_DIR)).read_bytes(), rel)
        assert doc.metadata["source_md5"] == current, f"{rel}: output holds an older version"
        assert state["files"][rel]["hash"] == current, f"{rel}: state file records an older version"


def assert_index_current(svc: MemoryService, last_edit: dict[str, str]) -> None:
    """The service's index holds exactly the notes on disk at their latest bytes; BM25 finds each last edit."""
    notes = note_paths(svc.root)
    index, _warnings = svc.index()
    assert index.note_paths() == notes
    for rel in notes:
        current = md5((svc.root / rel).read_bytes())
        assert index.chunk_vector(rel, (0, 10**6), current) is not None, f"{rel}: index holds an older version"
    for rel, token in last_edit.items():
        hits = svc.search(SearchRequest(query=token, k=1, alpha=0.0, show_all=True)).hits
        assert hits and hits[0].path == rel, (rel, token, hits[:1])


def test_a_sync_that_waited_for_the_lock_keeps_what_the_other_writer_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = make_workspace(tmp_path / "ws", n=4)
    svc = service(ws)
    svc.sync()
    real_lock = engine.workspace_lock

    def other_process_first(output_dir: Path, timeout_s: float) -> AbstractContextManager[None]:
        # Between this sync's scan and its lock: the user adds a note and a CLI sync indexes it.
        (ws / "notes" / "late.md").write_text("# Late\n\nA note written while a sync waited.\n", encoding="utf-8")
        done = run_sync(ws)
        if done.returncode != 0 or not (ws / OUTPUT_DIR / "notes" / "late.aif-bin").is_file():
            raise RuntimeError(f"the CLI sync failed: {done.stderr[-2000:]}")
        return real_lock(output_dir, timeout_s)

    monkeypatch.setattr(engine, "workspace_lock", other_process_first)
    report = svc.sync()
    monkeypatch.undo()
    assert "notes/late.md" not in report.deleted, report
    assert_store_current(ws)


def test_a_loaded_index_sees_what_the_cli_synced_while_the_service_waited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = make_workspace(tmp_path / "ws", n=4)
    svc = service(ws)
    svc.sync()
    svc.index()
    append(ws, "notes/note 01.md", "The quokkazz visited while a sync waited for the lock.")
    real_lock = engine.workspace_lock

    def other_process_first(output_dir: Path, timeout_s: float) -> AbstractContextManager[None]:
        done = run_sync(ws)  # the CLI syncs the edit while this sync waits for the lock
        if done.returncode != 0 or json.loads(done.stdout)["modified"] != ["notes/note 01.md"]:
            raise RuntimeError(f"the CLI sync did not sync the edit: {done.stdout} {done.stderr[-2000:]}")
        return real_lock(output_dir, timeout_s)

    monkeypatch.setattr(engine, "workspace_lock", other_process_first)
    svc.sync()
    monkeypatch.undo()
    assert_store_current(ws)
    svc.sync()  # a later sync, with nothing new on disk
    assert_index_current(svc, {"notes/note 01.md": "quokkazz"})
