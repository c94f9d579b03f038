"""A model folder that ships its own ONNX export (``onnx/model.onnx``) and no torch weights: ``model`` may name it,
and the migration embeds with it through ONNX Runtime (in a ``botbin sync`` child: this test process never loads
ONNX Runtime), with the same vectors as the torch model it was exported from."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from botbin.aifbin import decode
from botbin.embedding import ModelSpec
from botbin.embedding.onnx_export import export_and_verify
from botbin.service import MemoryService

from .test_migration import model_id


def onnx_only_folder(second_model: Path, tmp_path: Path) -> Path:
    """``second_model`` exported by botbin's own exporter, then copied without its torch weights, the export as
    ``onnx/model.onnx``."""
    from sentence_transformers import SentenceTransformer

    source = tmp_path / "l3-source"
    shutil.copytree(second_model, source)
    outcome = export_and_verify(ModelSpec(model_id(source), source), SentenceTransformer(str(source), device="cpu"))
    assert outcome.path is not None, outcome.error
    folder = tmp_path / "l3-onnx"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("model.safetensors", ".botbin-onnx"))
    (folder / "onnx").mkdir()
    shutil.copyfile(outcome.path, folder / "onnx" / "model.onnx")
    return folder


def vectors(svc: MemoryService) -> dict[str, np.ndarray]:
    state, _ = svc.ws.state()
    out = {}
    for rel, entry in state.files.items():
        path = svc.root / entry.output
        out[rel] = decode(path.read_bytes(), str(path)).embeddings()
    return out


def test_a_folder_with_its_own_onnx_export_and_no_torch_weights_migrates(
    workspace: Callable[..., MemoryService], second_model: Path, synced_topics: Path, tmp_path: Path
) -> None:
    folder = onnx_only_folder(second_model, tmp_path)
    assert not (folder / "model.safetensors").exists()
    svc = workspace()
    env = {k: v for k, v in os.environ.items() if k != "BOTBIN_EMBED_BACKEND"}  # as a user runs it: ONNX allowed
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "botbin",
            "--workspace",
            str(svc.root),
            "--vault",
            "sync",
            "--json",
            "--model",
            str(folder),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    migration = json.loads(done.stdout)["migration"]
    assert migration["switched"] and migration["toModel"] == model_id(folder)
    onnx = MemoryService(svc.root, {"vault": True, "model": str(folder)}, env={})
    assert onnx.status().model == model_id(folder)

    reference = tmp_path / "torch-ws"  # the same notes migrated with the torch model the export came from
    shutil.copytree(synced_topics, reference)
    torch_svc = MemoryService(reference, {"vault": True, "model": str(second_model)}, env={})
    report = torch_svc.ws.migrate()
    assert report is not None and report.switched
    got, want = vectors(onnx), vectors(torch_svc)
    assert set(got) == set(want)
    for rel, matrix in got.items():
        assert matrix.shape == want[rel].shape
        assert float(np.min(np.sum(matrix * want[rel], axis=1))) > 0.9999, rel
