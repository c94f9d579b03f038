"""The block of a note under a line, and the directive it is (for hovers on unsaved buffers). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from botbin.directives.partition import DEFAULT_INSTRUCTION_NOTES, Directive, block_directive, parse_source
from botbin.parsing import Block


@dataclass(frozen=True)
class Paragraph:
    """The block under a position, and the directive it is (if any)."""

    block: Block
    directive: Directive | None


def paragraph_at(
    text: str, path: str, line: int, instruction_globs: Sequence[str] = DEFAULT_INSTRUCTION_NOTES
) -> Paragraph | None:
    """The block of note text holding 0-based ``line`` (headings and code count), or None on a blank line.
    Line numbers are LSP's: CRLF and CR end lines as LF does. ``instruction_globs``: the folder's
    ``Settings.instruction_globs``."""
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    note = parse_source(normalized, path)
    for index, block in enumerate(note.blocks):
        if block.start_line <= line < block.end_line:
            return Paragraph(block, block_directive(note, index, instruction_globs))
    return None
