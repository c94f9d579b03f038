"""One-time ONNX export of a sentence-transformers model's transformer: keyed by the model's identity, verified
against the torch output, written atomically next to the model files (else in the user cache), and a failure
remembered so that it is not retried by every process. Only ``export_and_verify`` imports torch; it verifies the
export in a child process that loads only ONNX Runtime (export_child.py). ``python -m botbin.embedding.onnx_export``
runs the export children (``main``)."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from botbin.embedding.export_child import MODULE, verify_in_child
from botbin.embedding.model import BATCH_SIZE, ModelSpec, resolve_model
from botbin.embedding.onnx_backend import OnnxEmbedder, unsupported_reason

log = logging.getLogger(__name__)

EXPORT_FORMAT = 2
"""Bumped when the exported graph or its record changes: older exports are then ignored (2: eager attention)."""
MIN_COSINE = 0.9999
"""Least cosine between the ONNX and the torch vector of every verification text."""
OPSET = 17
VERIFY_TEXTS = (
    "",
    "hello",
    "The alert queue moved to NATS JetStream in November; see [[Runbook]] for the failover steps.",
    "## Deploy checklist\n- [ ] bump the version\n- [x] run `pytest -q -x`\n```python\nprint('hi')\n```",
    "日本語のテキストと English mixed, with émojis 🚀 and ümlauts.",
    "https://example.com/a/very/long/url?with=query&and=fragments#section-2 plus words",
    "Long text past the model's 256-token limit, to check that truncation matches. " * 30,
)
"""Fixed verification set: empty, one word, prose, markdown with code, CJK and accents, a URL, and a text
longer than the 256-token limit (truncation); embedded as one padded batch (padding)."""
_IDENTITY_FILES = (
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
    "tokenizer.json",
    "tokenizer_config.json",
)
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


@dataclass(frozen=True)
class ExportOutcome:
    """What one export attempt gave."""

    path: Path | None
    """The verified .onnx file; None when the export failed or was skipped."""
    min_cosine: float | None
    """Least ONNX-vs-torch cosine over ``VERIFY_TEXTS``; None when not measured."""
    error: str | None
    """Why there is no export (None on success)."""
    seconds: float
    """Wall time of the attempt, export and verification together."""


def model_key(spec: ModelSpec) -> str:
    """Hex key of the model's identity: its id, the contents of its config and tokenizer files, and the name,
    size and modification time of its weight files, so that another model (or changed weights) never reuses
    an export. Reads a few small files; never the weights themselves."""
    digest = hashlib.sha256(f"botbin-onnx-{EXPORT_FORMAT}\0{spec.model_id}\0".encode())
    for name in _IDENTITY_FILES:
        path = spec.path / name
        digest.update(f"{name}\0".encode())
        if path.is_file():
            digest.update(path.read_bytes())
    for name in _WEIGHT_FILES:
        path = spec.path / name
        if path.is_file():
            st = path.stat()
            digest.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:24]


def user_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/botbin/onnx``, else ``~/.cache/botbin/onnx``."""
    environ = os.environ if env is None else env
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "botbin" / "onnx"


def cache_dirs(spec: ModelSpec, env: Mapping[str, str] | None = None) -> list[Path]:
    """Where exports live, in lookup order: beside the model files, then the user cache."""
    return [spec.path / ".botbin-onnx", user_cache_dir(env)]


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "onnxruntime"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def find_export(spec: ModelSpec, env: Mapping[str, str] | None = None) -> Path | None:
    """The verified export of ``spec``, if one exists (its record names this key and its size matches)."""
    key = model_key(spec)
    for folder in cache_dirs(spec, env):
        record = _read_json(folder / f"{key}.json")
        onnx = folder / f"{key}.onnx"
        if record.get("verified") is True and onnx.is_file() and record.get("size_bytes") == onnx.stat().st_size:
            return onnx
    return None


FOLDER_EXPORTS = ("onnx/model.onnx", "model.onnx")
"""Where a model folder ships its own ONNX export (sentence-transformers' ``backend="onnx"`` layout, and a Hugging
Face repository's), relative to the folder."""


def folder_export(spec: ModelSpec) -> Path | None:
    """The ONNX export the model folder ships itself (``FOLDER_EXPORTS``), when its module chain is one the ONNX
    embedder reproduces (transformer, mean pooling, normalize); None otherwise. Used as it is: a folder may hold
    no torch weights to verify it against."""
    for name in FOLDER_EXPORTS:
        path = spec.path / name
        if path.is_file():
            return path if unsupported_reason(spec) is None else None
    return None


def find_failure(spec: ModelSpec, env: Mapping[str, str] | None = None) -> str | None:
    """The reason of an earlier failed export of ``spec`` with today's torch and onnxruntime, if any (an
    upgrade of either retries)."""
    key, versions = model_key(spec), _versions()
    for folder in cache_dirs(spec, env):
        record = _read_json(folder / f"{key}.failed.json")
        if record and record.get("versions") == versions:
            return str(record.get("error", "unknown"))
    return None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def writable_dir(spec: ModelSpec, env: Mapping[str, str] | None = None) -> Path | None:
    """The first of ``cache_dirs`` that exists or can be made, and is writable; None if none is."""
    for folder in cache_dirs(spec, env):
        try:
            _make_private(folder)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    return None


def _make_private(folder: Path) -> None:
    """Create ``folder`` and its missing parents 0700 whatever the umask (a cache nobody else may write: it
    holds the model a process runs). Raises OSError."""
    if folder.is_dir():
        return
    _make_private(folder.parent)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        if not folder.is_dir():  # a file of that name
            raise


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def export_and_verify(
    spec: ModelSpec, st_model: Any, env: Mapping[str, str] | None = None, batch_size: int = BATCH_SIZE
) -> ExportOutcome:
    """Export ``st_model`` (the loaded ``SentenceTransformer`` of ``spec``; the caller holds its lock) to ONNX,
    check it against torch on ``VERIFY_TEXTS`` and commit it; on failure write a failure record instead. When
    another process is exporting the same model the outcome says so and nothing is done. Never raises for an
    export problem: the outcome says what happened."""
    from filelock import FileLock, Timeout

    start = time.perf_counter()
    folder = writable_dir(spec, env)
    if folder is None:
        return ExportOutcome(None, None, "no writable cache folder", time.perf_counter() - start)
    key = model_key(spec)
    try:
        with FileLock(str(folder / f".{key}.lock"), timeout=0, mode=0o600):
            _remove_stale_temps(folder)
            return _export_locked(spec, st_model, folder, key, batch_size, start)
    except Timeout:
        return ExportOutcome(None, None, "another process is exporting this model", time.perf_counter() - start)


def _remove_stale_temps(folder: Path, max_age_s: float = 3600.0) -> None:
    """Temp files of exports killed midway (a 90 MB file each); called under the export lock."""
    for tmp in folder.glob(".*.tmp*"):
        try:
            if time.time() - tmp.stat().st_mtime > max_age_s:
                tmp.unlink()
        except OSError:
            pass


def _export_locked(
    spec: ModelSpec, st_model: Any, folder: Path, key: str, batch_size: int, start: float
) -> ExportOutcome:
    tmp = folder / f".{key}.{os.getpid()}.tmp.onnx"
    ref = folder / f".{key}.{os.getpid()}.tmp.npy"
    try:
        reason = unsupported_reason(spec)
        if reason is not None:
            return _failed(folder, key, reason, None, start)
        _export(st_model, tmp)
        reference = np.asarray(
            st_model.encode(
                list(VERIFY_TEXTS),
                batch_size=len(VERIFY_TEXTS),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )
        np.save(ref, reference)
        min_cos = verify_in_child(spec.path, tmp, ref)  # ONNX Runtime in a process of its own, never beside torch
        if not min_cos >= MIN_COSINE:
            return _failed(folder, key, f"ONNX output differs from torch (least cosine {min_cos:.6f})", min_cos, start)
        onnx = folder / f"{key}.onnx"
        os.chmod(tmp, 0o600)  # the exporter's file follows the umask
        os.replace(tmp, onnx)
        record = {
            "verified": True,
            "model_id": spec.model_id,
            "min_cosine": min_cos,
            "format": EXPORT_FORMAT,
            "size_bytes": onnx.stat().st_size,
            "versions": _versions(),
            "opset": OPSET,
        }
        _write_atomic(folder / f"{key}.json", json.dumps(record, indent=1).encode())
        return ExportOutcome(onnx, min_cos, None, time.perf_counter() - start)
    except Exception as exc:  # the exporter raises many kinds; each means "no export, torch serves"
        return _failed(folder, key, f"{type(exc).__name__}: {exc}", None, start)
    finally:
        tmp.unlink(missing_ok=True)
        ref.unlink(missing_ok=True)


def _failed(folder: Path, key: str, error: str, min_cos: float | None, start: float) -> ExportOutcome:
    try:
        record = {"error": error, "versions": _versions(), "min_cosine": min_cos}
        _write_atomic(folder / f"{key}.failed.json", json.dumps(record, indent=1).encode())
    except OSError as exc:
        log.warning("cannot record the failed ONNX export in %s (%s)", folder, exc)
    return ExportOutcome(None, min_cos, error, time.perf_counter() - start)


def _export(st_model: Any, target: Path) -> None:
    """Trace the transformer (st_model[0].auto_model) to ``target``; batch and sequence axes dynamic.

    torch 2.13's default exporter (dynamo) needs onnxscript; the TorchScript one (``dynamo=False``) needs
    only ``onnx`` and traces BERT-style models exactly. The model is wrapped so the inputs are passed by name
    (transformers 5 moved BertModel's third positional argument).

    Attention is traced in its eager form (matmul, mask, softmax): transformers' default, SDPA, traces into a
    graph with NaN guards that ONNX Runtime ran ~20 % slower on the help vault's chunks (same vectors, cosine
    > 0.99999; docs/benchmarks.md)."""
    import torch

    transformer = st_model[0].auto_model
    previous = getattr(transformer.config, "_attn_implementation", None)

    class _Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = torch.ones((2, 8), dtype=torch.long)
    mask = torch.ones_like(dummy)
    mask[1, 5:] = 0  # a padded row, so the trace keeps the mask (an all-ones mask may be traced as "no mask")
    was_training = transformer.training
    transformer.eval()
    _set_attention(transformer, "eager")
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer and deprecation warnings: the verification decides
            torch.onnx.export(
                _Wrapped(),
                (dummy, mask, torch.zeros_like(dummy)),
                str(target),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]},
                opset_version=OPSET,
                dynamo=False,
            )
    finally:
        transformer.train(was_training)
        if previous is not None:
            _set_attention(transformer, previous)
    with open(target, "rb+") as fh:
        os.fsync(fh.fileno())


def _set_attention(transformer: Any, name: str) -> None:
    """Switch a transformers model's attention implementation (``set_attn_implementation`` where the installed
    transformers has it, else the config field older versions read)."""
    setter = getattr(transformer, "set_attn_implementation", None)
    if callable(setter):
        setter(name)
    else:
        transformer.config._attn_implementation = name


# -- the children (export_child.py) ---------------------------------------------------------------------
def _verify_stage(args: argparse.Namespace) -> dict[str, object]:
    spec = resolve_model(str(args.model))
    candidate = OnnxEmbedder(spec, Path(args.candidate), len(VERIFY_TEXTS)).embed(list(VERIFY_TEXTS))
    reference = np.load(args.reference)
    return {"min_cosine": float((candidate * reference).sum(axis=1).min())}


def _export_stage(args: argparse.Namespace) -> dict[str, object]:
    from botbin.embedding.torch_backend import SentenceTransformerEmbedder

    spec = resolve_model(str(args.model))
    if args.model_id:  # the parent's id (the bundled model's folder alone would be keyed as a local folder)
        spec = ModelSpec(args.model_id, spec.path)
    torch = SentenceTransformerEmbedder(spec, args.batch_size)
    with torch.lock:
        outcome = export_and_verify(spec, torch.loaded_model(), os.environ, args.batch_size)
    return {
        "path": None if outcome.path is None else str(outcome.path),
        "min_cosine": outcome.min_cosine,
        "error": outcome.error,
        "seconds": outcome.seconds,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of both export children (export_child.py); exit status 0 when the outcome has no error."""
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description="export or verify an ONNX model")
    sub = parser.add_subparsers(dest="stage", required=True)
    p = sub.add_parser("export", help="export MODEL with torch and verify it in a child")
    p.add_argument("model", type=Path)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--model-id", default=None, help="the model's id in the parent (part of the export's key)")
    p = sub.add_parser("verify", help="embed the verification texts with ONNX Runtime and compare")
    p.add_argument("model", type=Path)
    p.add_argument("candidate", type=Path)
    p.add_argument("reference", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="botbin-onnx: %(message)s")
    try:
        outcome = _export_stage(args) if args.stage == "export" else _verify_stage(args)
    except Exception as exc:  # any failure is an outcome: the parent records it or keeps torch
        outcome = {"error": f"{type(exc).__name__}: {exc}"}
    with contextlib.suppress(BrokenPipeError):  # the parent left first: the files on disk are the outcome
        print(json.dumps(outcome), flush=True)
    return 0 if not outcome.get("error") else 1


if __name__ == "__main__":
    sys.exit(main())
