"""Tampering with the sidecar files beside the state file, each read back as untrusted input (issue 36): the spare
embeddings (``embedding-cache.bin``), the memo store (``memos.sqlite``) and the publisher id. A truncated,
mistyped, NaN-holding or linked-out file is ignored or set aside with a message naming it, never a crash, never
a NaN vector lent to an output, and never a file touched outside the workspace."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
from tamper_cases import ANSWER, QUERY, Canaries, fresh, make_canaries, output_of, synced_workspace

from botbin.aifbin import decode
from botbin.memory.memos import MEMO_FILE, MemoStore
from botbin.service import MemoryService
from botbin.sync.spare import SPARE_FILE, read_spare
from botbin.wire.requests import ContextRequest, SearchRequest
from botbin.workspace.remote import PUBLISHER_FILE, publisher_id
from conftest import FakeEmbedder


@pytest.fixture
def service(tmp_path: Path, fake_embedder: FakeEmbedder) -> MemoryService:
    return synced_workspace(tmp_path, fake_embedder)


@pytest.fixture
def canaries(tmp_path: Path, service: MemoryService) -> Canaries:
    return make_canaries(tmp_path / "outside", output_of(service, ANSWER).read_bytes())


def _ranked(service: MemoryService) -> list[tuple[str, float]]:
    return [
        (h.path, round(h.score, 5))
        for h in service.search(SearchRequest(query=QUERY, k=3, show_all=True), reinforce=False).hits
    ]


# -- the spare embeddings -----------------------------------------------------------------------------------------
def _with_spare(service: MemoryService, embedder: FakeEmbedder) -> tuple[Path, str]:
    """The spare file once a note was deleted (its vectors moved there), and that note's text."""
    text = (service.root / ANSWER).read_text()
    (service.root / ANSWER).unlink()
    assert fresh(service, embedder).sync().deleted == (ANSWER,)
    path = service.output_dir / SPARE_FILE
    assert read_spare(path, embedder.model_id, 384)
    return path, text


def _repack(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    raw = msgpack.unpackb(path.read_bytes(), raw=False)
    change(raw)
    path.write_bytes(msgpack.packb(raw, use_bin_type=True))


SPARE_DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "nan-vectors": lambda raw: raw.__setitem__("vectors", np.full(len(raw["vectors"]) // 4, np.nan, "<f4").tobytes()),
    "int-keys": lambda raw: raw.__setitem__("keys", list(range(len(raw["keys"])))),
    "sizes-disagree": lambda raw: raw.__setitem__("vectors", raw["vectors"][:-4]),
    "another-dim": lambda raw: raw.__setitem__("dim", 128),
    "not-a-map": lambda raw: raw.clear(),
}


@pytest.mark.parametrize("damage", sorted(SPARE_DAMAGE))
def test_a_tampered_spare_file_never_lends_a_vector(
    service: MemoryService, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    """A note that comes back takes its vectors from the spare file: a NaN one would be written into its
    output (and make it fail to load), so a damaged file lends nothing and the note is embedded again."""
    path, text = _with_spare(service, fake_embedder)
    _repack(path, SPARE_DAMAGE[damage])
    (service.root / ANSWER).write_text(text)
    before = fake_embedder.embedded
    with caplog.at_level(logging.INFO):
        report = fresh(service, fake_embedder).sync()
    assert report.added == (ANSWER,) and not report.failed
    assert fake_embedder.embedded > before
    doc = decode(output_of(service, ANSWER).read_bytes(), "x")
    assert all(np.isfinite(c.embedding).all() for c in doc.chunks)
    assert [
        h.path for h in fresh(service, fake_embedder).search(SearchRequest(query=QUERY, k=1, show_all=True)).hits
    ] == [ANSWER]


def test_a_truncated_spare_file_lends_nothing(service: MemoryService, fake_embedder: FakeEmbedder) -> None:
    path, text = _with_spare(service, fake_embedder)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert read_spare(path, fake_embedder.model_id, 384) == {}
    (service.root / ANSWER).write_text(text)
    assert fresh(service, fake_embedder).sync().added == (ANSWER,)


def test_a_truncated_memo_store_is_set_aside_with_a_warning(
    service: MemoryService, fake_embedder: FakeEmbedder
) -> None:
    first = fresh(service, fake_embedder)
    first.search(SearchRequest(query=QUERY, k=1, show_all=True))
    first.lifecycle.close()  # as a process that ends: the store is whole on disk
    db_path = service.output_dir / MEMO_FILE
    for tail in ("-wal", "-shm"):
        (service.output_dir / (MEMO_FILE + tail)).unlink(missing_ok=True)
    db_path.write_bytes(db_path.read_bytes()[:100])
    reader = fresh(service, fake_embedder)
    assert [h.path for h in reader.search(SearchRequest(query=QUERY, k=1, show_all=True)).hits] == [ANSWER]
    assert any(str(db_path) in w for w in reader.lifecycle.store.warnings), reader.lifecycle.store.warnings


def test_a_spare_file_planted_as_a_link_out_is_not_read_nor_written_through(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder
) -> None:
    path = service.output_dir / SPARE_FILE
    path.unlink(missing_ok=True)
    path.symlink_to(canaries.aifbin)
    assert read_spare(path, fake_embedder.model_id, 384) == {}
    (service.root / ANSWER).unlink()
    assert fresh(service, fake_embedder).sync().deleted == (ANSWER,)
    assert not path.is_symlink()  # replaced by the removed note's vectors; the target is untouched
    canaries.untouched()


# -- the memo store -------------------------------------------------------------------------------------------------
MEMO_DAMAGE = {
    "text-line": "start_line = 'abc'",
    "reversed-lines": "end_line = -1",
    "infinite-decay": "decay_score = 1e999",
    "decay-above-one": "decay_score = 7.5",
    "negative-count": "reinforcement_count = -5",
    "text-count": "reinforcement_count = 'many'",
    "tags-not-json": "tags = '{'",
    "tags-not-a-list": "tags = '{\"a\": 1}'",
    "created-garbage": "created = 'yesterday-ish'",
    "created-number": "created = 12",
    "retrieved-garbage": "last_retrieved = 'x'",
    "path-blob": "path = x'00ff'",
}


PLACE_DAMAGE = ("text-line", "reversed-lines", "path-blob")


@pytest.mark.parametrize("damage", sorted(MEMO_DAMAGE))
def test_a_memo_row_of_the_wrong_type_is_removed_and_made_again(
    service: MemoryService, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    expected = _ranked(fresh(service, fake_embedder))
    db_path = service.output_dir / MEMO_FILE
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT count(*) FROM memos").fetchone()[0] == 2  # MEMORY.md holds rules, not memos
        db.execute(f"UPDATE memos SET {MEMO_DAMAGE[damage]}")  # every row
    with caplog.at_level(logging.WARNING):
        reader = fresh(service, fake_embedder)
        assert [h.path for h in reader.search(SearchRequest(query=QUERY, k=3, show_all=True)).hits] == [
            p for p, _ in expected
        ]  # reads and reinforces
        assert reader.context(ContextRequest(query=QUERY, budget_tokens=500)).tiers
        reader.lifecycle.flush()
    named = any(str(db_path) in r.getMessage() for r in caplog.records)
    assert named or damage in PLACE_DAMAGE  # a bad place is left out, then written again by the reconcile
    store = MemoStore(db_path)
    assert len(store.all()) == len(store.place_map())  # what is left reads back whole
    assert len(fresh(service, fake_embedder).search(SearchRequest(query=QUERY, k=1, show_all=True)).hits) == 1


@pytest.mark.parametrize("name", [MEMO_FILE, MEMO_FILE + "-wal", MEMO_FILE + "-shm"])
def test_a_memo_file_planted_as_a_link_is_never_written_through(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder, name: str
) -> None:
    first = fresh(service, fake_embedder)
    first.search(SearchRequest(query=QUERY, k=1, show_all=True))
    first.lifecycle.close()
    for tail in ("", "-wal", "-shm"):
        (service.output_dir / (MEMO_FILE + tail)).unlink(missing_ok=True)
    (service.output_dir / name).symlink_to(canaries.sqlite)
    reader = fresh(service, fake_embedder)
    assert [h.path for h in reader.search(SearchRequest(query=QUERY, k=1, show_all=True)).hits] == [ANSWER]
    assert not (service.output_dir / name).is_symlink()
    assert (service.output_dir / (name + ".link")).is_symlink()
    canaries.untouched()


# -- the publisher id ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "content",
    [
        "",
        "not-an-id\n{root}\n",
        "../../../etc\n{root}\n",
        "0" * 4096 + "\n{root}\n",
        "\xff\xfe\n",
        "{good}\n/elsewhere\n",
    ],
    ids=["empty", "not-hex", "path", "huge", "not-utf8", "another-folder"],
)
def test_a_tampered_publisher_id_is_replaced_by_a_new_one(service: MemoryService, content: str) -> None:
    path = service.output_dir / PUBLISHER_FILE
    path.write_bytes(content.format(root=service.root, good="a" * 32).encode("utf-8", "surrogateescape"))
    made = publisher_id(service.ws.team)
    assert len(made) == 32 and int(made, 16) >= 0
    assert path.read_text().split("\n")[:2] == [made, str(service.root)]
    assert publisher_id(service.ws.team) == made


def test_a_publisher_id_planted_as_a_link_out_is_not_read(service: MemoryService, canaries: Canaries) -> None:
    path = service.output_dir / PUBLISHER_FILE
    canaries.text.parent.joinpath("id").write_text(f"{'b' * 32}\n{service.root}\n")
    canaries = make_canaries(canaries.folder, canaries.aifbin.read_bytes())
    path.symlink_to(canaries.folder / "id")
    made = publisher_id(service.ws.team)
    assert made != "b" * 32 and not path.is_symlink()
    canaries.untouched()
