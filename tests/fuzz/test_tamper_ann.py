"""Tampering with the ANN cache (``ann.usearch`` + ``.json``), read back as untrusted input (issue 36): usearch
trusts the file it loads, and a damaged graph crashed the process; now the file's CRC-32 in its record is checked
first, and a damaged, mistyped or linked-out cache is rebuilt with a message naming it. Each case runs in a
child process, so a crash fails the case instead of the suite."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tamper_cases import make_canaries

# -- the ANN cache (usearch trusts the file it loads: a damaged graph used to crash the process) ------------------
ANN_SCRIPT = """
import json, os, sys, logging
from pathlib import Path
import numpy as np
from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index.ann import AnnIndex, usearch_available
from botbin.index.ann_live import AnnConfig
from botbin.index.hits import IndexQuery
from botbin.index.store import MemoryIndex
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
if not usearch_available():
    print("no usearch"); sys.exit(0)
path, case = Path(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
docs = []
for n in range(60):
    vectors = rng.standard_normal((4, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = tuple(ChunkRecord(i, f"word{n} text{i}", i, i + 1, (), "lore", 3, f"{n:08x}{i:024x}", v)
                   for i, v in enumerate(vectors))
    docs.append(AifBinDocument({"source": f"n/{n}.md", "model": {"name": "m", "dim": 384}}, chunks))
def index():
    built = MemoryIndex(384, AnnConfig(min_rows=1, path=path, model="m"))
    for d in docs:
        built.upsert(d)
    built.prepare_ann()
    assert built.wait_ann(120)
    return built
if case == "build":
    assert index().save_ann() or path.is_file()
    print("built"); sys.exit(0)
again = index()
query = docs[7].chunks[0].embedding
hits = again.search(IndexQuery("", query, k=1, alpha=1.0))
print("ok", again.ann_active(), hits[0].path if hits else None)
"""


def _ann(path: Path, case: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ANN_SCRIPT), str(path), case],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _flip_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 3, len(data) // 3 + 64):  # same size: neighbour lists and levels in the graph
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _side(change: Callable[[dict[str, Any]], object]) -> Callable[[Path], None]:
    def apply(path: Path) -> None:
        side = path.with_name(path.name + ".json")
        meta = json.loads(side.read_text())
        result = change(meta)
        side.write_text(result if isinstance(result, str) else json.dumps(meta))

    return apply


ANN_DAMAGE: dict[str, Callable[[Path], None]] = {
    "same-size-bytes": _flip_middle,
    "truncated": lambda p: _truncate(p),
    "record-a-list": _side(lambda meta: "[1, 2]"),
    "record-infinite-count": _side(lambda meta: json.dumps(meta).replace(str(meta["count"]), "Infinity")),
    "record-string-dim": _side(lambda meta: meta.__setitem__("dim", "384")),
    "record-4301-digits": _side(lambda meta: json.dumps(meta).replace(str(meta["count"]), "9" * 4301)),
    "record-wrong-crc": _side(lambda meta: meta.__setitem__("crc32", meta["crc32"] ^ 1)),
    "record-missing": lambda p: p.with_name(p.name + ".json").unlink(),
}


@pytest.mark.parametrize("damage", sorted(ANN_DAMAGE))
def test_a_damaged_ann_cache_is_rebuilt_and_never_crashes_the_process(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "ann.usearch"
    built = _ann(path, "build")
    if built.stdout.strip() == "no usearch":
        pytest.skip("usearch is not installed")
    assert built.returncode == 0 and path.is_file(), built.stderr[-2000:]
    ANN_DAMAGE[damage](path)
    done = _ann(path, "load")
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-3000:]}"
    assert done.stdout.split() == ["ok", "True", "n/7.md"], done.stdout
    if damage != "record-missing":
        assert str(path) in done.stderr and "rebuilt" in done.stderr, done.stderr[-2000:]


def test_an_ann_cache_planted_as_a_link_out_is_not_loaded(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    path = tmp_path / "ws" / "ann.usearch"
    path.parent.mkdir()
    built = _ann(outside / "ann.usearch", "build")
    if built.stdout.strip() == "no usearch":
        pytest.skip("usearch is not installed")
    canaries = make_canaries(outside, b"")
    path.symlink_to(outside / "ann.usearch")
    path.with_name("ann.usearch.json").symlink_to(outside / "ann.usearch.json")
    done = _ann(path, "load")
    assert done.returncode == 0 and "symbolic link" in done.stderr, done.stderr[-2000:]
    canaries.untouched()
