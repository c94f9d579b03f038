"""The one place that converts between LSP positions and Python string indices.

LSP counts characters in the negotiated position encoding: UTF-16 code units unless client and server
agreed on UTF-8 or UTF-32 (LSP 3.17 ``general.positionEncodings``). Lines end at CRLF, CR or LF only
(LSP 3.17, "Text Documents"); a form feed, U+2028 or U+0085 is an ordinary character, unlike Python's
``str.splitlines``. Positions past the end of a line clamp to its end; a position inside a surrogate pair
moves to the end of that character.
"""

from __future__ import annotations

import re

from lsprotocol import types

_EOL = re.compile(r"\r\n|\r|\n")
UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` as LSP counts them, without their line endings (always at least one line)."""
    return _EOL.split(text)


def line_starts(text: str) -> list[int]:
    """String index where each LSP line of ``text`` starts."""
    return [0, *(m.end() for m in _EOL.finditer(text))]


def _units(ch: str, encoding: str) -> int:
    if encoding == UTF8:
        return len(ch.encode("utf-8", "surrogatepass"))
    if encoding == UTF32:
        return 1
    return 2 if ord(ch) > 0xFFFF else 1


def to_index(line: str, character: int, encoding: str = UTF16) -> int:
    """Python index into ``line`` of LSP column ``character`` (clamped to the line)."""
    if encoding == UTF32:
        return max(0, min(character, len(line)))
    units = 0
    for index, ch in enumerate(line):
        if units >= character:
            return index
        units += _units(ch, encoding)
    return len(line)


def to_character(line: str, index: int, encoding: str = UTF16) -> int:
    """LSP column of Python index ``index`` into ``line``."""
    prefix = line[: max(0, index)]
    if encoding == UTF32:
        return len(prefix)
    if encoding == UTF8:
        return len(prefix.encode("utf-8", "surrogatepass"))
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


def offset_at(text: str, position: types.Position, encoding: str = UTF16) -> int:
    """Python index into ``text`` of an LSP position (a line past the end clamps to the end of text)."""
    starts = line_starts(text)
    if position.line >= len(starts):
        return len(text)
    lines = split_lines(text)
    return starts[position.line] + to_index(lines[position.line], position.character, encoding)


def position_at(text: str, offset: int, encoding: str = UTF16) -> types.Position:
    """LSP position of Python index ``offset`` into ``text``."""
    starts = line_starts(text)
    line = max(0, next((i for i in range(len(starts) - 1, -1, -1) if starts[i] <= offset), 0))
    line_text = split_lines(text)[line]
    return types.Position(line, to_character(line_text, offset - starts[line], encoding))


def apply_change(text: str, change: types.TextDocumentContentChangeEvent, encoding: str = UTF16) -> str:
    """``text`` after one ``textDocument/didChange`` content change (a ranged edit or the whole text)."""
    if isinstance(change, types.TextDocumentContentChangePartial):
        start = offset_at(text, change.range.start, encoding)
        end = offset_at(text, change.range.end, encoding)
        return text[:start] + change.text + text[max(start, end) :]
    return change.text


def lines_range(start_line: int, end_line: int) -> types.Range:
    """Range covering whole lines ``[start_line, end_line)`` (0-based): column 0 is the same in every encoding."""
    return types.Range(types.Position(start_line, 0), types.Position(max(start_line, end_line), 0))


def encoding_name(value: object) -> str:
    """The position encoding pygls negotiated, as a plain string ('utf-16' when unset)."""
    raw = getattr(value, "value", value)
    return raw if isinstance(raw, str) and raw in (UTF8, UTF16, UTF32) else UTF16
