"""Text for a terminal: the control characters of notes and file names shown, never obeyed.

A note (or a file name) may hold ANSI and OSC escape sequences that clear the screen, set the window title,
hide text or rewrite a link; bidirectional-text controls that make a path read as another. Every human line the
CLI prints goes through ``shown`` (``terminal_streams`` puts it between the CLI and its stdout and stderr), so they
appear as ``\\x1b`` or ``\\u202e``. JSON output is left exact (json.dumps escapes C0 controls itself), and so
are the LSP and MCP transports. Standard library only: the warm client (cli/warm.py) imports this too.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO, cast

#: C0 controls but tab and newline, DEL, C1 controls; Unicode's bidirectional controls and line separators; lone
#: surrogates (a file name's bytes that are not UTF-8, as os.fsdecode gives them, or a broken escape).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # one undecodable byte of a file name
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` with every character a terminal would obey rather than print (see ``_UNSAFE``) written as an
    escape (``\\x1b``, ``\\u202e``; a file name's undecodable byte as ``\\xff``); tabs and newlines are kept."""
    return _UNSAFE.sub(_escape, text)


class EscapingStream(io.TextIOBase):
    """A text stream that writes ``shown(text)`` to ``stream``; the rest (fileno, isatty, buffer for bytes that
    must pass exactly, such as ``botbin extract``) is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream
        """The stream written to."""

    def write(self, text: str) -> int:
        self.stream.write(shown(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def raw(stream: TextIO) -> TextIO:
    """The stream under an EscapingStream (for a progress bar, which draws with carriage returns), else ``stream``."""
    return stream.stream if isinstance(stream, EscapingStream) else stream


@contextmanager
def terminal_streams(raw_stdout: bool) -> Iterator[None]:
    """Escape what is printed on stderr, and on stdout unless ``raw_stdout`` (JSON, or an LSP or MCP transport),
    until the block ends."""
    saved = sys.stdout, sys.stderr
    sys.stderr = cast(TextIO, EscapingStream(sys.stderr))
    if not raw_stdout:
        sys.stdout = cast(TextIO, EscapingStream(sys.stdout))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
