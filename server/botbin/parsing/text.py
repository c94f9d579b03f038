"""Decode a note's bytes to text: BOM, invalid UTF-8 and binary files, without touching the file."""

from __future__ import annotations

from dataclasses import dataclass

from botbin.errors import ParseError

#: How many leading bytes are inspected for NUL bytes to tell a binary file from text.
BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class DecodedText:
    """A note's text, decoded for parsing."""

    text: str
    """The text with any UTF-8 BOM removed and line endings normalized to LF."""
    warnings: tuple[str, ...] = ()
    """What was repaired while decoding (e.g. invalid UTF-8 replaced by U+FFFD)."""


def normalize_newlines(text: str) -> str:
    """Turn CRLF and lone CR into LF, as markdown-it does, so line numbers agree with the parser."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_note(data: bytes, path: str) -> DecodedText:
    """Decode ``data`` (the bytes of ``path``) as UTF-8.

    Invalid byte sequences become U+FFFD and a warning names the first bad byte offset; the file on
    disk is never changed. Raises ParseError if the bytes look binary (a NUL byte in the first 8 KiB).
    """
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise ParseError("looks like a binary file (NUL bytes), not markdown; skipped", path)
    warnings: list[str] = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8-sig", errors="replace")
        offset = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)  # utf-8-sig counts after the BOM
        warnings.append(
            f"{path}: invalid UTF-8 at byte {offset}; undecodable bytes indexed as U+FFFD "
            "(the note itself is untouched)"
        )
    return DecodedText(normalize_newlines(text), tuple(warnings))
