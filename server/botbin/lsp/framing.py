"""The LSP base protocol's framing, read strictly: ``Content-Length: N`` headers, a blank line, N bytes of JSON.

pygls reads headers leniently: a header it cannot read (``Content-Length: abc``, a negative length, garbage
bytes, a header block with no ``Content-Length``) is skipped, and the next message's bytes are then taken for
headers or for this one's body, so the server stays up and never answers again. A huge length is allocated
whole before a byte arrives (``MemoryError``). ``FramedReader`` is the stdin that pygls reads from
(``start_io``): it checks each header line and reads a body in chunks (memory follows the bytes that came,
never the length announced). A header it cannot trust ends the connection: the reason is logged to stderr,
pygls sees the end of its input, and the server exits with status 1. A body that is not JSON ends it too
(``BotbinLanguageServer.report_server_error`` calls ``lose``): its length was wrong, or the stream is not
framed, and reading on would hang on the rest of it.
"""

from __future__ import annotations

import logging
import re
from typing import IO

log = logging.getLogger(__name__)

MAX_HEADER_LINE_BYTES = 8 * 1024
"""Longest header line read (real ones are under 100 bytes)."""
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""Largest ``Content-Length`` accepted, in bytes (a 50 MB note opened in an editor is a ~50 MB message)."""
READ_CHUNK_BYTES = 1024 * 1024
"""A body is read this much at a time, so a length nobody sends never costs its memory."""

_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""A header name (RFC 7230 token)."""


class FramedReader:
    """A binary stream of LSP messages, as pygls reads it: ``readline`` for each header line, ``read(n)`` for
    a body. Header lines come back as pygls expects them (``Content-Length: N\\r\\n``, however the client
    spelled the name's case or spacing); after a malformed one, and at the end of ``stream``, both return
    ``b""``."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._length: int | None = None
        """The ``Content-Length`` of the header block being read, None before it."""
        self.error: str | None = None
        """Why the connection was ended (a malformed header, a truncated body), None while it is sound."""

    def lose(self, reason: str) -> None:
        """End the connection: log ``reason``, and read nothing more."""
        if self.error is None:
            self.error = reason
            log.error("the LSP connection is closed: %s", reason)

    def readline(self) -> bytes:
        """One header line, or the blank line that ends a header block; ``b""`` at the end."""
        if self.error is not None:
            return b""
        line = self._stream.readline(MAX_HEADER_LINE_BYTES + 1)
        if not line:
            if self._length is not None:
                self.lose("the input ended inside a message header")
            return b""
        if not line.endswith(b"\n"):
            too_long = len(line) > MAX_HEADER_LINE_BYTES
            self.lose(f"a header line longer than {MAX_HEADER_LINE_BYTES} bytes" if too_long else "a cut header")
            return b""
        if not line.strip():
            if self._length is None:
                self.lose("a message header without Content-Length")
                return b""
            return b"\r\n"
        return self._header(line.rstrip(b"\r\n"))

    def _header(self, line: bytes) -> bytes:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            self.lose(f"not a header line: {line[:80]!r}")
            return b""
        if name.lower() != b"content-length":
            return line + b"\r\n"  # Content-Type and the like: pygls reads past them
        value = value.strip()
        if not value.isdigit() or len(value) > 12 or self._length is not None:  # ASCII digits only, no sign
            self.lose(f"a bad Content-Length: {line[:80]!r}")
            return b""
        length = int(value)
        if not 0 < length <= MAX_MESSAGE_BYTES:
            self.lose(f"a Content-Length of {length} bytes (from 1 to {MAX_MESSAGE_BYTES} are read)")
            return b""
        self._length = length
        return b"Content-Length: %d\r\n" % length

    def read(self, size: int) -> bytes:
        """The body of ``size`` bytes (the header's length), read in chunks; ``b""`` when the input ends first."""
        if self.error is not None:
            return b""
        self._length = None
        chunks: list[bytes] = []
        left = size
        while left > 0:
            chunk = self._stream.read(min(left, READ_CHUNK_BYTES))
            if not chunk:
                self.lose(f"the input ended inside a message body ({size - left} of {size} bytes came)")
                return b""
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
