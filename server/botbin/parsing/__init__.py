"""Pure parsing: bytes -> text -> frontmatter metadata + markdown blocks with 0-based line ranges."""

from __future__ import annotations

from botbin.parsing.blocks import Block, ParsedNote, parse_note
from botbin.parsing.frontmatter import FrontMatter
from botbin.parsing.text import DecodedText, decode_note

__all__ = ["Block", "DecodedText", "FrontMatter", "ParsedNote", "decode_note", "parse_note"]
