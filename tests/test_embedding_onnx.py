"""ONNX Runtime embedding: the one-time export (identity key, verification, atomic commit, remembered failure),
the ONNX embedder against torch, the AutoEmbedder's choice, and a `botbin search` child that never imports torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from botbin.embedding import (
    AutoEmbedder,
    ModelSpec,
    SentenceTransformerEmbedder,
    bundled_model_path,
    onnx_export,
    resolve_model,
)
from botbin.embedding.onnx_backend import OnnxEmbedder, mean_pool, unsupported_reason
from botbin.embedding.onnx_export import (
    cache_dirs,
    export_and_verify,
    find_export,
    find_failure,
    model_key,
    user_cache_dir,
)
from botbin.service import MemoryService
from conftest import write_notes

REPO = Path(__file__).resolve().parents[1]


def linked_model(folder: Path) -> ModelSpec:
    """A writable model folder of symlinks to the packaged files (so no test writes into the venv)."""
    folder.mkdir(parents=True)
    for src in (p for p in bundled_model_path().iterdir() if p.name != ".botbin-onnx"):  # not its export
        (folder / src.name).symlink_to(src)
    return resolve_model(str(folder))


def test_mean_pool_matches_a_hand_computed_mean() -> None:
    hidden = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    mask = np.array([[1, 1, 0], [1, 0, 0]], dtype=np.int64)
    out = mean_pool(hidden, mask)
    expected = np.array([[1.0, 2.0], [6.0, 7.0]], dtype=np.float32)  # mean of rows kept by the mask
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(out, expected, atol=1e-7)


def test_only_mean_pooled_transformers_are_exported(tmp_path: Path) -> None:
    assert unsupported_reason(resolve_model(None)) is None
    spec = linked_model(tmp_path / "m")
    (spec.path / "modules.json").unlink()
    modules = json.loads((bundled_model_path() / "modules.json").read_text())
    modules.append({"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"})
    (spec.path / "modules.json").write_text(json.dumps(modules))
    assert "module chain" in (unsupported_reason(spec) or "")


def test_model_key_follows_the_model_identity(tmp_path: Path) -> None:
    a, b = linked_model(tmp_path / "a"), linked_model(tmp_path / "b")
    assert model_key(a) == model_key(a) and model_key(a) != model_key(b)  # another folder is another model id
    before = model_key(a)
    (a.path / "config.json").unlink()
    (a.path / "config.json").write_text((bundled_model_path() / "config.json").read_text().replace("384", "385"))
    assert model_key(a) != before


def test_cache_dirs_are_the_model_folder_then_the_user_cache(tmp_path: Path) -> None:
    spec = resolve_model(None)
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert user_cache_dir(env) == tmp_path / "xdg" / "botbin" / "onnx"
    assert cache_dirs(spec, env) == [spec.path / ".botbin-onnx", tmp_path / "xdg" / "botbin" / "onnx"]


def test_a_record_whose_file_does_not_match_is_ignored(tmp_path: Path) -> None:
    spec = linked_model(tmp_path / "m")
    folder = cache_dirs(spec)[0]
    folder.mkdir()
    key = model_key(spec)
    (folder / f"{key}.onnx").write_bytes(b"truncated")
    (folder / f"{key}.json").write_text(json.dumps({"verified": True, "size_bytes": 999}))
    assert find_export(spec) is None
    (folder / f"{key}.json").write_text(json.dumps({"verified": True, "size_bytes": 9}))
    assert find_export(spec) == folder / f"{key}.onnx"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, real_embedder: SentenceTransformerEmbedder) -> ModelSpec:
    """A linked model folder with a verified export, made once from the session's loaded weights."""
    spec = linked_model(tmp_path_factory.mktemp("onnx") / "mini")
    with real_embedder.lock:
        outcome = export_and_verify(spec, real_embedder.loaded_model(), {})
    assert outcome.path is not None and outcome.error is None, outcome
    assert outcome.min_cosine is not None and outcome.min_cosine >= onnx_export.MIN_COSINE
    assert outcome.path.parent == spec.path / ".botbin-onnx" and not list(outcome.path.parent.glob(".*tmp*"))
    return spec


@pytest.mark.model
def test_onnx_vectors_equal_torch_vectors(exported: ModelSpec, real_embedder: SentenceTransformerEmbedder) -> None:
    path = find_export(exported, {})
    assert path is not None
    texts = [
        "the alert queue moved to NATS JetStream",
        "日本語のテキスト",
        "",
        "word " * 400,
        *(p.read_text(encoding="utf-8")[:3000] for p in sorted(REPO.glob("docs/*.md"))[:20]),
    ]
    onnx, torch = OnnxEmbedder(exported, path, batch_size=8).embed(texts), real_embedder.embed(texts)
    assert onnx.shape == torch.shape == (len(texts), 384)
    assert float((onnx * torch).sum(axis=1).min()) >= 0.9999
    assert np.allclose(onnx, torch, atol=1e-5)


@pytest.mark.model
def test_the_export_traces_eager_attention_and_leaves_the_model_as_it_was(
    tmp_path: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    """SDPA, transformers' default, traces into NaN guards (IsNaN, Where) that ONNX Runtime runs ~20 % slower;
    the export traces eager attention and hands the shared torch model back with its own implementation."""
    import onnx

    spec = linked_model(tmp_path / "m")
    with real_embedder.lock:
        model = real_embedder.loaded_model()
        before = model[0].auto_model.config._attn_implementation
        outcome = export_and_verify(spec, model, {})
        assert model[0].auto_model.config._attn_implementation == before
    assert outcome.path is not None, outcome
    ops = {node.op_type for node in onnx.load(str(outcome.path), load_external_data=False).graph.node}
    assert "Softmax" in ops and "IsNaN" not in ops


@pytest.mark.model
def test_a_failed_export_is_remembered_and_torch_serves(
    tmp_path: Path, real_embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = linked_model(tmp_path / "m")
    calls = []

    def broken(model: object, target: Path) -> None:
        calls.append(target)
        raise RuntimeError("exporter exploded")

    monkeypatch.setattr(onnx_export, "_export", broken)
    auto = AutoEmbedder(spec, env={"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    auto.torch = real_embedder
    outcome = auto.ensure_export()
    assert outcome is not None and outcome.path is None and "exporter exploded" in (outcome.error or "")
    assert "exporter exploded" in (find_failure(spec) or "")
    assert auto.ensure_export() is None and len(calls) == 1  # not retried
    assert auto.backend == "torch"
    assert np.allclose(auto.embed(["hello"]), real_embedder.embed(["hello"]))


_EXPORT_PROBE = """import json, sys
from botbin.embedding import AutoEmbedder, ModelSpec, resolve_model
spec = resolve_model(sys.argv[1])
auto = AutoEmbedder(ModelSpec(sys.argv[2], spec.path) if len(sys.argv) > 2 else spec)
first = auto.embed(["where is the failover runbook"])
outcome = auto.wait_export(600)
print(json.dumps({"backend": auto.backend, "path": None if outcome is None else str(outcome.path),
    "error": None if outcome is None else outcome.error, "vector": first[0].tolist(),
    "ort": "onnxruntime" in sys.modules, "torch": "torch" in sys.modules}))
"""


@pytest.mark.model
@pytest.mark.parametrize("model_id", [None, "sentence-transformers/all-MiniLM-L6-v2"], ids=["folder", "named"])
def test_the_first_torch_embed_exports_in_a_child_then_onnx_serves(tmp_path: Path, model_id: str | None) -> None:
    """Issue 21: the export and its verification run in child processes, so the torch process never loads
    onnxruntime; it keeps torch (before, it switched to ONNX in the same process), and the next process finds
    the export without loading torch. ``named``: a model whose id is not its folder's (the bundled model): the
    child keyed its export by the folder, so no process ever found it and every one embedded with torch."""
    spec = linked_model(tmp_path / "m")
    if model_id is not None:
        spec = ModelSpec(model_id, spec.path)
    env = {**_env(), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    named = [] if model_id is None else [model_id]
    proc = subprocess.run(
        [sys.executable, "-c", _EXPORT_PROBE, str(spec.path), *named],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    probe = json.loads(proc.stdout.splitlines()[-1])
    assert probe["error"] is None and probe["path"] is not None, probe
    assert probe["torch"] and not probe["ort"] and probe["backend"] == "torch"
    assert find_export(spec) == Path(probe["path"])
    fresh = AutoEmbedder(spec, env={"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert fresh.backend == "onnx" and not fresh.torch.is_loaded
    first = np.asarray(probe["vector"], dtype=np.float32)
    assert float(fresh.embed(["where is the failover runbook"])[0] @ first) >= 0.9999


def test_torch_can_be_forced(tmp_path: Path) -> None:
    spec = linked_model(tmp_path / "m")
    assert AutoEmbedder(spec, env={"BOTBIN_EMBED_BACKEND": "torch"}).onnx() is None


_PROBE = """import json, sys
from botbin.cli import main
rc = main(sys.argv[1:])
print("PROBE " + json.dumps({"rc": rc, "mods": sorted(m for m in sys.modules
      if m.split(".")[0] in ("torch", "sentence_transformers", "transformers"))}), file=sys.stderr)
"""


@pytest.mark.model
def test_cli_search_never_imports_torch_once_exported(tmp_path: Path, exported: ModelSpec) -> None:
    ws = write_notes(
        tmp_path / "ws",
        {
            "ops/queue.md": "# Queue\n\nThe alert queue moved to NATS JetStream.\n",
            "deploy.md": "# Deploy\n\nBump the version, then run the tests.\n",
        },
    )
    settings = {"vault": True, "model": str(exported.path)}
    report = MemoryService(ws, settings, env={}).sync()  # the shared embedder finds the export: ONNX embeds
    assert not report.failed
    args = ["search", "message broker", "--workspace", str(ws), "--vault", "--model", str(exported.path), "--json"]
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**_env(), "XDG_CACHE_HOME": str(tmp_path / "xdg")},
    )
    probe = json.loads([x for x in proc.stderr.splitlines() if x.startswith("PROBE ")][-1][len("PROBE ") :])
    assert probe == {"rc": 0, "mods": []}, proc.stderr
    hits = json.loads(proc.stdout)["hits"]
    assert hits and hits[0]["path"] == "ops/queue.md"


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "BOTBIN_EMBED_BACKEND"}


def test_an_export_under_way_elsewhere_is_not_duplicated(tmp_path: Path) -> None:
    from filelock import FileLock

    spec = linked_model(tmp_path / "m")
    folder = cache_dirs(spec)[0]
    folder.mkdir()
    with FileLock(str(folder / f".{model_key(spec)}.lock")):
        outcome = export_and_verify(spec, object(), {})
    assert outcome.path is None and outcome.error == "another process is exporting this model"
    assert find_failure(spec) is None  # not a failure: the next torch process may export
