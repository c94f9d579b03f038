"""Tampering with the AIF-BIN outputs and the output folder, through real syncs (issue 36, failure 7 and the
links of failure 3): same-size damage (a chunk count, a metadata length, a NaN vector, another model's data,
another note's file, even with the mtime put back) is reported by ``status``, named by ``search`` and rewritten
by the next plain ``sync``; a link planted in the output folder is never followed out of it, for a read, a write
or a removal. The canaries outside the workspace are checked after every case."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tamper_cases import (
    ANSWER,
    NOTES,
    QUERY,
    Canaries,
    fresh,
    header_field_plus_one,
    make_canaries,
    nan_vector,
    other_dim,
    output_of,
    renamed_model,
    synced_workspace,
    write_same_inode,
)

from botbin.aifbin import decode, encode
from botbin.service import MemoryService
from botbin.sync.state import STATE_FILE
from botbin.wire.requests import SearchRequest
from conftest import FakeEmbedder

OTHER = "memory/deep/2026-11-04.md"


@pytest.fixture
def service(tmp_path: Path, fake_embedder: FakeEmbedder) -> MemoryService:
    return synced_workspace(tmp_path, fake_embedder)


@pytest.fixture
def canaries(tmp_path: Path, service: MemoryService) -> Canaries:
    return make_canaries(tmp_path / "outside", output_of(service, ANSWER).read_bytes())


def _chunk_count(data: bytes) -> bytes:
    return header_field_plus_one(data, 5)


def _metadata_len(data: bytes) -> bytes:
    return header_field_plus_one(data, 4)


def _model(data: bytes) -> bytes:
    return renamed_model(data, FakeEmbedder.model_id.encode(), b"test/fake-bow-385")


#: Same-size damage: name -> (bytes of the output -> damaged bytes of the same length).
SAME_SIZE: dict[str, Callable[[bytes], bytes]] = {
    "chunk-count": _chunk_count,
    "metadata-length": _metadata_len,
    "nan-vector": nan_vector,
    "another-model": _model,
}


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["edited", "mtime-put-back"])
@pytest.mark.parametrize("damage", sorted(SAME_SIZE))
def test_same_size_damage_is_reported_named_and_repaired_by_a_plain_sync(
    service: MemoryService, fake_embedder: FakeEmbedder, damage: str, keep_mtime: bool
) -> None:
    """Failure 7: sync did nothing, status said "stale: none" and search dropped the note silently, saying the
    next sync would rebuild it; only ``sync --full`` repaired it."""
    path = output_of(service, ANSWER)
    data = path.read_bytes()
    write_same_inode(path, SAME_SIZE[damage](data), keep_mtime)
    assert path.stat().st_size == len(data)
    stale = {s.path: s.reason for s in fresh(service, fake_embedder).status().stale}
    assert "changed since the last sync" in stale[ANSWER], stale
    result = fresh(service, fake_embedder).search(SearchRequest(query=QUERY, k=3, show_all=True))
    if damage != "another-model":  # another model's file still decodes: the sync's check is what refuses it
        assert ANSWER not in [h.path for h in result.hits]
        assert any(str(path) in w and "next sync rebuilds it" in w for w in result.warnings), result.warnings
    report = fresh(service, fake_embedder).sync()
    assert report.modified == (ANSWER,) and not report.failed
    assert any(str(path) in w and "written again" in w for w in report.warnings), report.warnings
    decode(path.read_bytes(), str(path))  # whole again
    after = fresh(service, fake_embedder)
    assert after.status().stale == ()
    assert [h.path for h in after.search(SearchRequest(query=QUERY, k=1, show_all=True)).hits] == [ANSWER]
    assert not after.sync().changed  # and the next sync trusts it again by its stat


def test_an_output_of_another_dimension_is_rewritten(service: MemoryService, fake_embedder: FakeEmbedder) -> None:
    path = output_of(service, ANSWER)
    path.write_bytes(other_dim(decode(path.read_bytes(), "x"), 128))
    report = fresh(service, fake_embedder).sync()  # another size: rewritten without a decode
    assert report.modified == (ANSWER,)
    assert decode(path.read_bytes(), "x").dim == 384


def test_another_notes_output_copied_over_is_rewritten(service: MemoryService, fake_embedder: FakeEmbedder) -> None:
    path = output_of(service, ANSWER)
    other = output_of(service, OTHER).read_bytes()
    write_same_inode(path, other)
    report = fresh(service, fake_embedder).sync()
    assert report.modified == (ANSWER,)
    assert decode(path.read_bytes(), "x").source == ANSWER
    assert [
        h.path for h in fresh(service, fake_embedder).search(SearchRequest(query=QUERY, k=1, show_all=True)).hits
    ] == [ANSWER]


def test_a_search_refuses_an_output_that_names_another_note(
    service: MemoryService, fake_embedder: FakeEmbedder
) -> None:
    """An output's metadata ``source`` is read back too: a file claiming another note's path is not loaded under
    it (its hits would carry that path)."""
    path = output_of(service, ANSWER)
    doc = decode(path.read_bytes(), "x")
    path.write_bytes(encode(type(doc)({**doc.metadata, "source": "../../outside/secret.md"}, doc.chunks)))
    result = fresh(service, fake_embedder).search(SearchRequest(query=QUERY, k=3, show_all=True))
    assert all(".." not in h.path for h in result.hits)
    assert any(str(path) in w and "names the note" in w for w in result.warnings), result.warnings
    assert fresh(service, fake_embedder).sync().modified == (ANSWER,)


# -- links planted in the output folder --------------------------------------------------------------------------
def test_an_output_folder_replaced_by_a_link_out_is_never_written_through(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder
) -> None:
    """The subfolder holding two outputs becomes a link to a folder outside: the sync writes nothing there (the
    notes fail with a message naming the link), removes nothing there, and mends itself once the link goes."""
    sub = service.output_dir / "memory"
    shutil.rmtree(sub)
    sub.symlink_to(canaries.folder, target_is_directory=True)
    (service.root / ANSWER).write_text(NOTES[ANSWER] + "\nChanged.\n")
    report = fresh(service, fake_embedder).sync()
    failed = {f.path: f.reason for f in report.failed}
    assert set(failed) == {ANSWER, OTHER} and all("symbolic link" in r for r in failed.values()), failed
    canaries.untouched()
    sub.unlink()
    mended = fresh(service, fake_embedder).sync()
    assert not mended.failed and [
        h.path for h in fresh(service, fake_embedder).search(SearchRequest(query=QUERY, k=1, show_all=True)).hits
    ] == [ANSWER]
    canaries.untouched()


def test_an_output_replaced_by_a_link_out_is_not_loaded_and_is_replaced_not_written_through(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder
) -> None:
    path = output_of(service, ANSWER)
    path.unlink()
    path.symlink_to(canaries.aifbin)  # a valid AIF-BIN file of the same note: only the folder check refuses it
    result = fresh(service, fake_embedder).search(SearchRequest(query=QUERY, k=3, show_all=True))
    assert any(str(path) in w and "symbolic link" in w for w in result.warnings), result.warnings
    report = fresh(service, fake_embedder).sync()
    assert report.modified == (ANSWER,) and not path.is_symlink()
    canaries.untouched()


def test_a_link_planted_as_an_orphan_output_is_not_removed_nor_its_target(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder
) -> None:
    """After a lost state file, a sync removes outputs no note owns: never a link (nor what it leads to), never
    a file without the AIF-BIN magic."""
    orphan_link = service.output_dir / "memory" / "planted.aif-bin"
    orphan_link.symlink_to(canaries.aifbin)
    text = service.output_dir / "memory" / "mine.aif-bin"
    text.write_text("a user's file, not botbin's")
    (service.output_dir / STATE_FILE).unlink()
    report = fresh(service, fake_embedder).sync()
    assert not report.failed
    assert orphan_link.is_symlink() and text.read_text() == "a user's file, not botbin's"
    canaries.untouched()


def test_a_vanished_notes_output_reached_through_a_link_is_not_removed(
    tmp_path: Path, service: MemoryService, fake_embedder: FakeEmbedder
) -> None:
    """A folder of outputs replaced by a link to a folder outside that holds a valid AIF-BIN file under the
    vanished note's output name: the removal refuses it (a warning names it), the file stays."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(output_of(service, OTHER), outside / "2026-11-04.aif-bin")
    canaries = make_canaries(outside, output_of(service, ANSWER).read_bytes())
    deep = service.output_dir / "memory" / "deep"
    shutil.rmtree(deep)
    deep.symlink_to(outside, target_is_directory=True)
    (service.root / OTHER).unlink()
    report = fresh(service, fake_embedder).sync()
    assert report.deleted == (OTHER,)
    assert any("leads outside" in w for w in report.warnings), report.warnings
    canaries.untouched()


def test_a_fifo_planted_as_an_output_does_not_hang_anything(
    service: MemoryService, fake_embedder: FakeEmbedder
) -> None:
    path = output_of(service, ANSWER)
    path.unlink()
    os.mkfifo(path)
    result = fresh(service, fake_embedder).search(SearchRequest(query=QUERY, k=3, show_all=True))
    assert any(str(path) in w for w in result.warnings), result.warnings
    assert fresh(service, fake_embedder).sync().modified == (ANSWER,)


def test_a_vanished_notes_output_linked_to_another_notes_output_removes_only_the_link(
    service: MemoryService, fake_embedder: FakeEmbedder
) -> None:
    """The link itself is what is judged: a link is not a file botbin wrote, so it stays; the output it leads
    to (another note's, inside the folder) is never removed in its place."""
    path = output_of(service, OTHER)
    path.unlink()
    path.symlink_to(output_of(service, ANSWER))
    (service.root / OTHER).unlink()
    report = fresh(service, fake_embedder).sync()
    assert report.deleted == (OTHER,)
    assert output_of(service, ANSWER).is_file() and path.is_symlink()
    assert [
        h.path for h in fresh(service, fake_embedder).search(SearchRequest(query=QUERY, k=1, show_all=True)).hits
    ] == [ANSWER]


# -- fuzz: same-size damage anywhere ----------------------------------------------------------------------------
@settings(max_examples=40, deadline=None, database=None, derandomize=True)
@given(offset=st.floats(min_value=0.0, max_value=0.999), flips=st.binary(min_size=1, max_size=8))
def test_fuzz_same_size_damage_anywhere_in_an_output(
    fuzz_ws: tuple[MemoryService, FakeEmbedder, bytes], offset: float, flips: bytes
) -> None:
    """Bytes XORed anywhere in an output (header, metadata, chunk block), its size kept: status, search and
    sync never raise, search never ranks a NaN, and the plain sync leaves a whole output of the note."""
    service, embedder, clean = fuzz_ws
    path = output_of(service, ANSWER)
    data = bytearray(clean)
    at = int(offset * (len(data) - len(flips)))
    for i, byte in enumerate(flips):
        data[at + i] ^= byte or 1
    write_same_inode(path, bytes(data))
    fresh(service, embedder).status()
    hits = fresh(service, embedder).search(SearchRequest(query=QUERY, k=3, show_all=True)).hits
    assert all(h.score == h.score for h in hits)  # no NaN score
    report = fresh(service, embedder).sync()
    assert not report.failed
    doc = decode(path.read_bytes(), str(path))
    assert doc.source == ANSWER and all(np.isfinite(c.embedding).all() for c in doc.chunks)
    path.write_bytes(clean)  # the next example starts from the clean file (and a sync re-stamps it)
    fresh(service, embedder).sync()


@pytest.fixture(scope="module")
def fuzz_ws(tmp_path_factory: pytest.TempPathFactory) -> tuple[MemoryService, FakeEmbedder, bytes]:
    embedder = FakeEmbedder()
    service = synced_workspace(tmp_path_factory.mktemp("fuzz-outputs"), embedder)
    return service, embedder, output_of(service, ANSWER).read_bytes()
