"""Tampering with the load cache (``index-cache.npz``), read back as untrusted input (issue 36): a truncated,
mistyped, NaN-holding, foreign or linked-out cache is ignored with a message naming it and rewritten, never a
crash, never a wrong answer, and never a file touched outside the workspace. (The other caches:
test_tamper_sidecars.py, test_tamper_ann.py.)"""

from __future__ import annotations

import logging
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
from tamper_cases import NOTES, QUERY, fresh, make_canaries, synced_workspace

from botbin.index import load_cache
from botbin.index.load_cache import LOAD_CACHE_FILE, CacheConfig, read_cache
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from conftest import FakeEmbedder

Arrays = dict[str, npt.NDArray[Any]]


@pytest.fixture
def service(tmp_path: Path, fake_embedder: FakeEmbedder) -> MemoryService:
    return synced_workspace(tmp_path, fake_embedder)


def _ranked(service: MemoryService) -> list[tuple[str, float]]:
    return [
        (h.path, round(h.score, 5))
        for h in service.search(SearchRequest(query=QUERY, k=3, show_all=True), reinforce=False).hits
    ]


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
