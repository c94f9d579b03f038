"""Tests for botbin.parsing.text: decoding a note's bytes (BOM, newlines, invalid UTF-8, binary files)."""

from __future__ import annotations

import pytest

from botbin.errors import BotbinError, ParseError
from botbin.parsing.text import BINARY_SNIFF_BYTES, DecodedText, decode_note, normalize_newlines

BOM = b"\xef\xbb\xbf"


def test_plain_utf8_is_unchanged() -> None:
    decoded = decode_note("# Titel\n\nGrüße, 世界 😀\n".encode(), "memory/a.md")
    assert decoded == DecodedText("# Titel\n\nGrüße, 世界 😀\n", ())


def test_bom_is_removed() -> None:
    decoded = decode_note(BOM + b"---\ntitle: x\n---\nbody\n", "a.md")
    assert decoded.text == "---\ntitle: x\n---\nbody\n"
    assert decoded.warnings == ()


def test_only_one_leading_bom_is_removed() -> None:
    # A second BOM is content (U+FEFF), not an encoding mark.
    assert decode_note(BOM + BOM + b"x", "a.md").text == "\ufeffx"


def test_bom_in_the_middle_is_kept() -> None:
    assert decode_note(b"a" + BOM + b"b", "a.md").text == "a\ufeffb"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"a\r\nb\r\n", "a\nb\n"),
        (b"a\rb\r", "a\nb\n"),
        (b"a\r\n\r\nb", "a\n\nb"),
        (b"a\n\r\nb\r\rc", "a\n\nb\n\nc"),
        (b"a\r\r\nb", "a\n\nb"),
    ],
)
def test_crlf_and_lone_cr_become_lf(raw: bytes, expected: str) -> None:
    assert decode_note(raw, "a.md").text == expected


def test_bom_and_crlf_together() -> None:
    assert decode_note(BOM + b"---\r\ntitle: x\r\n---\r\nbody\r\n", "a.md").text == "---\ntitle: x\n---\nbody\n"


def test_normalize_newlines_keeps_line_count_of_each_style() -> None:
    text = "one\r\ntwo\rthree\nfour"
    assert normalize_newlines(text).split("\n") == ["one", "two", "three", "four"]


def test_invalid_utf8_becomes_replacement_char_with_warning() -> None:
    decoded = decode_note(b"ab\xffcd\n", "memory/bad.md")
    assert decoded.text == "ab\ufffdcd\n"
    assert len(decoded.warnings) == 1
    warning = decoded.warnings[0]
    assert warning.startswith("memory/bad.md:")
    assert "byte 2" in warning


def test_invalid_utf8_warning_names_first_bad_offset() -> None:
    decoded = decode_note(b"0123456789\xc3(x\xff", "n.md")
    assert decoded.text == "0123456789\ufffd(x\ufffd"
    assert len(decoded.warnings) == 1
    assert "byte 10" in decoded.warnings[0]


def test_truncated_multibyte_sequence_at_end() -> None:
    decoded = decode_note(b"ab\xe2\x82", "n.md")
    assert decoded.text.startswith("ab\ufffd")
    assert "byte 2" in decoded.warnings[0]


def test_invalid_utf8_offset_counts_the_bom() -> None:
    decoded = decode_note(BOM + b"ab\xffcd", "n.md")
    assert decoded.text == "ab\ufffdcd"
    assert "byte 5" in decoded.warnings[0]


def test_nul_byte_means_binary() -> None:
    with pytest.raises(ParseError) as info:
        decode_note(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "memory/picture.md")
    err = info.value
    assert isinstance(err, BotbinError)
    assert err.path == "memory/picture.md"
    assert str(err).startswith("memory/picture.md: ")
    assert "binary" in err.reason


def test_nul_at_the_end_of_the_sniff_window_is_binary() -> None:
    with pytest.raises(ParseError):
        decode_note(b"a" * (BINARY_SNIFF_BYTES - 1) + b"\x00", "a.md")


def test_nul_after_the_sniff_window_is_text() -> None:
    decoded = decode_note(b"a" * BINARY_SNIFF_BYTES + b"\x00", "a.md")
    assert decoded.text == "a" * BINARY_SNIFF_BYTES + "\x00"
    assert decoded.warnings == ()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_with_a_bom_are_text(encoding: str) -> None:
    # Issue 36: Windows editors save "Unicode" notes as UTF-16 with a byte order mark; they were skipped as binary.
    text = "# Grüße\r\n\nBananas 😀, 世界\r\n"
    bom = {"utf-16-le": "\ufeff", "utf-16-be": "\ufeff", "utf-32-le": "\ufeff", "utf-32-be": "\ufeff"}.get(encoding, "")
    assert decode_note((bom + text).encode(encoding), "a.md") == DecodedText("# Grüße\n\nBananas 😀, 世界\n", ())


def test_utf16_without_a_bom_is_still_binary() -> None:
    # Without a BOM, NUL bytes are all there is to go by: not silently indexed as garbage.
    with pytest.raises(ParseError, match="binary"):
        decode_note("hello".encode("utf-16-le"), "a.md")


def test_broken_utf16_is_repaired_and_named() -> None:
    data = "ab".encode("utf-16") + b"\x00\xd8" + "c".encode("utf-16-le") + b"x"  # a lone surrogate, an odd byte
    decoded = decode_note(data, "memory/a.md")
    assert decoded.text.startswith("ab\ufffd") and "c" in decoded.text
    assert decoded.warnings == (
        "memory/a.md: invalid UTF-16 at byte 6; undecodable bytes indexed as U+FFFD (the note itself is untouched)",
    )


def test_nul_characters_in_utf16_are_binary() -> None:
    with pytest.raises(ParseError, match="NUL characters in UTF-16"):
        decode_note("a\x00b".encode("utf-16"), "a.md")


def test_empty_file() -> None:
    assert decode_note(b"", "a.md") == DecodedText("", ())
    assert decode_note(BOM, "a.md") == DecodedText("", ())
