"""AIF-BIN fuzz inputs and the reader's promise, shared by tests/fuzz and bench/fuzz_run.py.

Inputs start from real files written by ``botbin.aifbin.encode`` (plain and zlib-compressed) and are then
damaged: truncated, bit-flipped, header lengths or MessagePack length prefixes inside the metadata and the
chunk block inflated (to 2**32 - 1 and other large values), random bytes after a real or random header,
random MessagePack values in the place of the metadata or the chunks, and zlib bombs.

The promise ``check_decode`` checks for every input: ``decode`` and ``decode_metadata`` raise nothing but
AifBinFormatError (naming the file) or return a valid document; each runs under ``TIME_LIMIT_S`` CPU seconds;
neither allocates more than ``ALLOC_RATIO`` x the input size + ``ALLOC_BASE_BYTES``.
"""

from __future__ import annotations

import time
import tracemalloc
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import msgpack
import numpy as np
from hypothesis import strategies as st

from botbin.aifbin import (
    FLAG_COMPRESSED,
    HEADER,
    HEADER_SIZE,
    KINDS,
    MAGIC,
    AifBinDocument,
    ChunkRecord,
    decode,
    decode_metadata,
    encode,
)
from botbin.errors import AifBinFormatError

NAME = "memory/aifbin/fuzz.aif-bin"
#: Most CPU seconds one decode may take (CPU, not wall-clock time: other work on a shared machine must not count).
TIME_LIMIT_S = 1.0
#: Allocation allowed per input byte. MessagePack turns one byte (0x90, 0x80: an empty array or map) into a
#: Python object of ~64 bytes plus a list slot of 8, so ~72 is what any plain MessagePack reader costs.
ALLOC_RATIO = 100
#: Allocation allowed whatever the input size (bytes).
ALLOC_BASE_BYTES = 8 << 20
HUGE = (2**32 - 1, 2**31, 2**16 - 1, 2**8 - 1)


def _document(n_chunks: int, dim: int, text: str) -> AifBinDocument:
    rng = np.random.default_rng(n_chunks * 1000 + dim)
    source = f"# Note\n\n{text}\n".encode()
    meta: dict[str, Any] = {
        "source": "memory/fuzz.md",
        "source_md5": "0" * 32,
        "source_bytes": len(source),
        "model": {"name": "test/fuzz", "dim": dim, "normalized": True, "max_tokens": 256},
        "chunker": {"target_tokens": 256, "overlap_tokens": 32, "min_tokens": 50},
        "frontmatter": {"tags": ["a", "b"], "n": 2**40, "ratio": 0.5, "nested": {"x": [1, None, True]}},
        "directives": [{"kind": "hard", "cues": [{"modality": "obligation", "line": 3}]}],
        "source_text": source,
    }
    chunks = tuple(
        ChunkRecord(
            i,
            f"{text} {i} ü 世界",
            2 + i,
            3 + i,
            ("Note", f"Part {i}"),
            sorted(KINDS)[i % 3],
            7 + i,
            f"{i:032x}",
            rng.normal(size=dim).astype(np.float32),
            directives=({"modality": "must", "span": [0, 4]},) if i % 2 else (),
        )
        for i in range(n_chunks)
    )
    return AifBinDocument(meta, chunks)


#: Documents the mutations start from: no chunks, a few small ones, more and larger embeddings.
BASE_DOCUMENTS = (_document(0, 4, "empty"), _document(3, 8, "three chunks"), _document(12, 32, "twelve"))
#: Every base document encoded plain and compressed.
BASE_FILES = tuple(encode(doc, compress=c) for doc in BASE_DOCUMENTS for c in (False, True))
#: A real-sized file (200 chunks of 384 floats, ~340 KB) plain and compressed, for the long run's allocation ratios.
LARGE_FILES = tuple(encode(_document(200, 384, "large " * 50), compress=c) for c in (False, True))


@dataclass(frozen=True)
class Parts:
    """A file taken apart: header fields, packed metadata and the (inflated) packed chunk block."""

    flags: int
    count: int
    meta: bytes
    body: bytes

    @classmethod
    def of(cls, data: bytes) -> Parts:
        _, _, flags, _, meta_len, count = HEADER.unpack_from(data)
        body = data[HEADER_SIZE + meta_len :]
        return cls(
            flags,
            count,
            data[HEADER_SIZE : HEADER_SIZE + meta_len],
            zlib.decompress(body) if flags & FLAG_COMPRESSED else body,
        )

    def join(self, meta_len: int | None = None) -> bytes:
        """The file again (the body compressed when flag bit 0 is set); ``meta_len`` overrides the header."""
        body = zlib.compress(self.body, 6) if self.flags & FLAG_COMPRESSED else self.body
        size = len(self.meta) if meta_len is None else meta_len
        return HEADER.pack(MAGIC, 2, self.flags, 0, size, self.count) + self.meta + body


# --- MessagePack length prefixes --------------------------------------------------------------------------------

_FIXED = {
    0xC0: 0,
    0xC2: 0,
    0xC3: 0,
    0xCA: 4,
    0xCB: 8,
    0xCC: 1,
    0xCD: 2,
    0xCE: 4,
    0xCF: 8,
    0xD0: 1,
    0xD1: 2,
    0xD2: 4,
    0xD3: 8,
    0xD4: 2,
    0xD5: 3,
    0xD6: 5,
    0xD7: 9,
    0xD8: 17,
}
_BYTES = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}  # bin and str: width of the length field
_EXT = {0xC7: 1, 0xC8: 2, 0xC9: 4}
_ITEMS = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}  # array/map: (width, values per item)


def length_fields(packed: bytes) -> list[tuple[int, int]]:
    """(offset, width in bytes) of every length prefix in one MessagePack value; width 0 marks a fix type
    (fixstr, fixarray, fixmap) whose length is in the low bits of the byte at ``offset``."""
    out: list[tuple[int, int]] = []
    stack, pos = [1], 0
    while stack and pos < len(packed):
        stack[-1] -= 1
        b = packed[pos]
        items = 0
        if b <= 0x7F or b >= 0xE0:
            pos += 1
        elif b <= 0x9F:  # fixmap 0x80-0x8f, fixarray 0x90-0x9f
            out.append((pos, 0))
            items, pos = (b & 0x0F) * (2 if b <= 0x8F else 1), pos + 1
        elif b <= 0xBF:
            out.append((pos, 0))
            pos += 1 + (b & 0x1F)
        elif b in _FIXED:
            pos += 1 + _FIXED[b]
        elif b in _BYTES or b in _EXT:
            width = _BYTES.get(b) or _EXT[b]
            out.append((pos + 1, width))
            pos += 1 + width + int.from_bytes(packed[pos + 1 : pos + 1 + width], "big") + (b in _EXT)
        elif b in _ITEMS:
            width, per = _ITEMS[b]
            out.append((pos + 1, width))
            items, pos = int.from_bytes(packed[pos + 1 : pos + 1 + width], "big") * per, pos + 1 + width
        else:
            raise ValueError(f"byte {b:#x} at {pos} is never used by MessagePack")
        if items:
            stack.append(items)
        while stack and stack[-1] == 0:
            stack.pop()
    return out


def inflate_length(packed: bytes, field: tuple[int, int], value: int, widen: bool) -> bytes:
    """``packed`` with one length prefix set to ``value`` (clipped to its width). A fix type is set to its
    largest value, or with ``widen`` rewritten as the 32-bit form (str32, array32, map32) holding ``value``."""
    pos, width = field
    if width:
        return packed[:pos] + min(value, 256**width - 1).to_bytes(width, "big") + packed[pos + width :]
    b = packed[pos]
    if not widen:
        return packed[:pos] + bytes([b | (0x0F if b <= 0x9F else 0x1F)]) + packed[pos + 1 :]
    tag = 0xDF if b <= 0x8F else 0xDD if b <= 0x9F else 0xDB
    return packed[:pos] + bytes([tag]) + min(value, 2**32 - 1).to_bytes(4, "big") + packed[pos + 1 :]


# --- strategies ---------------------------------------------------------------------------------------------------

base_files = st.sampled_from(BASE_FILES)


@st.composite
def truncated(draw: st.DrawFn, files: tuple[bytes, ...] = BASE_FILES) -> bytes:
    """A real file cut at any offset."""
    data = draw(st.sampled_from(files))
    return data[: draw(st.integers(0, len(data)))]


@st.composite
def bit_flipped(draw: st.DrawFn, files: tuple[bytes, ...] = BASE_FILES) -> bytes:
    """A real file with 1-8 bits flipped anywhere (header bits more often: they steer the reader)."""
    data = bytearray(draw(st.sampled_from(files)))
    anywhere = st.integers(0, len(data) - 1)
    for _ in range(draw(st.integers(1, 8))):
        data[draw(st.one_of(st.integers(0, HEADER_SIZE - 1), anywhere))] ^= 1 << draw(st.integers(0, 7))
    return bytes(data)


@st.composite
def inflated_lengths(draw: st.DrawFn, files: tuple[bytes, ...] = BASE_FILES) -> bytes:
    """A real file with metadata_len, chunk_count or one MessagePack length prefix set to a huge value."""
    parts = Parts.of(draw(st.sampled_from(files)))
    value = draw(st.one_of(st.sampled_from(HUGE), st.integers(0, 2**32 - 1)))
    where = draw(st.sampled_from(["metadata_len", "chunk_count", "metadata", "chunks"]))
    if where == "metadata_len":
        return parts.join(meta_len=value)
    if where == "chunk_count":
        return Parts(parts.flags, value, parts.meta, parts.body).join()
    packed = parts.meta if where == "metadata" else parts.body
    fields = length_fields(packed)
    changed = inflate_length(packed, draw(st.sampled_from(fields)), value, draw(st.booleans()))
    if where == "metadata":
        return Parts(parts.flags, parts.count, changed, parts.body).join()
    return Parts(parts.flags, parts.count, parts.meta, changed).join()


_HEADERS = (b"", MAGIC, MAGIC + b"\x02", MAGIC + b"\x02\x00\x00\x00", MAGIC + b"\x02\x01\x00\x00")


def _head_and_metadata(data: bytes) -> bytes:
    return data[: HEADER_SIZE + len(Parts.of(data).meta)]


@st.composite
def random_bytes(draw: st.DrawFn) -> bytes:
    """Random bytes, alone or after a (partial) real header, or after a real file's header and metadata."""
    tail = draw(st.binary(max_size=2000))
    head = draw(st.one_of(st.sampled_from(_HEADERS), base_files.map(_head_and_metadata)))
    return head + tail


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(),
    st.text(max_size=20),
    st.binary(max_size=40),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20,
)
_CHUNK_KEYS = (
    "id",
    "text",
    "start_line",
    "end_line",
    "heading_path",
    "kind",
    "directives",
    "tokens",
    "text_md5",
    "embedding",
)


@st.composite
def random_structure(draw: st.DrawFn) -> bytes:
    """A real header around random MessagePack: metadata with or without a usable model.dim, chunk maps
    with the real keys holding random values (embeddings often of the right size)."""
    dim = draw(st.integers(1, 4))
    meta = draw(st.dictionaries(st.text(max_size=8), _values, max_size=4))
    if draw(st.booleans()):
        meta |= {"source": "a.md", "model": {"dim": dim}}
    right = st.binary(min_size=dim * 4, max_size=dim * 4)
    chunk = st.fixed_dictionaries(
        {}, optional={k: st.one_of(_values, right if k == "embedding" else _values) for k in _CHUNK_KEYS}
    )
    good = {"text": "t", "start_line": 0, "end_line": 1, "kind": "lore", "embedding": b"\0" * (dim * 4)}
    chunks = draw(st.lists(st.one_of(chunk, chunk.map(lambda c: {**good, **c}), _values), max_size=4))
    body: Any = chunks if draw(st.integers(0, 9)) else draw(_values)
    count = len(chunks) if draw(st.integers(0, 9)) else draw(st.integers(0, 2**32 - 1))
    flags = draw(st.sampled_from([0, FLAG_COMPRESSED]))
    return Parts(flags, count, msgpack.packb(meta), msgpack.packb(body)).join()


@lru_cache(maxsize=8)
def bomb_body(kind: str, size: int) -> bytes:
    """A compressed chunk block that inflates to ``size`` bytes: zeros, or (``kind`` "arrays") a MessagePack
    array of empty arrays (one byte each in MessagePack, ~64 bytes each as Python objects)."""
    inflated = bytes(size) if kind == "zeros" else b"\xdd" + (size - 5).to_bytes(4, "big") + b"\x90" * (size - 5)
    return zlib.compress(inflated, 9)


def bomb_file(data: bytes, kind: str, size: int) -> bytes:
    """The header and metadata of the real file ``data``, flag bit 0, then ``bomb_body(kind, size)``."""
    parts = Parts.of(data)
    return HEADER.pack(MAGIC, 2, FLAG_COMPRESSED, 0, len(parts.meta), parts.count) + parts.meta + bomb_body(kind, size)


@st.composite
def zlib_bombs(draw: st.DrawFn) -> bytes:
    """A real file whose chunk block is replaced by a small body that inflates to 1-64 MiB of zeros or to
    1-2 million empty arrays (64-128 MiB of Python objects)."""
    kind = draw(st.sampled_from(["zeros", "arrays"]))
    mib = draw(st.sampled_from([1, 2, 8, 64] if kind == "zeros" else [1, 2]))
    return bomb_file(draw(base_files), kind, mib << 20)


# --- the promise ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """What one call did."""

    result: Any
    """The return value, or the exception raised."""
    cpu_s: float
    """CPU seconds of this process during the call."""
    wall_s: float
    peak_bytes: int
    """Peak of the memory traced by tracemalloc during the call (0 when not traced)."""


def measure(fn: Callable[..., Any], *args: Any, trace: bool = True) -> Run:
    """Call ``fn(*args)``, catching any exception, timed and (with ``trace``) with its allocation peak."""
    if trace:
        tracemalloc.start()
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        result = fn(*args)
    except Exception as exc:
        result = exc
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    if trace:
        tracemalloc.stop()
    return Run(result, cpu, wall, peak)


def assert_valid(doc: AifBinDocument) -> None:
    """Every field holds what the AifBinDocument and ChunkRecord docstrings say."""
    assert isinstance(doc.metadata, dict) and isinstance(doc.source, str)
    dim = doc.dim
    assert isinstance(dim, int) and dim > 0
    for i, c in enumerate(doc.chunks):
        assert c.id == i and isinstance(c.text, str) and c.kind in KINDS
        assert isinstance(c.start_line, int) and isinstance(c.end_line, int) and 0 <= c.start_line < c.end_line
        assert all(isinstance(h, str) for h in c.heading_path)
        assert isinstance(c.tokens, int) and not isinstance(c.tokens, bool) and c.tokens >= 0
        assert c.embedding.dtype == np.float32 and c.embedding.shape == (dim,)
        assert all(isinstance(d, dict) for d in c.directives)
    assert doc.embeddings().shape == (len(doc.chunks), dim)


def run_decoders(data: bytes) -> tuple[Run, Run]:
    """The runs of ``decode_metadata`` and ``decode`` on ``data``."""
    return measure(decode_metadata, data, NAME), measure(decode, data, NAME)


def assert_promise(data: bytes, runs: tuple[Run, Run]) -> None:
    """Only AifBinFormatError naming the file, or a valid document; in time; allocation within the bound."""
    for run in runs:
        if isinstance(run.result, Exception):
            assert isinstance(run.result, AifBinFormatError), f"{type(run.result).__name__}: {run.result}"
            assert run.result.path == NAME
        limit = ALLOC_RATIO * len(data) + ALLOC_BASE_BYTES
        assert run.peak_bytes <= limit, f"allocated {run.peak_bytes:,} bytes for a {len(data):,}-byte input"
        assert run.cpu_s < TIME_LIMIT_S, f"took {run.cpu_s:.2f} CPU s"
    if isinstance(runs[1].result, AifBinDocument):
        assert_valid(runs[1].result)


def check_decode(data: bytes) -> Run:
    """Assert the reader's promise for ``data`` (see the module docstring); return decode's run."""
    runs = run_decoders(data)
    assert_promise(data, runs)
    return runs[1]
