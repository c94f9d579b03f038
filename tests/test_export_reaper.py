"""Issue 21: the ONNX export child is reaped as soon as it ends (it used to stay a zombie until its parent
exited), and its outcome is still read. A stand-in child that prints an outcome line; no model, about 1 s."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from botbin.embedding import auto
from botbin.embedding.model import ModelSpec


def _state(pid: int) -> str | None:
    """The process state letter from /proc (Z: zombie), None once it is gone (reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def test_export_child_is_reaped_and_its_outcome_kept(tmp_path: Path, monkeypatch: Any) -> None:
    outcome = {"path": str(tmp_path / "m.onnx"), "min_cosine": 0.99999, "seconds": 0.1}

    def child(model: Path, batch_size: int, env: Any = None, model_id: Any = None) -> subprocess.Popen[str]:
        code = f"print({json.dumps(json.dumps(outcome))})"
        return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)

    monkeypatch.setattr(auto, "start_export", child)
    monkeypatch.setattr(auto, "find_export", lambda spec, env=None: None)
    monkeypatch.setattr(auto, "find_failure", lambda spec, env=None: None)
    embedder = auto.AutoEmbedder(ModelSpec("local:test", tmp_path), env={})
    embedder.schedule_export()
    proc = embedder._export_proc
    assert proc is not None
    deadline = time.monotonic() + 30
    while _state(proc.pid) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _state(proc.pid) is None, f"the export child lingers (state {_state(proc.pid)})"
    done = embedder.wait_export(30)
    assert done is not None and done.path == tmp_path / "m.onnx" and done.error is None
