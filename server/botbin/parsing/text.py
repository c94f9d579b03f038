"""Decode a note's bytes to text: BOM (UTF-8, UTF-16, UTF-32), invalid bytes and binary files, without touching
the file."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from botbin.errors import ParseError

#: How many leading bytes are inspected for NUL bytes to tell a binary file from text.
BINARY_SNIFF_BYTES = 8192

#: Byte order marks and the encoding each announces (Windows editors save "Unicode" as UTF-16 with a BOM). UTF-32
#: first: its little-endian BOM begins with UTF-16's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF8, "utf-8"),
)


@dataclass(frozen=True)
class DecodedText:
    """A note's text, decoded for parsing."""

    text: str
    """The text, its byte order mark removed and line endings normalized to LF."""
    warnings: tuple[str, ...] = ()
    """What was repaired while decoding (e.g. invalid UTF-8 replaced by U+FFFD)."""


def normalize_newlines(text: str) -> str:
    """Turn CRLF and lone CR into LF, as markdown-it does, so line numbers agree with the parser."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_note(data: bytes, path: str) -> DecodedText:
    """Decode ``data`` (the bytes of ``path``): UTF-16 or UTF-32 when a byte order mark says so, else UTF-8
    (a UTF-8 BOM removed).

    Undecodable bytes become U+FFFD and a warning names the first bad byte offset; the file on disk is
    never changed (its exact bytes are what an AIF-BIN file keeps). Raises ParseError if it looks binary: a
    NUL byte in the first 8 KiB (a NUL character, for UTF-16 and UTF-32).
    """
    bom, encoding = next(((b, e) for b, e in _BOMS if data.startswith(b)), (b"", "utf-8"))
    if encoding == "utf-8" and b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise ParseError("looks like a binary file (NUL bytes), not markdown; skipped", path)
    warnings: list[str] = []
    try:
        text = data[len(bom) :].decode(encoding)
    except UnicodeDecodeError as exc:
        text = data[len(bom) :].decode(encoding, errors="replace")
        name = encoding.upper().removesuffix("-LE").removesuffix("-BE")
        warnings.append(
            f"{path}: invalid {name} at byte {exc.start + len(bom)}; undecodable bytes indexed as U+FFFD "
            "(the note itself is untouched)"
        )
    if encoding != "utf-8" and "\x00" in text[:BINARY_SNIFF_BYTES]:
        raise ParseError(
            f"looks like a binary file (NUL characters in {encoding.upper()}), not markdown; skipped", path
        )
    return DecodedText(normalize_newlines(text), tuple(warnings))
