"""Shared pieces of the tamper suites (test_tamper_*.py): a folder of canary files outside the workspace that no
case may touch, a small synced workspace, and the ways its read-back files are damaged or made hostile.

Every file botbin writes into the output folder and reads back later is untrusted input (the folder is synced,
shared and committed): the state file and its journal, the AIF-BIN outputs, the load cache, the spare
embeddings, the ANN cache, the memo store and the publisher id. A case passes when it ends in a clear message
naming the file, or a rebuild, never a traceback, and the canaries are exactly as they were.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from botbin.aifbin import HEADER, AifBinDocument, decode, encode
from botbin.service import MemoryService
from botbin.sync.state import STATE_FILE
from conftest import FakeEmbedder, write_notes

NOTES = {
    "MEMORY.md": "# Memory\n\nAlways run the linter before pushing code.\n",
    "memory/2026-11-03.md": "# 2026-11-03\n\nThe postgres pool ran out of connections at noon.\n",
    "memory/deep/2026-11-04.md": "# 2026-11-04\n\nPicked uPlot for the dashboard charts because it is fast.\n",
}
QUERY, ANSWER = "postgres pool connections", "memory/2026-11-03.md"
OUTPUT_DIR = "memory/aifbin"


@dataclass(frozen=True)
class Canaries:
    """Files outside the workspace, each with its bytes and stat when made: ``untouched`` checks them all."""

    folder: Path
    """The folder beside the workspace that holds them."""
    snapshot: dict[str, tuple[bytes, int, int]]
    """Relative path -> (bytes, mtime_ns, inode)."""

    @property
    def text(self) -> Path:
        """A plain text file (the target of a hostile ``output``)."""
        return self.folder / "canary.txt"

    @property
    def aifbin(self) -> Path:
        """A valid AIF-BIN file (so the magic alone cannot protect it: the folder check must)."""
        return self.folder / "canary.aif-bin"

    @property
    def sqlite(self) -> Path:
        """A file a planted memo-store link could point at."""
        return self.folder / "canary.sqlite"

    def untouched(self) -> None:
        """Assert that every canary is there with its bytes, mtime and inode, and that nothing was added."""
        assert _snapshot(self.folder) == self.snapshot


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            out[path.relative_to(folder).as_posix()] = (path.read_bytes(), st.st_mtime_ns, st.st_ino)
    return out


def make_canaries(folder: Path, aifbin_bytes: bytes) -> Canaries:
    """Canary files in ``folder`` (made here): a text file, an AIF-BIN file of ``aifbin_bytes``, a database-like
    file, and the same set one folder down (a target for '../' paths)."""
    for base in (folder, folder / "deep"):
        base.mkdir(parents=True, exist_ok=True)
        (base / "canary.txt").write_text("canary: botbin must never touch this file\n")
        (base / "canary.aif-bin").write_bytes(aifbin_bytes)
        (base / "canary.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    return Canaries(folder, _snapshot(folder))


def synced_workspace(tmp_path: Path, embedder: FakeEmbedder, notes: dict[str, str] | None = None) -> MemoryService:
    """A workspace of ``notes`` (NOTES by default) under ``tmp_path/ws``, synced once."""
    root = write_notes(tmp_path / "ws", notes or NOTES)
    service = MemoryService(root, embedder=embedder, env={})
    report = service.sync()
    assert not report.failed and not report.warnings, report
    return service


def fresh(service: MemoryService, embedder: FakeEmbedder) -> MemoryService:
    """Another process's service on the same workspace (nothing kept in memory)."""
    return MemoryService(service.root, embedder=embedder, env={})


def state_json(service: MemoryService) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((service.output_dir / STATE_FILE).read_text(encoding="utf-8"))
    return data


def write_state_text(service: MemoryService, text: str) -> Path:
    path = service.output_dir / STATE_FILE
    path.write_text(text, encoding="utf-8")
    return path


def output_of(service: MemoryService, rel: str) -> Path:
    return service.root / OUTPUT_DIR / (rel[:-3] + ".aif-bin")


# -- values a hand or a bug can leave in a JSON field ---------------------------------------------------------
#: JSON texts that json.loads reads as something no field may hold (the 4,301-digit integer is past Python's
#: int-from-text limit: json.loads itself raises ValueError on it).
HOSTILE_NUMBERS = {
    "infinity": "Infinity",
    "minus-infinity": "-Infinity",
    "nan": "NaN",
    "1e999": "1e999",
    "float": "1.5",
    "4301-digit": "9" * 4301,
    "4000-digit": "9" * 4000,
    "2**64": str(2**64),
    "negative": "-5",
    "true": "true",
    "string": '"12"',
    "null": "null",
    "list": "[1]",
    "object": '{"a": 1}',
}


def with_field(text: str, rel: str, field: str, literal: str) -> str:
    """The state file ``text`` with entry ``rel``'s ``field`` set to the JSON ``literal`` (spliced in as text:
    json.dumps cannot write Infinity's spelling of every case, nor a 4,301-digit integer)."""
    data = json.loads(text)
    data["files"][rel][field] = "@@HOSTILE@@"
    return json.dumps(data).replace('"@@HOSTILE@@"', literal)


# -- same-size damage to an AIF-BIN file ----------------------------------------------------------------------
def header_field_plus_one(data: bytes, field: int) -> bytes:
    """``data`` with header field ``field`` (4: metadata_len, 5: chunk_count) one higher: same size."""
    parts = list(HEADER.unpack_from(data))
    parts[field] += 1
    return HEADER.pack(*parts) + data[HEADER.size :]


def nan_vector(data: bytes) -> bytes:
    """``data`` (an uncompressed, unencrypted output) with the first value of chunk 0's vector set to NaN."""
    doc = decode(data, "x")
    vector = doc.chunks[0].embedding.astype("<f4").tobytes()
    at = data.index(vector)
    return data[:at] + struct.pack("<f", float("nan")) + data[at + 4 :]


def renamed_model(data: bytes, old: bytes, new: bytes) -> bytes:
    """``data`` with the model name ``old`` replaced by ``new`` of the same length (another model's file)."""
    assert len(old) == len(new) and old in data
    return data.replace(old, new, 1)


def other_dim(doc: AifBinDocument, dim: int) -> bytes:
    """``doc`` re-encoded with vectors of ``dim`` (another model's data, same note, same hashes)."""
    from dataclasses import replace

    vector = np.ones(dim, dtype=np.float32) / np.sqrt(dim)
    chunks = tuple(replace(c, embedding=vector) for c in doc.chunks)
    meta = {**doc.metadata, "model": {**doc.metadata["model"], "dim": dim}}
    return encode(AifBinDocument(meta, chunks))


def write_same_inode(path: Path, data: bytes, keep_mtime: bool = False) -> None:
    """Write ``data`` over ``path`` in place (same inode), optionally putting its mtime back, as a careful
    hand would: only the inode change time tells."""
    st = path.stat()
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
