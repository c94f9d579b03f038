"""Content that is not prose, kept out of the embedded text: Excalidraw drawing data (``compressed-json``
fences, the ``json`` scene of a drawing note), data URIs and long base64 runs. Pure: blocks in, blocks out.

The note's bytes are untouched (they stay in the AIF-BIN file for ``extract``); only what is chunked and
embedded changes. A 200 KB drawing would otherwise become hundreds of chunks of noise.
"""

from __future__ import annotations

import dataclasses
import re

from botbin.parsing.blocks import Block, ParsedNote

#: A fence that opens an Excalidraw scene: ``compressed-json`` anywhere; ``json`` in a drawing note.
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})\s*([\w-]*)")
#: ``data:<mime>;base64,<payload>`` (images pasted into notes, drawings' embedded files).
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=\s]{16,}")
#: A run of base64 characters long enough that it cannot be words (a sentence has spaces).
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}={0,2}")
PLACEHOLDER = "[binary data]"
"""What a data URI or base64 run becomes in the embedded text."""


@dataclasses.dataclass(frozen=True)
class Stripped:
    """A note with its non-prose content left out, and what was left out."""

    note: ParsedNote
    """The note, with drawing blocks dropped and base64 runs replaced by PLACEHOLDER."""
    dropped_blocks: int = 0
    """Code blocks dropped whole (drawing scenes)."""
    dropped_lines: int = 0
    """Source lines of those blocks."""
    replaced_runs: int = 0
    """Data URIs and base64 runs replaced in the remaining blocks."""

    def warning(self) -> str | None:
        """One line naming the note and what was not embedded, or None when nothing was."""
        parts = []
        if self.dropped_blocks:
            parts.append(f"{self.dropped_blocks} drawing data block(s), {self.dropped_lines} lines")
        if self.replaced_runs:
            parts.append(f"{self.replaced_runs} data URI(s) or base64 run(s)")
        if not parts:
            return None
        return f"{self.note.path}: not embedded (not prose): {' and '.join(parts)}; the note itself is kept whole"


def _is_base64(run: str) -> bool:
    """True for a run that looks like encoded bytes, not a long identifier: digits and both letter cases."""
    return any(c.isdigit() for c in run) and any(c.islower() for c in run) and any(c.isupper() for c in run)


def _drawing_block(block: Block, drawing_note: bool) -> bool:
    if block.kind != "code":
        return False
    match = _FENCE.match(block.text)
    info = match.group(1).lower() if match else ""
    return info == "compressed-json" or (drawing_note and info == "json")


def strip_binary(note: ParsedNote) -> Stripped:
    """``note`` without its drawing scenes, data URIs and base64 runs (see the module docstring)."""
    drawing_note = any(k.startswith("excalidraw") for k in note.frontmatter.data)
    blocks: list[Block] = []
    dropped = lines = replaced = 0
    for block in note.blocks:
        if _drawing_block(block, drawing_note):
            dropped, lines = dropped + 1, lines + block.end_line - block.start_line
            continue
        count = 0

        def swap(match: re.Match[str]) -> str:
            nonlocal count
            if match.re is _BASE64_RUN and not _is_base64(match.group(0)):
                return match.group(0)
            count += 1
            return PLACEHOLDER

        text = _BASE64_RUN.sub(swap, _DATA_URI.sub(swap, block.text))
        replaced += count
        blocks.append(dataclasses.replace(block, text=text) if count else block)
    if not (dropped or replaced):
        return Stripped(note)
    return Stripped(dataclasses.replace(note, blocks=tuple(blocks)), dropped, lines, replaced)
