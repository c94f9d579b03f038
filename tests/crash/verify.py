"""What the crash tests check on a workspace's output folder, after a kill and after the final sync.

- every ``.aif-bin`` present passes the independent checker (shared/tools/aifbin_check.py, its
  ``check_file`` called in-process) against the exact note version it was made from: the note on disk
  (``--root WS``) when it is current, else that earlier version of the note (which must be one the user wrote);
- the state file parses as JSON (or is absent), names only ``.aif-bin`` outputs mirroring their notes
  (never a temp file), and every output it would trust on the next sync holds the version it records;
- no output is orphaned: each is owned by the state file or its note still exists (so a sync replaces it);
- two stores synced from the same notes are equal: same files, chunk texts and line ranges, embeddings
  allclose, metadata and state entries equal except timestamps.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from botbin.aifbin import AifBinDocument, decode, decode_metadata
from botbin.errors import AifBinFormatError
from botbin.sync.atomic import TEMP_PREFIX
from botbin.sync.documents import output_rel
from botbin.sync.state import STATE_FILE
from conftest import CHECKER, skip_without_checker

from .vault import OUTPUT_DIR, md5, state_on_disk

TIME_KEYS = frozenset({"created_at", "synced_at", "mtime_ns", "ctime_ns", "ino", "output_ctime_ns"})
"""Fields that differ between two syncs of the same notes (times, and the notes' inodes)."""


def load_checker() -> ModuleType:
    skip_without_checker()
    spec = importlib.util.spec_from_file_location("aifbin_check", CHECKER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def temp_files(ws: Path) -> list[str]:
    return sorted(p.relative_to(ws).as_posix() for p in (ws / OUTPUT_DIR).rglob(f"{TEMP_PREFIX}*"))


def outputs(ws: Path) -> list[Path]:
    return sorted((ws / OUTPUT_DIR).rglob("*.aif-bin"))


class StoreVerifier:
    """Checks one workspace's outputs; a file already verified in the same situation is not re-checked."""

    def __init__(self, ws: Path, history: dict[str, dict[str, bytes]], shadow: Path) -> None:
        self.ws, self.history, self.shadow = ws, history, shadow
        self.checker = load_checker()
        self._verified: dict[str, tuple[Any, ...]] = {}

    def problems(self) -> list[str]:
        """Everything wrong with the output folder now (empty when all is well)."""
        state = state_on_disk(self.ws)
        found = self._state_problems(state)
        files = state.get("files", {}) if state else {}
        owned = {e.get("output") for e in files.values() if isinstance(e, dict)} if isinstance(files, dict) else set()
        for path in outputs(self.ws):
            found += self._output_problems(path, owned)
        return found

    def _state_problems(self, state: dict[str, Any] | None) -> list[str]:
        path = self.ws / OUTPUT_DIR / STATE_FILE
        if state is None:
            return [f"{path} is not a JSON object"] if path.exists() else []
        files = state.get("files")
        if not isinstance(files, dict):
            return [f"{path} has no 'files' map"]
        found = []
        for rel, entry in files.items():
            out = entry.get("output") if isinstance(entry, dict) else None
            if out != output_rel(rel, OUTPUT_DIR) or TEMP_PREFIX in str(out):
                found.append(f"state entry {rel} names output {out!r}")
                continue
            note, target = self.ws / rel, self.ws / out
            if not note.is_file() or not target.is_file() or md5(note.read_bytes()) != entry.get("hash"):
                continue
            if target.stat().st_size == entry.get("output_bytes"):  # the next sync trusts this output
                try:
                    held = decode_metadata(target.read_bytes(), out)[2].get("source_md5")
                except AifBinFormatError as exc:
                    held = f"none (undecodable: {exc})"
                if held != entry["hash"]:
                    found.append(f"{out} is trusted by the state file for {rel} but holds version {held}")
        return found

    def _output_problems(self, path: Path, owned: set[Any]) -> list[str]:
        rel_out = path.relative_to(self.ws).as_posix()
        try:
            st = path.stat()
            doc = _doc(path)
        except FileNotFoundError:
            return []
        except AifBinFormatError as exc:
            return [f"{rel_out}: botbin cannot decode it: {exc}"]
        source, held = doc.metadata.get("source"), doc.metadata.get("source_md5")
        if not isinstance(source, str) or output_rel(source, OUTPUT_DIR) != rel_out:
            return [f"{rel_out}: metadata source {source!r} does not mirror the file's path"]
        note = self.ws / source
        current = md5(note.read_bytes()) if note.is_file() else None
        key = (st.st_ino, st.st_mtime_ns, st.st_size, current, rel_out in owned)
        if self._verified.get(rel_out) == key:
            return []
        found = []
        if current is None and rel_out not in owned:
            found.append(f"{rel_out}: orphan (note {source} is gone and no state entry owns it)")
        root = self.ws
        if current != held:
            version = self.history.get(source, {}).get(str(held))
            if version is None:
                return [*found, f"{rel_out}: holds a version of {source} ({held}) that was never written"]
            root = self.shadow
            shutil.rmtree(root, ignore_errors=True)
            (root / source).parent.mkdir(parents=True)
            (root / source).write_bytes(version)
        errors, _info = self.checker.check_file(path, root)
        found += [f"{rel_out}: checker: {e}" for e in errors]
        if not found:
            self._verified[rel_out] = key
        return found


def _doc(path: Path) -> AifBinDocument:
    return decode(path.read_bytes(), str(path))


def _meta(doc: AifBinDocument) -> dict[str, Any]:
    return {k: v for k, v in doc.metadata.items() if k not in TIME_KEYS}


def _entries(state: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    files = (state or {}).get("files", {})
    return {rel: {k: v for k, v in e.items() if k not in TIME_KEYS} for rel, e in files.items()}


def assert_same_store(got: Path, want: Path) -> None:
    """The outputs and state file of workspace ``got`` equal those of ``want`` except for times."""
    names = [p.relative_to(got).as_posix() for p in outputs(got)]
    assert names == [p.relative_to(want).as_posix() for p in outputs(want)], "different sets of output files"
    for rel in names:
        a, b = _doc(got / rel), _doc(want / rel)
        assert _meta(a) == _meta(b), f"{rel}: metadata differs"
        shape = [(c.text, c.start_line, c.end_line, c.heading_path, c.kind, c.tokens, c.text_md5) for c in a.chunks]
        assert shape == [
            (c.text, c.start_line, c.end_line, c.heading_path, c.kind, c.tokens, c.text_md5) for c in b.chunks
        ], f"{rel}: chunks differ"
        if a.chunks:
            np.testing.assert_allclose(
                np.stack([c.embedding for c in a.chunks]),
                np.stack([c.embedding for c in b.chunks]),
                atol=2e-5,
                err_msg=rel,
            )
    state_a, state_b = state_on_disk(got), state_on_disk(want)
    assert state_a is not None and state_b is not None
    own = ("files", "last_sync", "log_id")  # log_id: each state file's random version id (sync/state_log.py)
    assert {k: v for k, v in state_a.items() if k not in own} == {k: v for k, v in state_b.items() if k not in own}
    assert _entries(state_a) == _entries(state_b), "state entries differ"
