"""Markdown -> blocks: markdown-it-py top-level blocks with 0-based line ranges and heading paths."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from botbin.parsing.frontmatter import FrontMatter, parse_frontmatter

# Obsidian inline tags: '#' then at least one non-digit; not inside words, URLs or headings.
_INLINE_TAG = re.compile(r"""(?<![\w#/&\[('"`])#([^\W\d][\w/-]*|\d+[^\W\d][\w/-]*)""")
_BLOCK_KINDS = {
    "paragraph_open": "paragraph",
    "fence": "code",
    "code_block": "code",
    "table_open": "table",
    "blockquote_open": "quote",
    "html_block": "html",
}


@dataclass(frozen=True)
class Block:
    """One top-level markdown block (a list contributes one block per top-level item)."""

    kind: str
    """'heading', 'paragraph', 'list_item', 'code', 'table', 'quote' or 'html'."""
    text: str
    """The block's source lines, joined with LF, trailing blank lines dropped."""
    start_line: int
    """First line, 0-based, in the note's source."""
    end_line: int
    """Line after the last one (0-based, exclusive)."""
    heading_path: tuple[str, ...]
    """Texts of the enclosing headings, outermost first; a heading block includes itself."""


@dataclass(frozen=True)
class ParsedNote:
    """A parsed note: metadata and body blocks in source order."""

    path: str
    """Relative POSIX path of the note in its workspace."""
    frontmatter: FrontMatter
    """Metadata from YAML frontmatter plus inline #tags."""
    blocks: tuple[Block, ...]
    """Body blocks in source order (frontmatter excluded)."""
    line_count: int
    """Number of lines in the source (LF-normalized)."""
    warnings: tuple[str, ...] = ()
    """Problems found while parsing, each naming the file and line."""
    frontmatter_lines: tuple[int, int] | None = None
    """Lines of the frontmatter, ``---`` fences included (0-based, end exclusive); None without one."""

    @property
    def title(self) -> str:
        """The frontmatter title, else the file name without ``.md``."""
        if self.frontmatter.title:
            return self.frontmatter.title
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Only block structure is needed: skipping inline parsing halves the parse time.
    return MarkdownIt("commonmark").enable("table").use(front_matter_plugin).disable("inline")


def _block_text(lines: list[str], start: int, end: int) -> tuple[str, int]:
    """Source text of lines [start, end) without trailing blank lines, and the trimmed end."""
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end]), end


_BACKTICKS = re.compile(r"`+")


def _without_code_spans(text: str) -> str:
    """``text`` with each code span (a backtick run up to the next run of the same length) replaced by a space.

    Linear in the text: a regex with a backreference rescans the rest of the text from every backtick, and a
    line of backticks took seconds.
    """
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    following: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        following[i], last[length] = last.get(length), i
    parts, pos, i = [], 0, 0
    while i < len(runs):
        closing = following[i]
        if closing is None:
            i += 1
            continue
        parts += [text[pos : runs[i][0]], " "]
        pos, i = runs[closing][1], closing + 1
    parts.append(text[pos:])
    return "".join(parts)


def _inline_tags(blocks: list[Block]) -> list[str]:
    tags: list[str] = []
    for block in blocks:
        if block.kind in ("paragraph", "list_item", "quote", "table"):
            text = _without_code_spans(block.text)  # `git checkout #main` holds no tag
            tags.extend(m.group(1) for m in _INLINE_TAG.finditer(text))
    return tags


def _walk(tokens: list[Token], lines: list[str]) -> tuple[list[Block], str | None, tuple[int, int]]:
    """Turn the token stream into blocks; also return the frontmatter YAML and its line range."""
    blocks: list[Block] = []
    headings: list[tuple[int, str]] = []
    yaml_text: str | None = None
    yaml_lines = (0, 0)

    def add(kind: str, token: Token, path: tuple[str, ...]) -> None:
        if token.map is None:
            return
        start, end = token.map
        text, end = _block_text(lines, start, min(end, len(lines)))
        if text.strip():
            blocks.append(Block(kind, text, start, end, path))

    for i, token in enumerate(tokens):
        if token.type == "front_matter":
            yaml_text, yaml_lines = token.content, (token.map[0], token.map[1]) if token.map else (0, 0)
        elif token.level == 0 and token.type == "heading_open":
            level = int(token.tag[1:])
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            headings = [h for h in headings if h[0] < level] + [(level, title)]
            add("heading", token, tuple(h[1] for h in headings))
        elif token.level == 1 and token.type == "list_item_open":
            add("list_item", token, tuple(h[1] for h in headings))
        elif token.level == 0 and token.type in _BLOCK_KINDS:
            add(_BLOCK_KINDS[token.type], token, tuple(h[1] for h in headings))
    return blocks, yaml_text, yaml_lines


def parse_note(text: str, path: str) -> ParsedNote:
    """Parse LF-normalized markdown ``text`` of the note at relative ``path``.

    Headings inside code fences stay code. Never raises on odd markdown; frontmatter problems become
    warnings with the file and line.
    """
    lines = text.split("\n")
    blocks, yaml_text, yaml_lines = _walk(_parser().parse(text), lines)
    fm = parse_frontmatter(yaml_text, path, yaml_lines[0])
    tags = tuple(dict.fromkeys([*fm.tags, *_inline_tags(blocks)]))
    fm = FrontMatter(fm.data, tags, fm.aliases, fm.title, fm.date, fm.warnings)
    return ParsedNote(path, fm, tuple(blocks), len(lines), fm.warnings, yaml_lines if yaml_text is not None else None)
