"""Pure converters from service results to LSP types: hover markdown, symbols (custom payloads: botbin.wire)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types

from botbin.lsp.positions import lines_range

if TYPE_CHECKING:
    from botbin.directives.partition import Directive
    from botbin.index.hits import Hit

_SNIPPET_CHARS = 220


_BLOCK_START = re.compile(r"^([-+=]|\d+[.)])")


def _escape(text: str) -> str:
    """Markdown-safe one-liner: no line breaks, no characters that open links, emphasis, strikethrough or HTML,
    and no leading list marker or setext underline (``- a``, ``1. a``, ``---``) that would make it a block."""
    flat = " ".join(text.split())
    for ch in "\\`*_[]<>|#~":
        flat = flat.replace(ch, "\\" + ch)
    return _BLOCK_START.sub(lambda m: m.group(1)[:-1] + "\\" + m.group(1)[-1], flat)


def _snippet(hit: Hit) -> str:
    text = hit.snippet or hit.text
    return text if len(text) <= _SNIPPET_CHARS else text[: _SNIPPET_CHARS - 1] + "\u2026"


def directive_line(directive: Directive) -> str:
    """``**Directive:** hard · prohibition (“Never”)`` for the hover of a rule."""
    cue = directive.cues[0] if directive.cues else None
    modality = f" · {cue.modality} (\u201c{_escape(cue.cue)}\u201d)" if cue else " · rule"
    return f"**Directive:** {directive.kind}{modality}"


def hover_markdown(
    hits: list[tuple[Hit, str]], directive: Directive | None, indexing: bool, degraded: bool
) -> str | None:
    """Markdown of the related-memories hover: each hit with its note, heading path, score, a snippet
    and a link to its first line; None when there is nothing to show."""
    parts: list[str] = []
    if directive is not None:
        parts.append(directive_line(directive))
    if hits:
        parts.append(
            "**Related memories**"
            + (" (indexing\u2026)" if indexing else "")
            + (" (keyword match only: the model is unavailable)" if degraded else "")
        )
        for rank, (hit, uri) in enumerate(hits, 1):
            where = " \u203a ".join(_escape(h) for h in hit.heading_path if h.strip()) or _escape(hit.title)
            link = f"{uri}#L{hit.start_line + 1}"
            parts.append(
                f"{rank}. [{_escape(hit.title)}]({link}) \u00b7 {where} \u00b7 {hit.score:.2f}  \n"
                f"   {_escape(_snippet(hit))}"
            )
    elif indexing:
        parts.append("_botbin is indexing; related memories appear when it is done._")
    return "\n\n".join(parts) if parts else None


def symbol(hit: Hit, uri: str) -> types.SymbolInformation:
    """A search hit as a ``workspace/symbol`` result: the heading path (or title) named, the snippet as detail."""
    name = " \u203a ".join(h for h in hit.heading_path if h.strip()) or hit.title
    return types.SymbolInformation(
        name=f"{name} \u2014 {' '.join(_snippet(hit).split())}",
        kind=types.SymbolKind.String,
        location=types.Location(uri=uri, range=lines_range(hit.start_line, hit.end_line)),
        container_name=hit.path,
    )
