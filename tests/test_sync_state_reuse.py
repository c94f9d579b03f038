"""A sync reuses the state it saved itself (no parse of the whole file per one-note save), never a stale one."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from botbin.service import MemoryService
from botbin.sync import state as state_module
from botbin.sync.state import STATE_FILE, FileEntry, SyncState, load_state, remember_state, save_state
from botbin.wire.requests import SyncRequest


def _state(n: int) -> SyncState:
    state = SyncState(model="m", chunker={"target_tokens": 256})
    for i in range(n):
        state.files[f"n{i}.md"] = FileEntry("0" * 32, "2026-12-01T00:00:00Z", 1, f"out/n{i}.aif-bin", 10, 5, ino=i)
    return state


def test_the_saved_state_is_handed_out_once_and_only_while_the_file_is_unchanged(tmp_path: Path) -> None:
    path = tmp_path / STATE_FILE
    state = _state(3)
    save_state(path, state)
    remember_state(path, state)
    assert load_state(path, "out")[0] is not state  # a reader always parses
    assert load_state(path, "out", reuse=True)[0] is state
    assert load_state(path, "out", reuse=True)[0] is not state  # handed out once
    remember_state(path, state)
    other = _state(4)
    save_state(path, other)  # another writer (or process) replaced the file
    reloaded, warnings = load_state(path, "out", reuse=True)
    assert reloaded is not state and sorted(reloaded.files) == sorted(other.files) and warnings == []


def test_one_note_syncs_reuse_the_state_and_agree_with_the_file(
    make_service: Callable[..., MemoryService], monkeypatch: pytest.MonkeyPatch
) -> None:
    service = make_service({"MEMORY.md": "# M\n\nFirst fact.\n", "memory/a.md": "# A\n\nAlpha.\n"})
    service.sync()
    parsed: list[int] = []
    real_loads = json.loads

    def counting_loads(text: str) -> object:
        parsed.append(len(text))
        return real_loads(text)

    monkeypatch.setattr(state_module.json, "loads", counting_loads)
    for i in range(3):
        (service.root / "memory/a.md").write_text(f"# A\n\nAlpha {i}.\n", encoding="utf-8")
        report = service.sync(SyncRequest(only=frozenset(["memory/a.md"])))
        assert report.modified == ("memory/a.md",)
        assert (
            service.sync(SyncRequest(only=frozenset(["memory/a.md"]))).unchanged == 1
        )  # the watcher's echo of the save
    assert parsed == []  # each sync took the state the previous one saved or read
    monkeypatch.setattr(state_module.json, "loads", real_loads)
    note_md5 = hashlib.md5((service.root / "memory/a.md").read_bytes()).hexdigest()
    fresh, _ = load_state(service.root / "memory/aifbin" / STATE_FILE)  # the file and its journal, as a reader
    assert fresh.files["memory/a.md"].hash == note_md5
    (service.root / "memory/aifbin" / STATE_FILE).write_text("{damaged", encoding="utf-8")
    assert service.sync().warnings  # a damaged file is read (and rebuilt), not the remembered state
