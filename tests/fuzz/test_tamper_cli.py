"""The tamper cases through the real ``botbin`` command (a subprocess per call, the real model), one or more per
file botbin reads back: the state file, its journal, an output, the load cache, the spare embeddings and the
memo store. Each call exits 0 (or with its documented code), never with a traceback; stderr names the file;
the canaries outside the workspace are untouched. (The ANN cache is read only by long-running servers, never
by a one-shot command: test_tamper_caches.py loads it in a child process; the publisher id needs a team
database: test_tamper_caches.py checks it through the workspace.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgpack
import numpy as np
import pytest
from tamper_cases import (
    ANSWER,
    NOTES,
    QUERY,
    Canaries,
    header_field_plus_one,
    make_canaries,
    with_field,
    write_same_inode,
)

from botbin.aifbin import decode
from botbin.index.load_cache import LOAD_CACHE_FILE
from botbin.memory.memos import MEMO_FILE
from botbin.sync.spare import SPARE_FILE
from botbin.sync.state import STATE_FILE
from botbin.sync.state_log import log_path
from conftest import write_notes

pytestmark = pytest.mark.model
FAST_KDF = "kdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"


def botbin(ws: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}
    full.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "botbin", *args, "-w", str(ws)],
        capture_output=True,
        text=True,
        env=full,
        timeout=600,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = write_notes(tmp_path / "ws", NOTES)
    done = botbin(root, "sync")
    assert done.returncode == 0 and done.stdout.startswith("synced: 3 added"), done.stderr
    return root


@pytest.fixture
def canaries(tmp_path: Path, ws: Path) -> Canaries:
    return make_canaries(tmp_path / "outside", (ws / "memory/aifbin/memory/2026-11-03.aif-bin").read_bytes())


def _found(ws: Path) -> list[str]:
    done = botbin(ws, "search", QUERY, "-k", "1", "--json")
    assert done.returncode == 0, done.stderr
    return [hit["path"] for hit in json.loads(done.stdout)["hits"]]


def _state(ws: Path) -> Path:
    return ws / "memory" / "aifbin" / STATE_FILE


def test_cli_sync_never_deletes_what_a_hostile_entry_names(ws: Path, canaries: Canaries) -> None:
    data = json.loads(_state(ws).read_text())
    for i, target in enumerate([canaries.text, os.path.relpath(canaries.aifbin, ws)]):
        data["files"][f"memory/gone{i}.md"] = {**data["files"][ANSWER], "output": str(target)}
    _state(ws).write_text(json.dumps(data))
    done = botbin(ws, "sync", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["deleted"] == [], done.stdout
    (warning,) = report["warnings"]
    assert str(_state(ws)) in warning and "rebuilt from 3 AIF-BIN files" in warning
    canaries.untouched()
    assert _found(ws) == [ANSWER]


def test_cli_encrypt_never_removes_what_a_hostile_entry_names(ws: Path, canaries: Canaries) -> None:
    (ws / "botbin.toml").write_text(FAST_KDF)
    data = json.loads(_state(ws).read_text())
    data["files"][ANSWER]["output"] = str(canaries.text)
    _state(ws).write_text(json.dumps(data))
    done = botbin(ws, "encrypt", env={"BOTBIN_PASSPHRASE": "hunter2 horse battery"})
    assert done.returncode == 0, done.stderr
    assert str(_state(ws)) in done.stderr
    canaries.untouched()


@pytest.mark.parametrize("number", ["Infinity", "1e999", "9" * 4301])
def test_cli_status_search_and_sync_survive_a_hostile_number(ws: Path, number: str) -> None:
    """Failure 11."""
    text = with_field(_state(ws).read_text(), ANSWER, "chunks", number)
    for command in (["status"], ["search", QUERY], ["sync"]):
        _state(ws).write_text(text)
        done = botbin(ws, *command)
        assert done.returncode == 0, done.stderr
        assert str(_state(ws)) in done.stderr and "rebuilt" in done.stderr, done.stderr
    assert "warning" not in botbin(ws, "status").stderr  # mended by that sync


def test_cli_status_names_a_hostile_journal_line(ws: Path) -> None:
    data = json.loads(_state(ws).read_text())
    line = {"base": data["log_id"], "header": {}, "files": {"memory/x.md": {**data["files"][ANSWER], "output": "/x"}}}
    log_path(_state(ws)).write_text(json.dumps(line) + "\n")
    done = botbin(ws, "status")
    assert done.returncode == 0 and str(log_path(_state(ws))) in done.stderr, done.stderr


def test_cli_same_size_damage_is_stale_named_and_repaired(ws: Path) -> None:
    """Failure 7."""
    path = output_of_ws(ws)
    write_same_inode(path, header_field_plus_one(path.read_bytes(), 5), keep_mtime=True)
    status = botbin(ws, "status")
    assert "changed since the last sync" in status.stdout and "stale:       none" not in status.stdout, status.stdout
    searched = botbin(ws, "search", QUERY, "-k", "3")
    assert str(path) in searched.stderr and "next sync rebuilds it" in searched.stderr, searched.stderr
    synced = botbin(ws, "sync")
    assert " 1 modified" in synced.stdout and str(path) in synced.stderr, (synced.stdout, synced.stderr)
    assert _found(ws) == [ANSWER]
    assert "none" in botbin(ws, "status").stdout.split("stale:")[1].splitlines()[0]


def output_of_ws(ws: Path) -> Path:
    return ws / "memory" / "aifbin" / (ANSWER[:-3] + ".aif-bin")


def test_cli_search_ignores_a_load_cache_holding_nan(ws: Path) -> None:
    assert _found(ws) == [ANSWER]  # a one-shot search writes the load cache as it exits
    path = ws / "memory" / "aifbin" / LOAD_CACHE_FILE
    with np.load(path) as npz:
        arrays = {name: npz[name] for name in npz.files}
    arrays["matrix"][:] = np.nan
    with open(path, "wb") as out:
        np.savez(out, **arrays)
    done = botbin(ws, "search", QUERY, "-k", "1", "--json")
    assert [h["path"] for h in json.loads(done.stdout)["hits"]] == [ANSWER]
    assert str(path) in done.stderr and "NaN" in done.stderr, done.stderr


def test_cli_sync_never_lends_a_nan_spare_vector(ws: Path) -> None:
    text = (ws / ANSWER).read_text()
    (ws / ANSWER).unlink()
    assert " 1 deleted" in botbin(ws, "sync").stdout
    spare = ws / "memory" / "aifbin" / SPARE_FILE
    raw = msgpack.unpackb(spare.read_bytes(), raw=False)
    raw["vectors"] = np.full(len(raw["vectors"]) // 4, np.nan, "<f4").tobytes()
    spare.write_bytes(msgpack.packb(raw, use_bin_type=True))
    (ws / ANSWER).write_text(text)
    done = botbin(ws, "sync")
    assert done.returncode == 0 and " 1 added" in done.stdout and str(spare) in done.stderr, done.stderr
    doc = decode(output_of_ws(ws).read_bytes(), "x")
    assert all(np.isfinite(c.embedding).all() for c in doc.chunks)
    assert _found(ws) == [ANSWER]


def test_cli_search_survives_memo_rows_of_the_wrong_type(ws: Path) -> None:
    import sqlite3

    assert _found(ws) == [ANSWER]  # makes the memo store
    db_path = ws / "memory" / "aifbin" / MEMO_FILE
    with sqlite3.connect(db_path) as db:
        db.execute("UPDATE memos SET decay_score = 1e999, created = 'soon', tags = '{'")
    done = botbin(ws, "search", QUERY, "-k", "1")
    assert done.returncode == 0 and str(db_path) in done.stderr, done.stderr
    assert _found(ws) == [ANSWER]


def test_cli_never_reads_through_a_state_file_linked_out(ws: Path, canaries: Canaries) -> None:
    _state(ws).unlink()
    _state(ws).symlink_to(canaries.text)
    for command in (["status"], ["search", QUERY], ["sync"]):
        done = botbin(ws, *command)
        assert done.returncode == 0 and "symbolic link" in done.stderr, done.stderr
    canaries.untouched()
    assert not _state(ws).is_symlink() and _found(ws) == [ANSWER]
