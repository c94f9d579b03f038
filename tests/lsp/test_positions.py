"""LSP positions <-> Python string indices (botbin.lsp.positions): line splitting, the three position
encodings, clamping, surrogate pairs, ranged edits. Pure functions, no server."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from botbin.lsp.positions import (
    UTF8,
    UTF16,
    UTF32,
    apply_change,
    encoding_name,
    line_starts,
    lines_range,
    offset_at,
    position_at,
    split_lines,
    to_character,
    to_index,
)

ENCODINGS = [UTF8, UTF16, UTF32]
EMOJI = "\U0001f600"  # 😀: 2 UTF-16 units, 4 UTF-8 bytes, 1 code point
CJK = "\u6f22"  # 漢: 1 UTF-16 unit, 3 UTF-8 bytes
E_ACUTE = "\u00e9"  # é precomposed: 1 UTF-16 unit, 2 UTF-8 bytes
COMBINING = "e\u0301"  # e + COMBINING ACUTE ACCENT: two code points, 1 + 2 UTF-8 bytes


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def partial(start: types.Position, end: types.Position, text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end), text=text)


# -- lines ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", [""]),
        ("a", ["a"]),
        ("a\n", ["a", ""]),
        ("a\nb", ["a", "b"]),
        ("a\r\nb", ["a", "b"]),
        ("a\rb", ["a", "b"]),
        ("a\r\rb", ["a", "", "b"]),
        ("a\n\rb", ["a", "", "b"]),  # LF then CR is two line ends, not one
        ("a\r\n\r\nb", ["a", "", "b"]),
        ("\r\n", ["", ""]),
    ],
)
def test_split_lines_on_crlf_cr_lf(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines


@pytest.mark.parametrize("sep", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_split_lines_keeps_characters_python_splitlines_splits_on(sep: str) -> None:
    text = f"one{sep}two\nthree"
    assert len(text.splitlines()) == 3  # what LSP must not do
    assert split_lines(text) == [f"one{sep}two", "three"]
    assert line_starts(text) == [0, 8]


def test_line_starts() -> None:
    text = "ab\r\ncd\ref\ngh"
    assert line_starts(text) == [0, 4, 7, 10]
    assert [text[s : s + 2] for s in line_starts(text)] == ["ab", "cd", "ef", "gh"]
    assert line_starts("") == [0]
    assert line_starts("x\n") == [0, 2]
    assert len(line_starts(text)) == len(split_lines(text))


# -- columns ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "units"),
    [
        # (line, LSP column after each code point in utf-8, utf-16, utf-32)
        (f"a{EMOJI}b", {UTF8: [0, 1, 5, 6], UTF16: [0, 1, 3, 4], UTF32: [0, 1, 2, 3]}),
        (f"{CJK}{CJK}x", {UTF8: [0, 3, 6, 7], UTF16: [0, 1, 2, 3], UTF32: [0, 1, 2, 3]}),
        (f"{E_ACUTE}t{E_ACUTE}", {UTF8: [0, 2, 3, 5], UTF16: [0, 1, 2, 3], UTF32: [0, 1, 2, 3]}),
        (f"{COMBINING}x", {UTF8: [0, 1, 3, 4], UTF16: [0, 1, 2, 3], UTF32: [0, 1, 2, 3]}),
        (f"{EMOJI}{EMOJI}", {UTF8: [0, 4, 8], UTF16: [0, 2, 4], UTF32: [0, 1, 2]}),
        ("", {UTF8: [0], UTF16: [0], UTF32: [0]}),
    ],
)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_to_character_and_to_index_round_trip(line: str, units: dict[str, list[int]], encoding: str) -> None:
    columns = units[encoding]
    assert len(columns) == len(line) + 1
    for index, column in enumerate(columns):
        assert to_character(line, index, encoding) == column
        assert to_index(line, column, encoding) == index


def test_default_encoding_is_utf16() -> None:
    line = f"{EMOJI}x"
    assert to_character(line, 1) == 2
    assert to_index(line, 2) == 1


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_column_past_end_of_line_clamps(encoding: str) -> None:
    line = f"a{EMOJI}{CJK}"
    assert to_index(line, 1000, encoding) == len(line)
    assert to_character(line, 1000, encoding) == to_character(line, len(line), encoding)
    assert to_index(line, 0, encoding) == 0
    assert to_character(line, -3, encoding) == 0


def test_utf16_position_inside_a_surrogate_pair_moves_to_the_end_of_the_character() -> None:
    line = f"a{EMOJI}b"
    assert to_index(line, 2, UTF16) == 2  # between the high and low surrogate of the emoji
    text = f"x\n{line}"
    assert offset_at(text, pos(1, 2), UTF16) == text.index("b")


def test_utf8_position_inside_a_multibyte_character_moves_to_its_end() -> None:
    line = f"{EMOJI}{E_ACUTE}{CJK}."
    assert to_index(line, 1, UTF8) == 1
    assert to_index(line, 3, UTF8) == 1
    assert to_index(line, 5, UTF8) == 2  # inside é
    assert to_index(line, 7, UTF8) == 3  # inside 漢
    assert to_index(line, 9, UTF8) == 3


# -- whole text ----------------------------------------------------------------------------------

TEXT = f"first {EMOJI}\r\nsecond {CJK}\rthird {E_ACUTE}\nfourth"


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_offset_at_and_position_at_round_trip_with_crlf_and_lone_cr(encoding: str) -> None:
    eols = {i for i, ch in enumerate(TEXT) if ch == "\n" and i > 0 and TEXT[i - 1] == "\r"}
    for offset in range(len(TEXT) + 1):
        if offset in eols:
            continue  # between the CR and LF of a CRLF: not a position in LSP terms
        position = position_at(TEXT, offset, encoding)
        assert offset_at(TEXT, position, encoding) == offset, (offset, position)


def test_position_at_lines_and_columns() -> None:
    text = TEXT
    assert position_at(text, 0) == pos(0, 0)
    assert position_at(text, text.index("\r")) == pos(0, 8)  # after the emoji: 6 + 2 units
    assert position_at(text, text.index("second")) == pos(1, 0)
    assert position_at(text, text.index("third")) == pos(2, 0)
    assert position_at(text, text.index("fourth")) == pos(3, 0)
    assert position_at(text, len(text)) == pos(3, 6)
    assert position_at(text, text.index("\r"), UTF8) == pos(0, 10)
    assert position_at(text, text.index("\r"), UTF32) == pos(0, 7)


def test_offset_at_clamps() -> None:
    text = "ab\r\ncd"
    assert offset_at(text, pos(0, 99)) == 2  # end of line 0, before the CRLF
    assert offset_at(text, pos(1, 99)) == len(text)
    assert offset_at(text, pos(2, 0)) == len(text)  # a line past the end
    assert offset_at(text, pos(99, 5)) == len(text)
    assert offset_at("", pos(0, 0)) == 0


def test_position_at_inside_crlf_clamps_to_end_of_line() -> None:
    text = "ab\r\ncd"
    assert position_at(text, 3) == pos(0, 2)


def test_position_at_past_the_end_clamps() -> None:
    assert position_at("ab\ncd", 99) == pos(1, 2)


# -- edits -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "after_emoji"), [(UTF8, 5), (UTF16, 3), (UTF32, 2)])
def test_apply_change_inserts_after_an_emoji(encoding: str, after_emoji: int) -> None:
    text = f"x\na{EMOJI}b\r\nz"
    at = pos(1, after_emoji)
    changed = apply_change(text, partial(at, at, "!"), encoding)
    assert changed == f"x\na{EMOJI}!b\r\nz"


@pytest.mark.parametrize(("encoding", "end"), [(UTF8, 4), (UTF16, 2), (UTF32, 1)])
def test_apply_change_replaces_an_emoji(encoding: str, end: int) -> None:
    text = f"{EMOJI}{CJK}"
    assert apply_change(text, partial(pos(0, 0), pos(0, end), "E"), encoding) == f"E{CJK}"


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_apply_change_deletes_across_lines(encoding: str) -> None:
    text = "one\r\ntwo\rthree\nfour"
    assert apply_change(text, partial(pos(0, 2), pos(2, 3), ""), encoding) == "onee\nfour"
    assert apply_change(text, partial(pos(0, 3), pos(1, 0), ""), encoding) == "onetwo\rthree\nfour"
    assert apply_change(text, partial(pos(1, 0), pos(4, 0), "X"), encoding) == "one\r\nX"


def test_apply_change_appends_at_a_line_past_the_end() -> None:
    assert apply_change("ab", partial(pos(5, 0), pos(5, 0), "!")) == "ab!"


def test_apply_change_whole_document() -> None:
    change = types.TextDocumentContentChangeWholeDocument(text=f"new {EMOJI}\r\ntext")
    assert apply_change("old\ntext", change) == f"new {EMOJI}\r\ntext"
    assert apply_change("old", types.TextDocumentContentChangeWholeDocument(text="")) == ""


def test_apply_change_sequence_like_an_editor() -> None:
    text = "# Title\n"
    for change in [
        partial(pos(1, 0), pos(1, 0), f"{EMOJI} note"),
        partial(pos(1, 2), pos(1, 2), "!"),  # after the emoji (UTF-16)
        partial(pos(0, 2), pos(0, 7), "Heading"),
    ]:
        text = apply_change(text, change)
    assert text == f"# Heading\n{EMOJI}! note"


def test_lines_range() -> None:
    assert lines_range(2, 5) == types.Range(start=pos(2, 0), end=pos(5, 0))
    assert lines_range(3, 3) == types.Range(start=pos(3, 0), end=pos(3, 0))
    assert lines_range(4, 1) == types.Range(start=pos(4, 0), end=pos(4, 0))  # never ends before it starts


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (types.PositionEncodingKind.Utf16, UTF16),
        (types.PositionEncodingKind.Utf8, UTF8),
        (types.PositionEncodingKind.Utf32, UTF32),
        ("utf-8", UTF8),
        ("utf-32", UTF32),
        ("utf-16", UTF16),
        ("UTF-8", UTF16),
        ("latin-1", UTF16),
        (None, UTF16),
        (8, UTF16),
        (object(), UTF16),
    ],
)
def test_encoding_name(value: object, name: str) -> None:
    assert encoding_name(value) == name


# -- property --------------------------------------------------------------------------------------

_CHARS = st.one_of(
    st.characters(codec="utf-8"),  # any code point that encodes, astral ones included
    st.sampled_from(["\r", "\n", "\r\n", "\u2028", "\x0c", "\x85", EMOJI, CJK, COMBINING, "\U00010348"]),
)


@given(text=st.lists(_CHARS, max_size=40).map("".join), data=st.data())
def test_position_at_then_offset_at_returns_the_offset(text: str, data: st.DataObject) -> None:
    offset = data.draw(st.integers(0, len(text)), label="offset")
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        return  # inside a CRLF: no LSP position names it
    for encoding in ENCODINGS:
        position = position_at(text, offset, encoding)
        assert offset_at(text, position, encoding) == offset, (encoding, position)
        assert position.line == text[:offset].count("\n") + text[:offset].count("\r") - text[:offset].count("\r\n")
