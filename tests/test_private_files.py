"""Every file botbin writes is 0600 in 0700 folders, whatever the umask (000 included): the output folder whole
(AIF-BIN files, state file and its journal, memo sidecar and its write-ahead log, archive note, load cache, ANN
cache, spare embeddings, marker, publisher id) and the ONNX cache under $XDG_CACHE_HOME/botbin (issue 36:
another user read note words from a 0644 load cache)."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

import pytest

from botbin.index import load_cache
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest, SyncRequest
from conftest import FakeEmbedder, write_notes

NOTES = {
    "memory/2026-01-05.md": "# 2026-01-05\n\n- The staging database lives on host kestrel-db-2.\n",
    "memory/notes.md": "# Garden\n\nThe tomatoes need water every second day in July.\n",
    "memory/gone.md": "# Gone\n\nA note deleted later, whose vectors are kept as spares.\n",
}
KDF = "kdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"


@pytest.fixture(params=[0o000, 0o022], ids=["umask-000", "umask-022"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _modes(folder: Path) -> dict[str, int]:
    """Every file and folder under ``folder`` (itself included) and its permission bits."""
    paths = [folder, *folder.rglob("*")]
    return {os.fspath(p.relative_to(folder.parent)): stat.S_IMODE(p.lstat().st_mode) for p in paths}


def _not_private(modes: dict[str, int], folder: Path) -> dict[str, str]:
    return {
        name: oct(mode) for name, mode in modes.items() if mode != (0o700 if (folder.parent / name).is_dir() else 0o600)
    }


class _Turn(NamedTuple):
    """A host turn (agent/capture.py HostTurn)."""

    role: str
    content: str
    id: str
    timestamp: str | None = None
    session: str | None = "s1"
    name: str | None = None


def test_every_file_of_the_output_folder_is_private(tmp_path: Path, umask: int) -> None:
    from botbin.index.ann import AnnIndex, usearch_available
    from botbin.workspace.remote import publisher_id

    ws = write_notes(tmp_path / "ws", {**NOTES, "botbin.toml": KDF})
    service = MemoryService(ws, {}, embedder=FakeEmbedder(), env={}, passphrase=lambda: "correct horse")
    out = service.output_dir
    service.sync()
    assert service.search(SearchRequest(query="staging database host", show_all=True)).hits
    load_cache.wait_writes()  # the load cache, written after the first search
    service.prune(now=datetime.now().astimezone() + timedelta(days=400))  # archive.md
    (ws / "memory" / "gone.md").unlink()
    service.sync()  # its vectors go to the spare file
    capture = service.hosts.capture  # a host's turns: the ledger, then the journal of a buffered one
    capture.ingest([_Turn("user", "The release train leaves every second Thursday.", "t1")], flush=True)
    capture.ingest([_Turn("user", "Our CI runners have sixteen gigabytes of memory.", "t2")])
    (ws / "memory" / "notes.md").write_text("# Garden\n\nThe tomatoes need water daily.\n")
    service.sync(SyncRequest(only=frozenset({"memory/notes.md"})))  # a save: the state file's journal
    publisher_id(service.ws.team)
    if usearch_available():
        index, _ = service.index()
        ann = AnnIndex(384)
        ann.add(*index._assemble().live())
        ann.save(out / "ann.usearch")
    written = {"index-cache.npz", "archive.md", "embedding-cache.bin", "sync-state.log", "memos.sqlite-wal",
               "pending-turns.jsonl", "captured-turns.jsonl"}  # fmt: skip
    modes = _modes(out)
    assert written <= {Path(n).name for n in modes}
    assert _not_private(modes, out) == {}
    service.sync(SyncRequest(encryption="encrypt"))  # the marker, every output rewritten
    service.lifecycle.close()
    assert "aifbin/encryption.json" in _modes(out)
    assert _not_private(_modes(out), out) == {}


def test_a_file_left_readable_is_private_once_rewritten(tmp_path: Path, umask: int) -> None:
    # A temp file an earlier version left 0666: open_private truncates it (O_TRUNC keeps a mode) and narrows it.
    from botbin.sync.atomic import open_private

    path = tmp_path / "left"
    path.write_bytes(b"note words from before")
    path.chmod(0o666)
    with open_private(path) as out:
        out.write(b"new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_bytes() == b"new"


def test_the_onnx_cache_folders_and_records_are_private(tmp_path: Path, umask: int) -> None:
    from botbin.embedding import onnx_export
    from botbin.embedding.model import ModelSpec

    beside, elsewhere = tmp_path / "model", tmp_path / "read-only-model"
    beside.mkdir()
    elsewhere.mkdir()
    (elsewhere / ".botbin-onnx").write_bytes(b"")  # no folder can be made beside this model: the user cache serves
    env = {"XDG_CACHE_HOME": os.fspath(tmp_path / "cache")}
    folders = [onnx_export.writable_dir(ModelSpec("test/model", path), env) for path in (beside, elsewhere)]
    assert folders == [beside / ".botbin-onnx", tmp_path / "cache" / "botbin" / "onnx"]
    for folder in folders:
        assert folder is not None
        onnx_export._write_atomic(folder / "key.json", b"{}")
    assert _not_private(_modes(beside / ".botbin-onnx"), beside / ".botbin-onnx") == {}
    assert _not_private(_modes(tmp_path / "cache"), tmp_path / "cache") == {}


def test_the_warm_socket_and_its_folder_are_private(
    tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from botbin.cli.warm_server import WarmServer

    runtime = Path(tempfile.mkdtemp(prefix="bb-", dir="/tmp"))  # short: a socket path has at most 107 bytes
    monkeypatch.setenv("XDG_RUNTIME_DIR", os.fspath(runtime))
    ws = write_notes(tmp_path / "ws", NOTES)
    server = WarmServer(MemoryService(ws, {}, embedder=FakeEmbedder(), env={}))
    try:
        assert server.start()
        assert _not_private(_modes(runtime / "botbin"), runtime / "botbin") == {}
        assert stat.S_ISSOCK(server.path.stat().st_mode)
    finally:
        server.stop()
        shutil.rmtree(runtime)
