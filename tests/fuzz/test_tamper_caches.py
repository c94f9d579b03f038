"""Tampering with the caches botbin keeps beside the state file, each read back as untrusted input (issue 36):
the load cache (``index-cache.npz``), the spare embeddings (``embedding-cache.bin``), the ANN cache
(``ann.usearch`` + ``.json``), the memo store (``memos.sqlite``) and the publisher id. A truncated, mistyped,
NaN-holding, foreign or linked-out file is ignored with a message naming it (the cache is rebuilt), never a
crash, never a wrong answer, and never a file touched outside the workspace."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tamper_cases import ANSWER, NOTES, QUERY, Canaries, fresh, make_canaries, output_of, synced_workspace

from botbin.aifbin import decode
from botbin.index import load_cache
from botbin.index.load_cache import LOAD_CACHE_FILE, CacheConfig, read_cache
from botbin.memory.memos import MEMO_FILE, MemoStore
from botbin.service import MemoryService
from botbin.sync.spare import SPARE_FILE, read_spare
from botbin.workspace.remote import PUBLISHER_FILE, publisher_id
from conftest import FakeEmbedder

Arrays = dict[str, npt.NDArray[Any]]


@pytest.fixture
def service(tmp_path: Path, fake_embedder: FakeEmbedder) -> MemoryService:
    return synced_workspace(tmp_path, fake_embedder)


@pytest.fixture
def canaries(tmp_path: Path, service: MemoryService) -> Canaries:
    return make_canaries(tmp_path / "outside", output_of(service, ANSWER).read_bytes())


def _ranked(service: MemoryService) -> list[tuple[str, float]]:
    return [(h.path, round(h.score, 5)) for h in service.search(QUERY, k=3, reinforce=False).hits]


# -- the load cache ---------------------------------------------------------------------------------------------
def _cached(service: MemoryService, embedder: FakeEmbedder) -> tuple[Path, list[tuple[str, float]]]:
    """(the load cache, the ranking a search gives) once a first search has written the cache."""
    expected = _ranked(fresh(service, embedder))
    load_cache.wait_writes()
    path = service.output_dir / LOAD_CACHE_FILE
    assert read_cache(CacheConfig(path, embedder.model_id), 384) is not None
    return path, expected


def _rewrite(path: Path, change: Callable[[Arrays, dict[str, Any]], None], compressed: bool = False) -> None:
    """Rewrite the cache at ``path`` with ``change(arrays, header)`` applied (the header re-packed after)."""
    with np.load(path) as npz:
        arrays = {name: npz[name] for name in npz.files}
    head = msgpack.unpackb(arrays["meta"].tobytes(), raw=False)
    change(arrays, head)
    arrays["meta"] = np.frombuffer(msgpack.packb(head, use_bin_type=True), dtype=np.uint8)
    with open(path, "wb") as out:
        (np.savez_compressed if compressed else np.savez)(out, **arrays)


def _set(name: str, value: Callable[[npt.NDArray[Any]], npt.NDArray[Any]]) -> Callable[[Arrays, dict[str, Any]], None]:
    return lambda arrays, head: arrays.__setitem__(name, value(arrays[name]))


def _column(table: str, name: str, value: Callable[[list[Any]], list[Any]]) -> Callable[[Arrays, dict[str, Any]], None]:
    return lambda arrays, head: head[table].__setitem__(name, value(head[table][name]))


def _nan(matrix: npt.NDArray[Any]) -> npt.NDArray[Any]:
    out = matrix.copy()
    out[0, 0] = np.nan
    return out


def _another_dim(arrays: Arrays, head: dict[str, Any]) -> None:
    """Another model's cache: 128-d vectors, and the header says so."""
    head["dim"] = 128
    arrays["matrix"] = np.zeros((len(arrays["matrix"]), 128), np.float32)
    arrays["centroids"] = np.zeros((len(arrays["centroids"]), 128), np.float32)


CACHE_DAMAGE: dict[str, Callable[[Arrays, dict[str, Any]], None]] = {
    "nan-matrix": _set("matrix", _nan),
    "nan-centroid": _set("centroids", _nan),
    "matrix-float64": _set("matrix", lambda m: m.astype(np.float64)),
    "stamps-float": _set("stamps", lambda m: m.astype(np.float64)),
    "negative-line": _set("chunk_ints", lambda m: m * -1),
    "huge-token-id": _set("tokens", lambda m: np.full_like(m, 2**31 - 1)),
    "negative-slot": _set("bm25_slots", lambda m: m - 10**6),
    "infinite-tf": _set("bm25_tfs", lambda m: m + np.inf),
    "paths-swapped": _column("notes", "path", lambda c: c[::-1]),
    "path-dot-dot": _column("notes", "path", lambda c: ["../../outside/x.md" for _ in c]),
    "text-int": _column("chunks", "text", lambda c: [5 for _ in c]),
    "tags-string": _column("notes", "tags", lambda c: ["tag" for _ in c]),
    "kind-unknown": _column("chunks", "kind", lambda c: ["rule" for _ in c]),
    "vocab-ints": lambda arrays, head: head.__setitem__("vocab", list(range(len(head["vocab"])))),
    "another-dim": lambda arrays, head: _another_dim(arrays, head),
}


@pytest.mark.parametrize("damage", sorted(CACHE_DAMAGE))
def test_a_tampered_load_cache_is_ignored_and_the_answers_stay_right(
    service: MemoryService, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    path, expected = _cached(service, fake_embedder)
    _rewrite(path, CACHE_DAMAGE[damage])
    with caplog.at_level(logging.INFO):
        got = _ranked(fresh(service, fake_embedder))
    assert got == expected
    assert any(str(path) in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]
    load_cache.wait_writes()  # rewritten whole after that load
    assert read_cache(CacheConfig(path, fake_embedder.model_id), 384) is not None
    assert _ranked(fresh(service, fake_embedder)) == expected


@pytest.mark.parametrize("cut", ["truncated", "bit-flip", "compressed", "empty"])
def test_a_damaged_load_cache_file_is_ignored(
    service: MemoryService, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture, cut: str
) -> None:
    path, expected = _cached(service, fake_embedder)
    data = path.read_bytes()
    if cut == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif cut == "bit-flip":
        path.write_bytes(data[:1000] + bytes([data[1000] ^ 0xFF]) + data[1001:])
    elif cut == "compressed":  # a zip bomb would be one: this botbin stores members plain
        _rewrite(path, lambda arrays, head: None, compressed=True)
    else:
        path.write_bytes(b"")
    with caplog.at_level(logging.INFO):
        assert _ranked(fresh(service, fake_embedder)) == expected
    assert any(str(path) in r.getMessage() for r in caplog.records)


def test_a_load_cache_planted_as_a_link_out_is_not_read(
    tmp_path: Path, service: MemoryService, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    """A link to a load cache outside (another workspace's, here a valid one) is refused, and the rewrite
    replaces the link, never its target."""
    path, expected = _cached(service, fake_embedder)
    outside = tmp_path / "outside"
    outside.mkdir()
    path.rename(outside / LOAD_CACHE_FILE)
    canaries = make_canaries(outside, b"")
    path.symlink_to(outside / LOAD_CACHE_FILE)
    with caplog.at_level(logging.INFO):
        assert _ranked(fresh(service, fake_embedder)) == expected
    assert any("symbolic link" in r.getMessage() and str(path) in r.getMessage() for r in caplog.records)
    load_cache.wait_writes()
    assert not path.is_symlink()
    canaries.untouched()


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
    assert [h.path for h in fresh(service, fake_embedder).search(QUERY, k=1).hits] == [ANSWER]


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
    first.search(QUERY, k=1)
    first.lifecycle.close()  # as a process that ends: the store is whole on disk
    db_path = service.output_dir / MEMO_FILE
    for tail in ("-wal", "-shm"):
        (service.output_dir / (MEMO_FILE + tail)).unlink(missing_ok=True)
    db_path.write_bytes(db_path.read_bytes()[:100])
    reader = fresh(service, fake_embedder)
    assert [h.path for h in reader.search(QUERY, k=1).hits] == [ANSWER]
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
        assert [h.path for h in reader.search(QUERY, k=3).hits] == [p for p, _ in expected]  # reads and reinforces
        assert reader.context(QUERY, 500).tiers
        reader.lifecycle.flush()
    named = any(str(db_path) in r.getMessage() for r in caplog.records)
    assert named or damage in PLACE_DAMAGE  # a bad place is left out, then written again by the reconcile
    store = MemoStore(db_path)
    assert len(store.all()) == len(store.place_map())  # what is left reads back whole
    assert len(fresh(service, fake_embedder).search(QUERY, k=1).hits) == 1


@pytest.mark.parametrize("name", [MEMO_FILE, MEMO_FILE + "-wal", MEMO_FILE + "-shm"])
def test_a_memo_file_planted_as_a_link_is_never_written_through(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder, name: str
) -> None:
    first = fresh(service, fake_embedder)
    first.search(QUERY, k=1)
    first.lifecycle.close()
    for tail in ("", "-wal", "-shm"):
        (service.output_dir / (MEMO_FILE + tail)).unlink(missing_ok=True)
    (service.output_dir / name).symlink_to(canaries.sqlite)
    reader = fresh(service, fake_embedder)
    assert [h.path for h in reader.search(QUERY, k=1).hits] == [ANSWER]
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
    made = publisher_id(service.ws)
    assert len(made) == 32 and int(made, 16) >= 0
    assert path.read_text().split("\n")[:2] == [made, str(service.root)]
    assert publisher_id(service.ws) == made


def test_a_publisher_id_planted_as_a_link_out_is_not_read(service: MemoryService, canaries: Canaries) -> None:
    path = service.output_dir / PUBLISHER_FILE
    canaries.text.parent.joinpath("id").write_text(f"{'b' * 32}\n{service.root}\n")
    canaries = make_canaries(canaries.folder, canaries.aifbin.read_bytes())
    path.symlink_to(canaries.folder / "id")
    made = publisher_id(service.ws)
    assert made != "b" * 32 and not path.is_symlink()
    canaries.untouched()


# -- the ANN cache (usearch trusts the file it loads: a damaged graph used to crash the process) ------------------
ANN_SCRIPT = """
import json, os, sys, logging
from pathlib import Path
import numpy as np
from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index.ann import AnnIndex, usearch_available
from botbin.index.ann_live import AnnConfig
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
hits = again.search("", query, k=1, alpha=1.0)
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


# -- fuzz: any value in any column of the load cache ------------------------------------------------------------
ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.binary(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


@dataclass(frozen=True)
class FuzzCache:
    """A workspace synced once, its clean load cache and the ranking it gives (a short repr for hypothesis)."""

    service: MemoryService = field(repr=False)
    embedder: FakeEmbedder = field(repr=False)
    clean: bytes = field(repr=False)
    expected: list[tuple[str, float]] = field(repr=False)


@pytest.fixture(scope="module")
def fuzz_cache(tmp_path_factory: pytest.TempPathFactory) -> FuzzCache:
    embedder = FakeEmbedder()
    service = synced_workspace(tmp_path_factory.mktemp("fuzz-cache"), embedder)
    path, expected = _cached(service, embedder)
    return FuzzCache(service, embedder, path.read_bytes(), expected)


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(data=st.data())
def test_fuzz_any_value_in_the_load_cache(fuzz_cache: FuzzCache, data: st.DataObject) -> None:
    """One value of the header (a column's item, a whole column, a header field) or one element of an array
    replaced: a search never raises, its hits are the workspace's notes with finite scores, and a value of the
    wrong type or range leaves the answer as it is without the cache (a value that is merely different, a
    vector component moved within range, can only move scores: the files themselves are no better kept)."""
    service, embedder = fuzz_cache.service, fuzz_cache.embedder
    path = service.output_dir / LOAD_CACHE_FILE
    path.write_bytes(fuzz_cache.clean)
    where = data.draw(st.sampled_from(["notes", "chunks", "header", "array"]))
    value = data.draw(ANY_VALUE)

    def change(arrays: Arrays, head: dict[str, Any]) -> None:
        if where in ("notes", "chunks"):
            column = data.draw(st.sampled_from(sorted(head[where])))
            if data.draw(st.booleans()) and head[where][column]:
                head[where][column][data.draw(st.integers(0, len(head[where][column]) - 1))] = value
            else:
                head[where][column] = value
        elif where == "header":
            head[data.draw(st.sampled_from(["dim", "vocab", "format", "model", "tokenizer", "notes"]))] = value
        else:
            name = data.draw(st.sampled_from(sorted(k for k in arrays if k != "meta" and arrays[k].size)))
            flat = arrays[name].reshape(-1).copy()
            flat[data.draw(st.integers(0, flat.size - 1))] = data.draw(
                st.sampled_from([-1, 0, 2**31 - 1, -(2**31)]) if flat.dtype.kind in "iu" else st.floats(width=32)
            )
            arrays[name] = flat.reshape(arrays[name].shape)

    _rewrite(path, change)
    got = _ranked(fresh(service, embedder))
    assert {p for p, _ in got} <= set(NOTES) and all(np.isfinite(score) for _, score in got)
    if where != "array":
        assert got == fuzz_cache.expected
