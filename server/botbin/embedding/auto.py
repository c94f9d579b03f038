"""The embedder a workspace uses: ONNX Runtime once a verified export of the model exists (no torch import), the
sentence-transformers model until then; the first torch embed of a process starts the one-time export in a
child process."""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

from botbin.embedding.export_child import last_json, start_export
from botbin.embedding.model import BATCH_SIZE, ModelSpec, SpecEmbedder
from botbin.embedding.onnx_backend import OnnxEmbedder, unsupported_reason
from botbin.embedding.onnx_export import ExportOutcome, export_and_verify, find_export, find_failure, folder_export
from botbin.embedding.torch_backend import SentenceTransformerEmbedder
from botbin.errors import ModelError

log = logging.getLogger(__name__)

BULK_BACKEND = "onnx"
"""Backend for sync-sized calls when both are available. ONNX Runtime runs the export with eager attention at 1.16x
torch on an idle machine (the SDPA export before it: 0.89x; bench/bench_embed_backends.py, bench/README.md), and a
process that embeds with ONNX never pays torch's import and model load."""
BACKEND_ENV = "BOTBIN_EMBED_BACKEND"
"""Environment override: 'torch' never uses ONNX, 'onnx' uses it for every call once exported."""


class AutoEmbedder(SpecEmbedder):
    """Embeds with ONNX Runtime when a verified export of the model exists, else with torch.

    The export happens once per model and machine (onnx_export.py): right after the first torch embed of a
    process, in a child process (export_child.py; torch and ONNX Runtime never share a process). This process
    keeps embedding with torch; the next process finds the export. ``ensure_export`` exports in this process
    instead (benchmarks). A failed export is recorded and not retried until torch or onnxruntime changes;
    torch then serves. A folder that ships its own ONNX export (``onnx/model.onnx``, onnx_export.FOLDER_EXPORTS) is
    run from it when botbin has made none."""

    def __init__(
        self, spec: ModelSpec, batch_size: int = BATCH_SIZE, env: Mapping[str, str] | None = None, threads: int = 0
    ) -> None:
        """``threads``: ONNX Runtime's intra-op threads (0: one per core; OnnxEmbedder)."""
        self.spec = spec
        self.batch_size = batch_size
        self.threads = threads
        self._env = os.environ if env is None else env
        self.torch = SentenceTransformerEmbedder(spec, batch_size)
        """The torch embedder: serves until an export exists, and makes the export (its weights load lazily)."""
        self._onnx: OnnxEmbedder | None = None
        self._looked = False
        self._export_proc: subprocess.Popen[str] | None = None
        self._reaper: threading.Thread | None = None
        """Waits for the export child (so it never lingers as a zombie) and records its outcome."""
        self._export_seen = False
        self._lock = threading.Lock()
        self.last_export: ExportOutcome | None = None
        """The outcome of this process's export, once one ran."""

    @property
    def backend(self) -> str:
        """'onnx' when queries go through ONNX Runtime, else 'torch' (looks for an export first)."""
        return "onnx" if self.onnx() is not None else "torch"

    def onnx(self) -> OnnxEmbedder | None:
        """The ONNX embedder if a verified export exists and loads (checked once per process)."""
        with self._lock:
            if not self._looked and self._env.get(BACKEND_ENV) != "torch":
                self._looked = True
                path = find_export(self.spec, self._env) or folder_export(self.spec)
                if path is not None:
                    self._onnx = self._open(path)
            return self._onnx

    def _open(self, path: os.PathLike[str]) -> OnnxEmbedder | None:
        embedder = OnnxEmbedder(self.spec, Path(path), self.batch_size, threads=self.threads)
        try:
            embedder.load()
        except ModelError as exc:
            log.warning("%s; embedding with torch (the export is redone by the next torch embed)", exc)
            if embedder.onnx_path != folder_export(self.spec):  # botbin's record, never a file of the folder's
                embedder.onnx_path.with_suffix(".json").unlink(missing_ok=True)
            return None
        return embedder

    def export_first(self, timeout_s: float) -> bool:
        """Make the one-time ONNX export now, in a child process, when there is none yet, wait for it (at most
        ``timeout_s`` seconds) and embed with it from then on: for a bulk job (a model migration) that would
        otherwise embed every chunk with torch in this process. True when ONNX Runtime embeds. Never raises for
        an export problem (torch then embeds)."""
        if self.onnx() is not None:
            return True
        if self._env.get(BACKEND_ENV) == "torch" or unsupported_reason(self.spec) is not None:
            return False
        self.schedule_export()
        try:
            self.wait_export(timeout_s)
        except subprocess.TimeoutExpired:
            return False
        with self._lock:
            self._looked = False  # the child's export, once verified
        return self.onnx() is not None

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """float32 (len(texts), dim), L2-normalized. Raises ModelError."""
        onnx = self.onnx()
        bulk = self._env.get(BACKEND_ENV) or BULK_BACKEND
        if onnx is not None and (len(texts) <= 1 or bulk == "onnx"):
            try:
                return onnx.embed(texts)
            except ModelError as exc:
                log.warning("%s; embedding with torch from now on", exc)
                with self._lock:
                    self._onnx = None
        vectors = self.torch.embed(texts)
        self.schedule_export()
        return vectors

    def schedule_export(self) -> None:
        """Start the one-time export in a child process (export_child.py), unless an export exists, failed
        before, is running, or torch is forced. This process keeps torch; the next one finds the export."""
        with self._lock:
            if self._export_proc is not None or self._onnx is not None or self._env.get(BACKEND_ENV) == "torch":
                return
            if self._export_seen:
                return
            if find_export(self.spec, self._env) is not None or find_failure(self.spec, self._env) is not None:
                self._export_seen = True  # made or failed elsewhere: the next process picks it up
                return
            try:
                self._export_proc = start_export(self.spec.path, self.batch_size, self._env, self.spec.model_id)
            except OSError as exc:
                log.warning("cannot start the ONNX export of %s (%s); embedding with torch", self.spec.model_id, exc)
                return
        log.info("exporting %s to ONNX in child process %d", self.spec.model_id, self._export_proc.pid)
        # reaped as soon as it ends (else it stays a zombie for this process's lifetime)
        self._reaper = threading.Thread(
            target=self._reap, args=(self._export_proc,), name="botbin-export-reaper", daemon=True
        )
        self._reaper.start()

    def ensure_export(self) -> ExportOutcome | None:
        """Export now unless an export exists or failed before (then None); loads torch if needed. Afterwards
        queries go through ONNX Runtime. Never raises for an export problem (logged, torch keeps serving)."""
        if find_export(self.spec, self._env) is not None or find_failure(self.spec, self._env) is not None:
            with self._lock:
                self._looked = False  # pick up an export made by another process
            self.onnx()
            return None
        try:
            model = self.torch.loaded_model()
        except ModelError as exc:
            log.warning("ONNX export skipped: %s", exc)
            return None
        with self.torch.lock:
            outcome = export_and_verify(self.spec, model, self._env, self.batch_size)
        self.last_export = outcome
        if outcome.path is None:
            log.warning("ONNX export of %s failed (%s); embedding with torch", self.spec.model_id, outcome.error)
            return outcome
        log.info(
            "ONNX export of %s verified (least cosine %.6f, %.1f s): %s",
            self.spec.model_id,
            outcome.min_cosine or 0.0,
            outcome.seconds,
            outcome.path,
        )
        opened = self._open(outcome.path)
        with self._lock:
            self._onnx, self._looked = opened, True
        return outcome

    def wait_export(self, timeout_s: float | None = None) -> ExportOutcome | None:
        """Wait for the export child to end and keep its outcome in ``last_export`` (tests, benchmarks); None
        when no child was started. Raises subprocess.TimeoutExpired after ``timeout_s``."""
        proc, reaper = self._export_proc, self._reaper
        if proc is None or reaper is None:
            return None
        reaper.join(timeout_s)
        if reaper.is_alive():
            raise subprocess.TimeoutExpired(proc.args, timeout_s or 0.0)
        return self.last_export

    def _reap(self, proc: subprocess.Popen[str]) -> None:
        """The reaper thread: wait for the export child, keep its outcome in ``last_export``."""
        out, _ = proc.communicate()
        data = last_json(out or "")
        path, cosine = data.get("path"), data.get("min_cosine")
        error = data.get("error") or (None if path else f"export child ended with status {proc.returncode}")
        seconds = data.get("seconds")
        self.last_export = ExportOutcome(
            Path(path) if isinstance(path, str) else None,
            float(cosine) if isinstance(cosine, (int, float)) else None,
            None if error is None else str(error),
            float(seconds) if isinstance(seconds, (int, float)) else 0.0,
        )


_SHARED: dict[tuple[str, int], AutoEmbedder] = {}
_SHARED_LOCK = threading.Lock()


def shared_embedder(spec: ModelSpec, batch_size: int = BATCH_SIZE) -> AutoEmbedder:
    """One embedder per (model folder, batch size) in this process, so that several workspace folders of a
    language server load the model once (about 90 MB of weights; 6 s on 2 cores with torch)."""
    key = (str(spec.path), batch_size)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = AutoEmbedder(spec, batch_size)
        return _SHARED[key]


def preload_bundled(batch_size: int = BATCH_SIZE) -> threading.Thread:
    """Open the bundled model's ONNX session and tokenizer on a daemon thread, now: the language server calls
    this before its slow imports (it learns its folders' models only at ``initialize``), so that a folder with
    the default model finds its query embedder ready. Without an export it does nothing (torch is never loaded
    on a guess). Returns the thread."""
    from botbin.embedding.model import resolve_model

    def load() -> None:
        try:
            shared_embedder(resolve_model(None), batch_size).onnx()
        except Exception as exc:  # only a head start: the folder's own warm-up reports a real failure
            log.info("no head start for the bundled model: %s", exc)

    thread = threading.Thread(target=load, name="botbin-preload-model", daemon=True)
    thread.start()
    return thread
