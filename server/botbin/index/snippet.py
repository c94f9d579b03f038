"""Snippets that show the answer: the sentence of a chunk that best matches the query, as plain text.

Pure and cheap (no model): a chunk is cut into sentences (a soft-wrapped line continues its sentence; a list
item, table row, heading or quote line starts a new one), each sentence is scored by the IDF weights of the
query's BM25 terms it holds, and the best one is shown with markdown syntax removed, grown with its neighbours
while it stays under the width, and cut at word boundaries with an ellipsis when it is longer. Embedding the
sentences (cosine instead of words) was measured and not kept: see bench/README.md.
"""

from __future__ import annotations

import html
import re
import string
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from botbin.directives.lexer import sentence_spans
from botbin.index.tokenize import bm25_terms

ELLIPSIS = "\u2026"
_WIDTH = 240
_INLINE = [
    (re.compile(r"!?\[\[([^\]|]*?)(?:\|([^\]]*))?\]\]"), lambda m: _wikilink(m)),
    (re.compile(r"!?\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)"), lambda m: _mdlink(m)),
    (re.compile(r"\[\^[^\]]+\]"), lambda m: ""),
    (re.compile(r"<[A-Za-z/!][^>]*>"), lambda m: ""),
    (re.compile(r"(\*\*|__|~~|==)(?=\S)(.+?)(?<=\S)\1"), lambda m: m.group(2)),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\w*])"), lambda m: m.group(1)),
    (re.compile(r"(?<![\w_])_(?=[^\s_])([^_]*?[^\s_])_(?![\w_])"), lambda m: m.group(1)),
    # emphasis whose other half lies in another sentence ("... (iCloud). **How do I ...")
    (re.compile(r"\*{2,}|~~|(?<!\w)__+|__+(?!\w)"), lambda m: ""),
]
#: Code spans: their text is shown as written (the syntax a help page teaches), so it is hidden from the patterns.
_CODE = re.compile(r"(`+)(.+?)\1")
_IMAGE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "avif", "tif", "tiff"})
#: An embed's "alias" that is only a display size (![[photo.jpg|100]], ![250](url), |100x200).
_SIZE = re.compile(r"\s*\d+(?:x\d+)?\s*")
_WIKILINK = re.compile(r"\[\[[^\]]*\]\]")
#: A wikilink or a code span: a '|' inside one is not a table cell's edge.
_PIPE_KEEPERS = re.compile(f"{_WIKILINK.pattern}|{_CODE.pattern}")
#: A backslash escape; the escaped character is hidden from the patterns above (moved to a private-use plane).
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~=])")
_HIDDEN = 0xF0000
_HIDDEN_PIPE = chr(_HIDDEN + ord("|"))
_UNHIDE = re.compile("[\U000f0000-\U000f007f]")
#: Quote marks, then a callout marker (also alone: a sentence of a callout starts after its '>'), a heading's
#: hashes, a list or task marker.
_LINE_MARKERS = re.compile(
    r"^\s*(?:>\s?)*(?:\[![\w-]+\][+-]?\s*)?(?:#{1,6}\s+)?(?:(?:[-*+]|\d{1,9}[.)])\s+(?:\[.\]\s+)?)?"
)
_TABLE_DELIMITER = re.compile(
    r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$"  # |---|:--:| (or a --- rule)
    r"|^(?=[^|]*\|)\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$"  # - | - | -: one dash is a GFM delimiter too
)
#: A character that can start markdown syntax or an HTML entity; a text without any is only whitespace-collapsed.
_MARKUP = re.compile(r"[*_\[\]<>`|#=~\\!&-]|^\s*(?:\d{1,9}[.)]|[+>])", re.MULTILINE)
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
    text; a block id is dropped; an embedded image shows its alt text, or nothing), emphasis and HTML marks
    dropped, HTML entities decoded (``&nbsp;``), code (spans and fenced lines) shown as written without its
    backticks, callout, quote, heading and list markers dropped, table pipes turned into ' | ', fences and table
    delimiter rows removed; whitespace collapsed to one line."""
    if not _MARKUP.search(text):
        return " ".join(text.split())
    lines: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:  # code: shown as written
            lines.append(_literal(line))
            continue
        if _TABLE_DELIMITER.match(line):
            continue
        line = _LINE_MARKERS.sub("", line, count=1)
        if "|" in line:
            line = _PIPE_KEEPERS.sub(lambda m: m.group(0).replace("|", _HIDDEN_PIPE), line)
            if "|" in line:
                line = " | ".join(cell.strip() for cell in line.strip().strip("|").split("|"))
        lines.append(line)
    flat = _CODE.sub(lambda m: _literal(m.group(2).strip()), " ".join(lines))
    flat = _WIKILINK.sub(lambda m: m.group(0).replace(_HIDDEN_PIPE, "|"), flat)  # its alias's '|' again
    flat = _ESCAPE.sub(lambda m: chr(_HIDDEN + ord(m.group(1))), flat)
    for pattern, repl in _INLINE:
        flat = pattern.sub(repl, flat)
    return " ".join(_UNHIDE.sub(lambda m: chr(ord(m.group()) - _HIDDEN), html.unescape(flat)).split())


def _literal(text: str) -> str:
    """``text`` with its ASCII punctuation hidden from the markdown patterns (strip_markdown shows it back)."""
    return "".join(chr(_HIDDEN + ord(c)) if c in string.punctuation else c for c in text)


def _wikilink(m: re.Match[str]) -> str:
    """``[[target|alias]]`` as a reader sees it: the alias, else the target; an embedded image shows no words."""
    target, alias = m.group(1), m.group(2)
    if m.group(0).startswith("!") and target.split("#")[0].rsplit(".", 1)[-1].lower() in _IMAGE_EXTENSIONS:
        return ""
    return alias if alias and not _SIZE.fullmatch(alias) else _link_text(target)


def _mdlink(m: re.Match[str]) -> str:
    """``[text](url)`` shows its text; an image shows its alt text unless that is only a size (``![250](url)``)."""
    text = m.group(1)
    return "" if m.group(0).startswith("!") and (not text.strip() or _SIZE.fullmatch(text)) else text


def _link_text(target: str) -> str:
    """A wikilink's target as a reader sees it: ``Note#Heading`` -> ``Note > Heading``; a block id (``#^b15695``)
    names no words and is dropped."""
    return " > ".join(part for part in target.split("#") if part and not part.startswith("^"))


def sentences(text: str) -> list[tuple[int, int]]:
    """Character spans [start, end) of the sentences of ``text``, in order (the lexer's splitter: a soft-wrapped
    line continues its sentence; a list item, table row, heading or quote line starts a new one)."""
    return [(s, e) for s, e in sentence_spans(text) if text[s:e].strip()]


@lru_cache(maxsize=64)
def _terms_pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """Words that start with one of ``terms`` (BM25 stems: "studi" finds "studies" and "studied"); a CJK
    bigram matches anywhere."""
    words = sorted(terms, key=len, reverse=True)
    return re.compile(
        "|".join(re.escape(t) if not t.isascii() else rf"(?<!\w){re.escape(t)}[^\W\d_]*(?!\w)" for t in words),
        re.IGNORECASE,
    )


def _sentence_scores(text: str, spans: list[tuple[int, int]], weights: Mapping[str, float]) -> list[float]:
    """The query weight each sentence holds (each term counted once), from one regex pass over ``text``: the
    source text is scanned, not cleaned or stemmed per sentence (that cost 10x the search itself); markdown marks
    make no words, and a link target's words are harmless here."""
    terms = tuple(sorted(t for t, w in weights.items() if w > 0))
    if not terms:
        return []
    found: list[set[str]] = [set() for _ in spans]
    starts = [s for s, _ in spans]
    for match in _terms_pattern(terms).finditer(text):
        i = bisect_right(starts, match.start()) - 1
        if i >= 0 and match.start() < spans[i][1]:
            found[i].update(_stems(match.group()))
    return [sum(weights.get(t, 0.0) for t in hit) for hit in found]


@lru_cache(maxsize=4096)
def _stems(word: str) -> tuple[str, ...]:
    """The BM25 terms of one matched word ("Studies" -> ("studi",)), so a prefix that is not the word's stem
    ("type" in "typeset") adds no weight."""
    return tuple(bm25_terms(word))


def note_snippet(text: str, start_line: int, end_line: int, weights: Mapping[str, float]) -> Snippet:
    """``best_snippet`` of a chunk that spans lines ``start_line``..``end_line`` of its note, with the lines made
    the note's (0-based; the end exclusive, at least one line, never past the chunk)."""
    shown = best_snippet(text, weights)
    first = min(start_line + shown.start_line, max(start_line, end_line - 1))
    return Snippet(shown.text, first, max(first + 1, min(start_line + shown.end_line, end_line)))


def best_snippet(text: str, weights: Mapping[str, float], width: int = _WIDTH) -> Snippet:
    """The snippet of chunk ``text`` for a query whose BM25 terms weigh ``weights`` (term -> IDF).

    The sentence holding the most query weight wins (the first on a tie; the first sentence when none holds
    a query term); neighbours are added, the next one first, while the text fits ``width`` characters.
    """
    spans = sentences(text)
    if not spans:
        return Snippet("", 0, 0)
    scores = _sentence_scores(text, spans, weights)
    best = max(range(len(spans)), key=lambda i: (scores[i], -i)) if scores else 0
    cache: dict[int, str] = {}

    def clean_at(i: int) -> str:
        if i not in cache:
            cache[i] = strip_markdown(text[spans[i][0] : spans[i][1]])
        return cache[i]

    while best < len(spans) - 1 and not clean_at(best) and not (scores and scores[best] > 0):
        best += 1  # a fence or a table's delimiter row shows nothing
    start_line = text.count("\n", 0, spans[best][0])
    end_line = text.count("\n", 0, spans[best][1]) + 1
    if not any(clean_at(i) for i in range(len(spans))):  # only images or markup: show what is there as written
        kept = (x for x in text.split("\n") if not _FENCE.match(x) and not _TABLE_DELIMITER.match(x))
        return Snippet(_cut(" ".join(" ".join(kept).split()), weights, width), start_line, end_line)
    if len(clean_at(best)) > width:
        return Snippet(_cut(clean_at(best), weights, width), start_line, end_line)
    lo = hi = best
    shown = clean_at(best)
    grow = [True, True]  # after, before: a neighbour that does not fit stops its side
    while any(grow):
        for side, j in ((0, hi + 1), (1, lo - 1)):
            if not grow[side] or not 0 <= j < len(spans) or len(shown) + 1 + len(clean_at(j)) > width:
                grow[side] = False
            elif side == 0:
                shown, hi = f"{shown} {clean_at(j)}".strip(), j
            else:
                shown, lo = f"{clean_at(j)} {shown}".strip(), j
    marks = (
        ELLIPSIS if lo > 0 and any(clean_at(i) for i in range(lo)) else "",
        ELLIPSIS if any(clean_at(i) for i in range(hi + 1, len(spans))) else "",
    )
    if len(shown) + len(marks[0]) + len(marks[1]) > width:
        marks = ("", "")
    return Snippet(marks[0] + shown + marks[1], start_line, end_line)


def _cut(sentence: str, weights: Mapping[str, float], width: int) -> str:
    """``sentence`` cut to ``width`` characters at word boundaries, around its first weighted query word."""
    room = width - 2
    terms = tuple(sorted(t for t, w in weights.items() if w > 0))
    found = _terms_pattern(terms).search(sentence) if terms else None
    start = max(0, (found.start() if found else 0) - room // 3)
    end = min(len(sentence), start + room)
    start = max(0, end - room)
    if start > 0:
        space = sentence.find(" ", start)
        start = space + 1 if 0 <= space < end else start
    if end < len(sentence):
        space = sentence.rfind(" ", start, end + 1)
        end = space if space > start else end
    return (ELLIPSIS if start else "") + sentence[start:end].strip() + (ELLIPSIS if end < len(sentence) else "")
