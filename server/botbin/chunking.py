"""Blocks -> chunks: heading-aware, then paragraph/list item/sentence/line, sized by the model's tokenizer.

Boundaries a chunk never crosses: a heading's section (so one ``## [Turns a-b]`` block of a soul file, or one
dated heading of a daily note, is its own chunk however short), and a dated entry of a list (``- 09:30 ...`` as
``botbin remember`` writes it, ``- 2026-11-29 ...``). A short section or entry is a chunk of its own; the
``min_tokens`` merge only joins pieces of one section and entry. A table cut over several chunks repeats its
header row (and delimiter row) at the top of each.

Each chunk's embedded text is ``"<title> > <heading> > ...\\n<body>"`` and, with [CLS] and [SEP], fits
``target_tokens`` (all-MiniLM-L6-v2 silently drops tokens past 256, so nothing may be longer). BERT's
WordPiece tokenizes each whitespace-separated word on its own, so token counts of pieces add up.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from botbin.config import DEFAULTS

if TYPE_CHECKING:  # parsing pulls in markdown-it and YAML, which a no-op sync never needs
    from botbin.parsing.blocks import Block, ParsedNote

#: [CLS] and [SEP], added by the model around every input.
SPECIAL_TOKENS = 2
_KIND_RANK = {"lore": 0, "soft": 1, "hard": 2}
#: Bumped when the directive partition changes, so that a sync re-chunks (not re-embeds) every note.
PARTITION_VERSION = 2
#: Bumped when chunk boundaries change (2: sections, dated entries and table headers), with the same effect: a
#: sync re-chunks every note and embeds only the chunks whose text is new (the cache is keyed by text hash).
BOUNDARY_VERSION = 2
#: A list item or paragraph that opens with a time or a date: one entry of a daily note (``- 09:30 ...``,
#: ``- 2026-11-29 ...``, ``- [ ] **14:05** ...``).
_DATED_ENTRY = re.compile(
    r"\s*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(?:\[.\]\s+)?(?:\*\*|__|\[\[|\[)?"
    r"(?:\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(?::\d{2})?(?!\d))"
)
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=\S)|(?<=[。！？；])\s*(?=\S)|\n+")
_LINE_END = re.compile(r"\n")


class TokenCounter(Protocol):
    """The part of a tokenizer that chunking needs."""

    def count(self, text: str) -> int:
        """Model tokens in ``text``, without special tokens."""
        ...

    def windows(self, text: str, max_tokens: int) -> list[tuple[int, int]]:
        """Character spans [start, end) of consecutive runs of at most ``max_tokens`` tokens."""
        ...


@dataclass(frozen=True)
class ChunkerParams:
    """Chunk sizes, in model tokens (see Settings for the defaults and why)."""

    target_tokens: int = DEFAULTS.target_tokens
    overlap_tokens: int = DEFAULTS.overlap_tokens
    min_tokens: int = DEFAULTS.min_tokens

    def as_dict(self) -> dict[str, int]:
        """The parameters as stored in AIF-BIN metadata and the state file."""
        return {
            "target_tokens": self.target_tokens,
            "overlap_tokens": self.overlap_tokens,
            "min_tokens": self.min_tokens,
            "partition": PARTITION_VERSION,
            "boundaries": BOUNDARY_VERSION,
        }


@dataclass(frozen=True)
class Chunk:
    """One searchable piece of a note."""

    text: str
    """The chunk's body text (verbatim source, pieces of separate blocks joined by a blank line)."""
    embed_text: str
    """What the model embeds: the heading-path prefix, a newline, then ``text``."""
    heading_path: tuple[str, ...]
    """Headings above the chunk, outermost first."""
    start_line: int
    """First source line, 0-based."""
    end_line: int
    """Line after the last one (0-based, exclusive)."""
    tokens: int
    """Model tokens of ``embed_text`` including [CLS] and [SEP]; at most target_tokens."""
    kind: str = "lore"
    """'hard', 'soft' or 'lore': the highest kind of the blocks in the chunk (see directives.partition)."""

    @cached_property
    def text_md5(self) -> str:
        """MD5 hex digest of ``embed_text`` (UTF-8): the embedding cache key together with the model id."""
        return hashlib.md5(self.embed_text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class _Piece:
    """A verbatim span of one block's text."""

    block: int
    start: int
    end: int
    tokens: int
    exact: bool = True
    """False for a token window: joined to its neighbours it may tokenize differently, so recount."""
    header: bool = False
    """A table's header and delimiter rows, repeated at the top of a chunk that continues the table."""


@dataclass
class _Draft:
    path: tuple[str, ...]
    pieces: list[_Piece]
    group: int
    """The section-and-entry this draft belongs to: drafts merge only within one group."""


def _spans(text: str, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in pattern.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _split_block(index: int, block: Block, total: int, budget: int, counter: TokenCounter) -> list[_Piece]:
    """Pieces of one block (``total`` tokens), each at most ``budget``: whole, sentences/lines, then tokens."""
    if total <= budget:
        return [_Piece(index, 0, len(block.text), total)]
    prose = block.kind in ("paragraph", "list_item", "quote")
    pieces: list[_Piece] = []
    for start, end in _spans(block.text, _SENTENCE_END if prose else _LINE_END):
        n = counter.count(block.text[start:end])
        if n <= budget:
            pieces.append(_Piece(index, start, end, n))
            continue
        pieces.extend(_Piece(index, s, e, m, False) for s, e, m in _fit(block.text, start, end, budget, counter))
    return pieces


def _fit(text: str, start: int, end: int, budget: int, counter: TokenCounter) -> list[tuple[int, int, int]]:
    """Token windows of text[start:end] as (start, end, tokens), each re-counted and at most ``budget``.

    A window cut inside an overlong word can re-tokenize into more pieces; such a window is split again
    with a smaller run length until it fits.
    """
    out: list[tuple[int, int, int]] = []
    for ws, we in counter.windows(text[start:end], budget):
        s, e = start + ws, start + we
        if not text[s:e].strip():
            continue
        n = counter.count(text[s:e])
        if n <= budget or budget <= 1:
            out.append((s, e, n))
        else:
            smaller = max(1, budget * budget // n - 1)
            out.extend(_fit(text, s, e, smaller, counter) if smaller < budget else [(s, e, n)])
    return out


class _Builder:
    """Turns one note's blocks into chunks (one instance per note)."""

    def __init__(
        self,
        note: ParsedNote,
        counter: TokenCounter,
        params: ChunkerParams,
        kinds: Sequence[str] | None,
        split_kinds: bool,
    ) -> None:
        self.note, self.counter, self.params = note, counter, params
        self.blocks = note.blocks
        self.kinds: Sequence[str] = kinds if kinds is not None else ["lore"] * len(note.blocks)
        self.split_kinds = split_kinds
        many = getattr(counter, "count_many", None)
        texts = [b.text for b in self.blocks]
        self.block_tokens: list[int] = list(many(texts)) if many is not None else [counter.count(t) for t in texts]
        self._prefix_cache: dict[tuple[str, ...], tuple[str, int]] = {}
        self._group = 0

    def prefix(self, path: tuple[str, ...]) -> tuple[str, int]:
        """Heading-path prefix for ``path`` and its token count (capped at a quarter of the target)."""
        if path not in self._prefix_cache:
            title = self.note.title
            parts = [title, *(path[1:] if path and path[0].strip() == title.strip() else path)]
            # One line: a setext heading's text can span lines, and the prefix ends at the first newline.
            text = " > ".join(" ".join(p.split()) for p in parts if p.strip())
            n = self.counter.count(text)
            cap = self.params.target_tokens // 4
            if n > cap:
                text = text[: self.counter.windows(text, cap)[0][1]]
                n = self.counter.count(text)
            self._prefix_cache[path] = (text, n)
        return self._prefix_cache[path]

    def budget(self, path: tuple[str, ...]) -> int:
        return self.params.target_tokens - SPECIAL_TOKENS - self.prefix(path)[1]

    def sections(self) -> list[tuple[tuple[str, ...], int | None, list[int]]]:
        """(heading path, heading block index, content block indices) per section, in order.

        The heading of an empty section that is not a parent of the next one (``# A`` directly followed
        by ``# B``) becomes content of the next section, so its words stay searchable.
        """
        out: list[tuple[tuple[str, ...], int | None, list[int]]] = [((), None, [])]
        for i, block in enumerate(self.blocks):
            if block.kind != "heading":
                out[-1][2].append(i)
                continue
            path, heading, content = out[-1]
            orphan = heading is not None and not content and block.heading_path[: len(path)] != path
            out.append((block.heading_path, i, [heading] if orphan and heading is not None else []))
        path, heading, content = out[-1]
        if heading is not None and not content and len(out) > 1:
            out[-1] = (path, heading, [heading])
        return [s for s in out if s[2]]

    def overlap(self, pieces: list[_Piece], nxt: _Piece) -> list[_Piece]:
        """The end of the previous chunk (``pieces``), at most overlap_tokens, to open the next chunk.

        Whole trailing pieces first (never all of them), then trailing sentences of a longer piece.
        Nothing is repeated when ``nxt`` continues a word cut at the chunk boundary.
        """
        if pieces[-1].block == nxt.block and pieces[-1].end == nxt.start:
            return []
        tail: list[_Piece] = []
        used = 0
        for position in range(len(pieces) - 1, -1, -1):
            piece = pieces[position]
            if position > 0 and used + piece.tokens <= self.params.overlap_tokens:
                tail.insert(0, piece)
                used += piece.tokens
                continue
            text = self.blocks[piece.block].text[piece.start : piece.end]
            for s, e in reversed(_spans(text, _SENTENCE_END)[1:]):
                n = self.counter.count(text[s:e])
                if used + n > self.params.overlap_tokens:
                    break
                tail.insert(0, _Piece(piece.block, piece.start + s, piece.start + e, n))
                used += n
            break
        return tail

    def pack(self, path: tuple[str, ...], indices: list[int]) -> list[_Draft]:
        """Drafts of one section's content blocks; a dated entry always opens a new draft."""
        budget = self.budget(path)
        drafts: list[_Draft] = []
        for entry in _entries(self.blocks, indices):
            self._group += 1
            current: list[_Piece] = []
            used = 0
            for i in entry:
                if current and self.split_kinds and self.kinds[i] != self.kinds[current[-1].block]:
                    drafts.append(_Draft(path, current, self._group))
                    current, used = [], 0  # an instruction note's rules never share a chunk with its background
                for piece in _split_block(i, self.blocks[i], self.block_tokens[i], budget, self.counter):
                    if current and used + piece.tokens > budget:
                        drafts.append(_Draft(path, current, self._group))
                        current = self.reopen(current, piece, budget)
                        used = sum(p.tokens for p in current)
                    current.append(piece)
                    used += piece.tokens
            if current:
                drafts.append(_Draft(path, current, self._group))
        return drafts

    def reopen(self, previous: list[_Piece], nxt: _Piece, budget: int) -> list[_Piece]:
        """What opens the chunk after ``previous`` before ``nxt``: a table's header rows, then the overlap."""
        header = self.table_header(nxt)
        if header is not None and header.tokens + nxt.tokens > budget:
            header = None
        fixed = [header] if header is not None else []
        tail = [
            p for p in self.overlap(previous, nxt) if header is None or p.block != header.block or p.start >= header.end
        ]
        while tail and sum(p.tokens for p in [*fixed, *tail]) + nxt.tokens > budget:
            tail.pop(0)
        return [*fixed, *tail]

    def table_header(self, piece: _Piece) -> _Piece | None:
        """The header and delimiter rows of ``piece``'s table, when ``piece`` is a later row of it."""
        block = self.blocks[piece.block]
        if block.kind != "table":
            return None
        first = block.text.find("\n")
        end = block.text.find("\n", first + 1) if first >= 0 else -1
        if end < 0 or piece.start < end:
            return None
        return _Piece(piece.block, 0, end, self.counter.count(block.text[:end]), header=True)

    def size(self, draft: _Draft) -> int:
        return SPECIAL_TOKENS + self.prefix(draft.path)[1] + sum(p.tokens for p in draft.pieces)

    def merge_small(self, drafts: list[_Draft]) -> list[_Draft]:
        """Merge a draft under min_tokens with the previous one of its section and entry when both fit."""
        out: list[_Draft] = []
        for draft in drafts:
            if (
                out
                and out[-1].group == draft.group
                and (self.size(draft) < self.params.min_tokens or self.size(out[-1]) < self.params.min_tokens)
                and (not self.split_kinds or self.kind(out[-1]) == self.kind(draft))
            ):
                prev = out[-1]
                merged = _Draft(prev.path, [*prev.pieces, *draft.pieces], prev.group)
                if self.size(merged) <= self.params.target_tokens and not _overlaps(prev, draft):
                    out[-1] = merged
                    continue
            out.append(draft)
        return out

    def kind(self, draft: _Draft) -> str:
        """The highest kind among the draft's blocks (hard > soft > lore)."""
        return max((self.kinds[p.block] for p in draft.pieces), key=lambda k: _KIND_RANK.get(k, 0))

    def render(self, draft: _Draft) -> Chunk:
        runs: list[list[_Piece]] = []
        for piece in draft.pieces:
            prev = runs[-1][-1] if runs else None
            if prev is not None and not prev.header and prev.block == piece.block and prev.end <= piece.start:
                runs[-1].append(piece)
            else:
                runs.append([piece])
        body = ""
        for n, run in enumerate(runs):
            sep = "" if n == 0 else "\n" if runs[n - 1][0].header else "\n\n"
            body += sep + self.blocks[run[0].block].text[run[0].start : run[-1].end]
        # A repeated table header is not where the chunk starts: its lines are those of the rows it carries.
        first = next(p for p in draft.pieces if not p.header)
        last = draft.pieces[-1]
        start = self._line_of(first, first.start)
        end = self._line_of(last, max(last.end - 1, last.start)) + 1
        prefix, _ = self.prefix(draft.path)
        embed_text = f"{prefix}\n{body}"
        # Whole blocks and sentences add up exactly (WordPiece splits on whitespace and punctuation first);
        # pieces of one word cut by a token window, joined back, can tokenize differently: count again.
        exact = all(p.exact for p in draft.pieces)
        tokens = self.size(draft) if exact else SPECIAL_TOKENS + self.counter.count(embed_text)
        return Chunk(body, embed_text, draft.path, start, end, tokens, self.kind(draft))

    def _line_of(self, piece: _Piece, offset: int) -> int:
        block = self.blocks[piece.block]
        return block.start_line + block.text.count("\n", 0, offset)

    def build(self) -> list[Chunk]:
        drafts: list[_Draft] = []
        if self.blocks and all(b.kind == "heading" for b in self.blocks):
            # A note of headings only (an outline) is one chunk of those headings.
            drafts = self.pack((), list(range(len(self.blocks))))
        for path, _, indices in self.sections() if not drafts else []:
            drafts.extend(self.pack(path, indices))
        return [self.render(d) for d in self.merge_small(drafts)]


def _entries(blocks: Sequence[Block], indices: list[int]) -> list[list[int]]:
    """``indices`` (one section's content blocks) cut before each dated entry (see _DATED_ENTRY)."""
    groups: list[list[int]] = [[]]
    for i in indices:
        block = blocks[i]
        if groups[-1] and block.kind in ("list_item", "paragraph") and _DATED_ENTRY.match(block.text):
            groups.append([])
        groups[-1].append(i)
    return [g for g in groups if g]


def _overlaps(a: _Draft, b: _Draft) -> bool:
    """True when ``b`` starts with overlap text repeated from ``a`` (never merge those)."""
    return any(p.block == q.block and p.end > q.start and p.start < q.end for p in a.pieces for q in b.pieces)


def chunk_note(
    note: ParsedNote,
    counter: TokenCounter,
    params: ChunkerParams | None = None,
    kinds: Sequence[str] | None = None,
    split_kinds: bool = False,
) -> list[Chunk]:
    """Split ``note`` into chunks of at most ``params.target_tokens`` model tokens, in source order.

    ``kinds``: the kind of each block ('hard', 'soft', 'lore'; default all lore); a chunk takes the highest
    kind of its blocks. ``split_kinds``: never put blocks of different kinds in one chunk (instruction notes).
    Returns an empty list for a note with no body text (e.g. frontmatter only).
    """
    return _Builder(note, counter, params or ChunkerParams(), kinds, split_kinds).build()
