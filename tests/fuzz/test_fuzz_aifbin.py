"""Fuzzing the AIF-BIN reader (``botbin.aifbin.decode`` and ``decode_metadata``) with damaged real files.

The promise checked for every input (``aifbin_cases.check_decode``): only AifBinFormatError naming the file
is raised, or a valid AifBinDocument is returned; each call takes under 1 CPU second (and hypothesis' deadline
holds each example to 1 s of wall-clock time); each allocates at most ``ALLOC_RATIO`` x the input size +
``ALLOC_BASE_BYTES`` (tracemalloc peak). Examples are derandomized so a failure reproduces on every run;
``bench/fuzz_run.py`` drives the same strategies for longer, at random. The reader's bugs these tests found
have regression tests at the end (zlib bombs, bytes metadata keys, unhashable kinds, boolean lines).
"""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from aifbin_cases import (
    BASE_DOCUMENTS,
    BASE_FILES,
    Parts,
    bit_flipped,
    bomb_file,
    check_decode,
    inflate_length,
    inflated_lengths,
    length_fields,
    random_bytes,
    random_structure,
    truncated,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botbin.aifbin import AifBinDocument, decode, encode
from botbin.errors import AifBinFormatError

FUZZ = settings(
    max_examples=200, deadline=1000, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def test_base_files_decode_to_their_documents() -> None:
    """The mutations start from valid files: each base file passes the check and decodes to its document."""
    for data, doc in zip(BASE_FILES, [d for d in BASE_DOCUMENTS for _ in (0, 1)], strict=True):
        run = check_decode(data)
        assert isinstance(run.result, AifBinDocument)
        assert run.result.metadata == doc.metadata and len(run.result.chunks) == len(doc.chunks)


@pytest.mark.parametrize("index", range(len(BASE_FILES)))
def test_truncation_at_every_offset(index: int) -> None:
    """Every proper prefix of a real file keeps the promise and is rejected, compressed or not."""
    data = BASE_FILES[index]
    for size in range(len(data)):
        assert not isinstance(check_decode(data[:size]).result, AifBinDocument), size


@pytest.mark.parametrize("index", range(len(BASE_FILES)))
def test_every_length_prefix_inflated(index: int) -> None:
    """Every MessagePack length prefix in the metadata and the chunk block, set to 2**32 - 1 (fix types set to
    their maximum or widened to the 32-bit form), keeps the promise."""
    parts = Parts.of(BASE_FILES[index])
    for widen in (False, True):
        for field in length_fields(parts.meta):
            meta = inflate_length(parts.meta, field, 2**32 - 1, widen)
            check_decode(Parts(parts.flags, parts.count, meta, parts.body).join())
        for field in length_fields(parts.body):
            body = inflate_length(parts.body, field, 2**32 - 1, widen)
            check_decode(Parts(parts.flags, parts.count, parts.meta, body).join())


@FUZZ
@given(data=truncated())
def test_fuzz_truncated(data: bytes) -> None:
    check_decode(data)


@FUZZ
@given(data=bit_flipped())
def test_fuzz_bit_flips(data: bytes) -> None:
    check_decode(data)


@FUZZ
@given(data=inflated_lengths())
def test_fuzz_inflated_lengths(data: bytes) -> None:
    check_decode(data)


@FUZZ
@given(data=random_bytes())
def test_fuzz_random_bytes(data: bytes) -> None:
    check_decode(data)


@settings(FUZZ, max_examples=100)  # recursive values are slow to generate
@given(data=random_structure())
def test_fuzz_random_messagepack_structure(data: bytes) -> None:
    check_decode(data)


@pytest.mark.parametrize(("kind", "size"), [("zeros", 32 << 20), ("arrays", 1 << 20)])
def test_zlib_bomb(kind: str, size: int) -> None:
    """A small compressed body that inflates to 32 MiB of zeros, or to a million empty MessagePack arrays."""
    data = bomb_file(BASE_FILES[1], kind, size)
    assert len(data) < 40 << 10
    check_decode(data)


@settings(FUZZ, max_examples=20)
@given(key=st.binary(max_size=8))
def test_decoded_documents_encode_again(key: bytes) -> None:
    """What decode returns, encode writes back; metadata holding a bytes key is refused as malformed."""
    meta = msgpack.packb({key: 1, "source": "a.md", "model": {"dim": 1}})
    with pytest.raises(AifBinFormatError, match="not a string"):
        decode(Parts(0, 0, meta, msgpack.packb([])).join(), "x.aif-bin")
    good = decode(
        Parts(0, 0, msgpack.packb({"k": key, "source": "a.md", "model": {"dim": 1}}), msgpack.packb([])).join(),
        "x.aif-bin",
    )
    assert decode(encode(good), "x.aif-bin").metadata == good.metadata


def _one_chunk_file(**fields: Any) -> bytes:
    chunk = {"text": "t", "start_line": 0, "end_line": 1, "kind": "lore", "embedding": b"\0" * 4} | fields
    meta = msgpack.packb({"source": "a.md", "model": {"dim": 1}})
    return Parts(0, 1, meta, msgpack.packb([chunk])).join()


@pytest.mark.parametrize("kind", [{}, [], {"a": 1}, ["lore"]])
def test_unhashable_chunk_kind_is_a_format_error(kind: Any) -> None:
    """Found by random_structure: a chunk map whose "kind" holds a map or an array."""
    check_decode(_one_chunk_file(kind=kind))


def test_boolean_line_numbers_are_rejected() -> None:
    run = check_decode(_one_chunk_file(start_line=False, end_line=True))
    assert not isinstance(run.result, AifBinDocument)
