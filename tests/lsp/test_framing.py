"""The strict LSP framing (lsp/framing.py) on byte streams: header lines come out as pygls reads them, a
malformed header or a cut body ends the stream with a reason, and a length nobody sends costs no memory."""

from __future__ import annotations

import io
import tracemalloc

import pytest

from botbin.lsp.framing import MAX_HEADER_LINE_BYTES, MAX_MESSAGE_BYTES, FramedReader


def _reader(data: bytes) -> FramedReader:
    return FramedReader(io.BytesIO(data))


def test_a_message_reads_as_pygls_expects_it() -> None:
    reader = _reader(b'content-length:  7\r\nContent-Type: application/vscode-jsonrpc\n\n{"a":1}')
    assert reader.readline() == b"Content-Length: 7\r\n"
    assert reader.readline() == b"Content-Type: application/vscode-jsonrpc\r\n"
    assert reader.readline() == b"\r\n"
    assert reader.read(7) == b'{"a":1}'
    assert reader.readline() == b"" and reader.error is None  # the end of the input is no error


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"Content-Length: abc\r\n", "bad Content-Length"),
        (b"Content-Length: -5\r\n", "bad Content-Length"),
        (b"Content-Length: +5\r\n", "bad Content-Length"),
        (b"Content-Length: 0\r\n", "Content-Length of 0"),
        (b"Content-Length: %d\r\n" % (MAX_MESSAGE_BYTES + 1), "from 1 to"),
        (b"Content-Length: " + b"9" * 5000 + b"\r\n", "bad Content-Length"),
        (b"Content-Length: 5\r\nContent-Length: 5\r\n", "bad Content-Length"),
        (b"\x00\xff\xfe garbage\r\n", "not a header line"),
        (b"no colon here\r\n", "not a header line"),
        (b"Content-Type: x\r\n\r\n", "without Content-Length"),
        (b"Content-Length: 5" + b"0" * MAX_HEADER_LINE_BYTES, "longer than"),
        (b"Content-Length: 5", "a cut header"),
        (b"Content-Length: 5\r\n", "inside a message header"),
    ],
)
def test_a_malformed_header_ends_the_stream(data: bytes, reason: str) -> None:
    reader = _reader(data)
    lines = [reader.readline() for _ in range(4)]
    assert b"" in lines and reader.error is not None and reason in reader.error, (lines, reader.error)
    assert reader.readline() == b"" and reader.read(2) == b""  # and nothing more is read


def test_a_cut_body_ends_the_stream() -> None:
    reader = _reader(b"Content-Length: 10\r\n\r\n{}")
    assert reader.readline() == b"Content-Length: 10\r\n" and reader.readline() == b"\r\n"
    assert reader.read(10) == b""
    assert reader.error is not None and "2 of 10 bytes came" in reader.error


def test_a_length_nobody_sends_costs_no_memory() -> None:
    size = MAX_MESSAGE_BYTES  # 256 MiB announced, 2 bytes sent
    reader = _reader(b"Content-Length: %d\r\n\r\n{}" % size)
    reader.readline(), reader.readline()
    tracemalloc.start()
    try:
        assert reader.read(size) == b""
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024


def test_lose_keeps_the_first_reason() -> None:
    reader = _reader(b"")
    reader.lose("first")
    reader.lose("second")
    assert reader.error == "first"
