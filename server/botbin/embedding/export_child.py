"""The ONNX export in child processes, one runtime per process: ``python -m botbin.embedding.onnx_export
export MODEL`` loads the weights with torch, exports and computes the torch reference vectors, then runs
``... verify MODEL CANDIDATE REFERENCE``, a second child that loads only ONNX Runtime and measures the least
cosine. A process that embeds with torch never loads onnxruntime for the export (two native runtimes in one
process crashed under load); it starts the export child and picks the export up at its next start.

Each child prints one JSON line on stdout (the outcome) and logs to stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import botbin

MODULE = "botbin.embedding.onnx_export"
"""What ``python -m`` runs in the children."""
VERIFY_TIMEOUT_S = 600.0
"""Longest wait for the verification child (loads ONNX Runtime and embeds a handful of texts)."""


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: this process's, the cache folder of ``env`` (which may differ from the
    process's), and a PYTHONPATH that finds this botbin first."""
    out = dict(os.environ)
    if env is not None and env is not os.environ:
        for name in ("XDG_CACHE_HOME", "HOME"):
            if name in env:
                out[name] = env[name]
            elif name == "XDG_CACHE_HOME":
                out.pop(name, None)
    here = str(Path(botbin.__file__).resolve().parents[1])
    out["PYTHONPATH"] = os.pathsep.join(p for p in (here, out.get("PYTHONPATH", "")) if p)
    return out


def export_command(model: Path, batch_size: int, model_id: str | None = None) -> list[str]:
    """The command line of the export child of the model folder ``model``; ``model_id``: the model's id in the
    parent (part of the export's key: the bundled model's folder alone would be keyed as a local folder)."""
    named = [] if model_id is None else ["--model-id", model_id]
    return [sys.executable, "-m", MODULE, "export", str(model), "--batch-size", str(batch_size), *named]


def start_export(
    model: Path, batch_size: int, env: Mapping[str, str] | None = None, model_id: str | None = None
) -> subprocess.Popen[str]:
    """Start the export child of ``model`` (id ``model_id``) in a session of its own (a Ctrl+C of the parent
    does not cut it short; it outlives the parent). Its stdout carries the outcome; its stderr is dropped."""
    return subprocess.Popen(
        export_command(model, batch_size, model_id),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=child_env(env),
        start_new_session=True,
    )


def verify_in_child(model: Path, candidate: Path, reference: Path, env: Mapping[str, str] | None = None) -> float:
    """Least cosine between the ONNX vectors of the verification texts (embedded by a child that loads only
    ONNX Runtime) and the torch vectors saved in ``reference`` (.npy). Raises RuntimeError when the child
    fails, with its reason."""
    command = [sys.executable, "-m", MODULE, "verify", str(model), str(candidate), str(reference)]
    proc = subprocess.run(
        command, capture_output=True, text=True, timeout=VERIFY_TIMEOUT_S, env=child_env(env), check=False
    )
    outcome = last_json(proc.stdout)
    cosine = outcome.get("min_cosine")
    if proc.returncode != 0 or not isinstance(cosine, (int, float)):
        lines = proc.stderr.strip().splitlines()
        reason = outcome.get("error") or (lines[-1] if lines else f"exit status {proc.returncode}")
        raise RuntimeError(f"verification failed: {reason}")
    return float(cosine)


def last_json(text: str) -> dict[str, object]:
    """The last line of ``text`` that is a JSON object ({} if none)."""
    for line in reversed(text.splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return {}
