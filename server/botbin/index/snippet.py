"""Snippets that show the answer: the sentence of a chunk that best matches the query, as plain text.

Pure and cheap (no model): a chunk is cut into sentences (a soft-wrapped line continues its sentence; a list
item, table row, heading or quote line starts a new one), each sentence is scored by the IDF weights of the
query's BM25 terms it holds, and the best one is shown with markdown syntax removed, grown with its neighbours
while it stays under the width, and cut at word boundaries with an ellipsis when it is longer. Embedding the
sentences (cosine instead of words) was measured and not kept: see bench/README.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from botbin.directives.lexer import sentence_spans
from botbin.index.tokenize import bm25_terms

ELLIPSIS = "\u2026"
_WIDTH = 240
_INLINE = [
    (re.compile(r"!?\[\[([^\]|]*?)(?:\|([^\]]*))?\]\]"), lambda m: (m.group(2) or m.group(1)).replace("#", " > ")),
    (re.compile(r"!?\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)"), lambda m: m.group(1)),
    (re.compile(r"\[\^[^\]]+\]"), lambda m: ""),
    (re.compile(r"<[A-Za-z/!][^>]*>"), lambda m: ""),
    (re.compile(r"(`+)(.+?)\1"), lambda m: m.group(2).strip()),
    (re.compile(r"(\*\*|__|~~|==)(?=\S)(.+?)(?<=\S)\1"), lambda m: m.group(2)),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\w*])"), lambda m: m.group(1)),
    (re.compile(r"(?<![\w_])_(?=[^\s_])([^_]*?[^\s_])_(?![\w_])"), lambda m: m.group(1)),
]
#: A backslash escape; the escaped character is hidden from the patterns above (moved to a private-use plane).
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~=])")
_HIDDEN = 0xF0000
_UNHIDE = re.compile("[\U000f0000-\U000f007f]")
_LINE_MARKERS = re.compile(
    r"^\s*(?:(?:>\s?)+(?:\[![\w-]+\][+-]?\s*)?)?(?:#{1,6}\s+)?(?:(?:[-*+]|\d{1,9}[.)])\s+(?:\[.\]\s+)?)?"
)
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")


@dataclass(frozen=True)
class Snippet:
    """What a hit shows of its chunk."""

    text: str
    """One line of plain text: markdown syntax removed, whitespace collapsed, cut ends marked with '…'."""
    start_line: int
    """0-based line, within the chunk's text, where the best-matching sentence starts."""
    end_line: int
    """0-based line after it, within the chunk's text (exclusive)."""


def strip_markdown(text: str) -> str:
    """``text`` as a reader sees it: links show their text (``[[note|alias]]`` -> alias, ``[text](url)`` ->
    text), emphasis, code and HTML marks dropped, callout, quote, heading and list markers dropped, table
    pipes turned into ' | ', fences and table delimiter rows removed; whitespace collapsed to one line."""
    lines: list[str] = []
    for line in text.split("\n"):
        if _FENCE.match(line) or _TABLE_DELIMITER.match(line):
            continue
        line = _LINE_MARKERS.sub("", line, count=1)
        if "|" in line:
            line = " | ".join(cell.strip() for cell in line.strip().strip("|").split("|"))
        lines.append(line)
    flat = _ESCAPE.sub(lambda m: chr(_HIDDEN + ord(m.group(1))), " ".join(lines))
    for pattern, repl in _INLINE:
        flat = pattern.sub(repl, flat)
    return " ".join(_UNHIDE.sub(lambda m: chr(ord(m.group()) - _HIDDEN), flat).split())


def sentences(text: str) -> list[tuple[int, int]]:
    """Character spans [start, end) of the sentences of ``text``, in order (the lexer's splitter: a soft-wrapped
    line continues its sentence; a list item, table row, heading or quote line starts a new one)."""
    return [(s, e) for s, e in sentence_spans(text) if text[s:e].strip()]


def best_snippet(text: str, weights: Mapping[str, float], width: int = _WIDTH) -> Snippet:
    """The snippet of chunk ``text`` for a query whose BM25 terms weigh ``weights`` (term -> IDF).

    The sentence holding the most query weight wins (the first on a tie; the first sentence when none holds
    a query term); neighbours are added, the next one first, while the text fits ``width`` characters.
    """
    spans = sentences(text)
    if not spans:
        return Snippet("", 0, 0)
    clean = [strip_markdown(text[s:e]) for s, e in spans]
    scores = [sum(weights.get(t, 0.0) for t in set(bm25_terms(c))) if c else -1.0 for c in clean]
    best = max(range(len(spans)), key=lambda i: (scores[i], -i))
    start_line = text.count("\n", 0, spans[best][0])
    end_line = text.count("\n", 0, spans[best][1]) + 1
    if len(clean[best]) > width:
        return Snippet(_cut(clean[best], weights, width), start_line, end_line)
    lo = hi = best
    shown = clean[best]
    grow = [True, True]  # after, before: a neighbour that does not fit stops its side
    while any(grow):
        for side, j in ((0, hi + 1), (1, lo - 1)):
            if not grow[side] or not 0 <= j < len(spans) or len(shown) + 1 + len(clean[j]) > width:
                grow[side] = False
            elif side == 0:
                shown, hi = f"{shown} {clean[j]}".strip(), j
            else:
                shown, lo = f"{clean[j]} {shown}".strip(), j
    marks = (ELLIPSIS if any(clean[:lo]) else "", ELLIPSIS if any(clean[hi + 1:]) else "")
    if len(shown) + len(marks[0]) + len(marks[1]) > width:
        marks = ("", "")
    return Snippet(marks[0] + shown + marks[1], start_line, end_line)


def _cut(sentence: str, weights: Mapping[str, float], width: int) -> str:
    """``sentence`` cut to ``width`` characters at word boundaries, around its first weighted query word."""
    room = width - 2
    first = None
    for word in re.finditer(r"\S+", sentence):
        terms = bm25_terms(word.group())
        if any(weights.get(t, 0.0) > 0 for t in terms):
            first = word.start()
            break
    start = max(0, (first or 0) - room // 3)
    end = min(len(sentence), start + room)
    start = max(0, end - room)
    if start > 0:
        space = sentence.find(" ", start)
        start = space + 1 if 0 <= space < end else start
    if end < len(sentence):
        space = sentence.rfind(" ", start, end + 1)
        end = space if space > start else end
    return (ELLIPSIS if start else "") + sentence[start:end].strip() + (ELLIPSIS if end < len(sentence) else "")
