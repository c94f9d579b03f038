"""Markdown fuzz inputs and the pipeline's promises, shared by tests/fuzz and bench/fuzz_run.py.

Inputs are built from markdown-ish pieces (headings, list and quote markers, backticks and fences, ``---``
frontmatter holding random YAML, ``[[wikilinks]]``, tables, links, HTML comments, rule words), unicode,
NUL, CR, random text, and very long lines (one piece repeated thousands of times); as bytes they may also be
invalid UTF-8, start with a BOM, or be random binary.

Each ``check_*`` asserts one function's documented promise, raising AssertionError when it is broken:
only the documented error (ParseError from ``decode_note`` for a binary file, nothing from ``parse_note``,
``lex``, ``partition_note``, ``chunk_note``), results that keep the invariants of their docstrings, and
under ``TIME_LIMIT_S`` CPU seconds per call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

import msgpack
import numpy as np
from hypothesis import strategies as st

from botbin.aifbin import decode, encode
from botbin.chunking import SPECIAL_TOKENS, Chunk, ChunkerParams, chunk_note
from botbin.directives.lexer import MODALITIES, Cue, lex
from botbin.directives.partition import Directive, Partition, partition_note
from botbin.embedding import WordPieceCounter, resolve_model
from botbin.errors import ParseError
from botbin.parsing import ParsedNote, decode_note, parse_note
from botbin.parsing.text import BINARY_SNIFF_BYTES, normalize_newlines
from botbin.sync.documents import ModelMeta, PreparedNote, build_document, prepare_note

T = TypeVar("T")
#: Most CPU seconds one call may take (CPU, not wall-clock time: other work on a shared machine must not count).
TIME_LIMIT_S = 1.0
#: Longest "very long line" the strategies build by default (characters).
LONG_LINE_CHARS = 20_000
BLOCK_KINDS = frozenset({"heading", "paragraph", "list_item", "code", "table", "quote", "html"})

MD_PIECES = (
    "# ",
    "## ",
    "###### ",
    "#tag",
    "#",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "\t",
    "    ",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "- [ ] ",
    "> ",
    ">> ",
    "`",
    "``",
    "```",
    "```python\n",
    "~~~",
    "\n```\n",
    "---",
    "\n---\n",
    "===",
    "[[",
    "]]",
    "|",
    "| a | b |\n|---|---|\n",
    "[",
    "]",
    "](",
    "(",
    ")",
    "<!--",
    "-->",
    "<a:",
    "<div>",
    "http://x.y/",
    "www.",
    '"',
    "'",
    "**",
    "_",
    "\\",
    ". ",
    "; ",
    ": ",
    "?",
    "Never push to main. ",
    "You must sign. ",
    "Always use tabs",
    "don't ",
    "should ",
    "you may ",
    "Use ",
    "Important: ",
    "e.g. ",
    "\x00",
    "\ufeff",
    "é",
    "世界。",
    "\u200b",
    "\u0301",
    "😀",
    "\u2028",
    "ǅ",
    "١٢٣",
)
YAML_PIECES = (
    "tags: ",
    "tag: ",
    "aliases: ",
    "alias: ",
    "title: ",
    "date: ",
    "created: ",
    "botbin: instructions",
    "\n",
    "  ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ", ",
    ": ",
    "&a ",
    "*a",
    "<<: *a",
    "!!binary ",
    "!!set ",
    "!!timestamp ",
    "!!python/object:os.system ",
    "!!float ",
    "? ",
    "2026-13-45",
    "2026-11-03",
    "2026-11-03T10:00:00Z",
    "12:30:00",
    "1e400",
    "-.inf",
    ".nan",
    "99999999999999999999999",
    "0x1F",
    "0o17",
    "~",
    "null",
    "yes",
    '"\\ud800"',
    '"\\udfff\\ud83d"',
    '"\\x00"',
    '"\\U0001F600"',
    "'",
    '"',
    "|\n  ",
    ">-\n  ",
    "#",
    "%YAML 1.1",
    "...",
    "é",
    "=",
)


def _pieces(alphabet: tuple[str, ...], max_pieces: int) -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(alphabet), st.text(max_size=6))
    return st.lists(piece, max_size=max_pieces).map("".join)


def long_lines(max_chars: int = LONG_LINE_CHARS) -> st.SearchStrategy[str]:
    """One short markdown-ish unit repeated up to ``max_chars`` characters (and an optional prefix)."""
    unit = _pieces(MD_PIECES, 4).filter(bool)
    return st.builds(
        lambda pre, u, n: pre + u * max(1, n // len(u)),
        st.sampled_from(["", "a", "- ", "> "]),
        unit,
        st.integers(1, max_chars),
    )


def markdown_texts(max_chars: int = LONG_LINE_CHARS) -> st.SearchStrategy[str]:
    """Markdown-ish text: pieces, an optional YAML frontmatter before them, or a very long line."""
    body = _pieces(MD_PIECES, 80)
    front = st.builds(lambda y, b: f"---\n{y}\n---\n{b}", _pieces(YAML_PIECES, 30), body)
    return st.one_of(
        body,
        front,
        long_lines(max_chars),
        st.builds("\n".join, st.lists(st.one_of(body, long_lines(max_chars // 4)), max_size=4)),
    )


def any_text(max_chars: int = LONG_LINE_CHARS) -> st.SearchStrategy[str]:
    """Markdown-ish text, or any unicode, lone surrogates included (an editor may send them)."""
    return st.one_of(markdown_texts(max_chars), st.text(st.characters(), max_size=300))


def lf_texts(max_chars: int = LONG_LINE_CHARS) -> st.SearchStrategy[str]:
    """``any_text`` LF-normalized, as parse_note requires (decode_note does it for a file's bytes)."""
    return any_text(max_chars).map(normalize_newlines)


def _damage(data: bytes, draws: list[tuple[int, bytes]]) -> bytes:
    for pos, junk in draws:
        at = pos % (len(data) + 1)
        data = data[:at] + junk + data[at:]
    return data


def note_bytes(max_chars: int = LONG_LINE_CHARS) -> st.SearchStrategy[bytes]:
    """A note's bytes: markdown text encoded (CRLF, a BOM, invalid UTF-8 or NUL bytes spliced in), or random."""
    text = markdown_texts(max_chars)
    junk = st.lists(
        st.tuples(
            st.integers(0, 2**20),
            st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf", b"\xe4\xb8"]),
        ),
        max_size=3,
    )
    encoded = st.builds(
        lambda t, crlf, bom, d: _damage(
            (b"\xef\xbb\xbf" if bom else b"") + (t.replace("\n", "\r\n") if crlf else t).encode(), d
        ),
        text,
        st.booleans(),
        st.booleans(),
        junk,
    )
    return st.one_of(encoded, st.binary(max_size=3000))


note_paths = st.sampled_from(["memory/note.md", "MEMORY.md", "docs/AGENTS.md", "daily/2026-11-03.md", "a b/ü.md"])
params = st.sampled_from([ChunkerParams(), ChunkerParams(32, 8, 4), ChunkerParams(64, 0, 0)])


@cache
def counter() -> WordPieceCounter:
    """The real all-MiniLM-L6-v2 WordPiece counter (loaded once, ~0.1 s)."""
    return WordPieceCounter(resolve_model(None).path)


#: (CPU seconds, wall seconds) of every call ``timed`` made (the bench reads and clears it).
CALL_TIMES: list[tuple[float, float]] = []


def timed(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, asserting it returns within TIME_LIMIT_S CPU seconds (exceptions pass through)."""
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        return fn(*args)
    finally:
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        CALL_TIMES.append((cpu, wall))
        assert cpu < TIME_LIMIT_S, f"{getattr(fn, '__name__', fn)} took {cpu:.2f} CPU s"


# --- the promises -----------------------------------------------------------------------------------------------


def check_decode_note(data: bytes, path: str = "n.md") -> str | None:
    """decode_note raises ParseError exactly for bytes with a NUL in the first 8 KiB; else LF-only text."""
    binary = b"\x00" in data[:BINARY_SNIFF_BYTES]
    try:
        decoded = timed(decode_note, data, path)
    except ParseError as exc:
        assert binary and exc.path == path
        return None
    assert not binary and "\r" not in decoded.text
    return decoded.text


def check_parse(text: str, path: str = "n.md") -> ParsedNote:
    """parse_note of LF-normalized ``text`` never raises; blocks are the note's own lines, in order; the
    metadata packs as MessagePack."""
    note = timed(parse_note, text, path)
    lines = text.split("\n")
    assert note.line_count == len(lines)
    previous_end = 0
    for b in note.blocks:
        assert b.kind in BLOCK_KINDS and all(isinstance(h, str) for h in b.heading_path)
        assert previous_end <= b.start_line < b.end_line <= note.line_count
        assert b.text == "\n".join(lines[b.start_line : b.end_line])
        previous_end = b.end_line
    if note.frontmatter_lines is not None:
        assert 0 <= note.frontmatter_lines[0] < note.frontmatter_lines[1] <= note.line_count
    fm = note.frontmatter
    assert msgpack.unpackb(msgpack.packb(fm.data), strict_map_key=True) is not None
    assert all(isinstance(s, str) and s for s in (*fm.tags, *fm.aliases))
    assert isinstance(note.title, str)
    return note


def check_lex(text: str) -> list[Cue]:
    """lex never raises, in either register; every span indexes ``text``; at most one cue per sentence, in order;
    the ordinary register finds no cue where the instruction register finds none."""
    cues = timed(lex, text)
    notes = lex(text, instructions=False)
    for found in (cues, notes):
        previous = 0
        for c in found:
            assert c.modality in MODALITIES
            assert previous <= c.sentence_start <= c.start < c.end <= c.sentence_end <= len(text)
            assert text[c.start : c.end] == c.cue
            assert c.start <= c.action_start <= c.sentence_end
            previous = c.sentence_end
    assert {c.sentence_start for c in notes} <= {c.sentence_start for c in cues}
    return cues


def check_partition(note: ParsedNote, text: str) -> Partition:
    """partition_note never raises; one kind per block; each directive is found again by from_dict."""
    part = timed(partition_note, note, text)
    assert len(part.kinds) == len(note.blocks) and set(part.kinds) <= {"hard", "soft", "lore"}
    for d in part.directives:
        assert d.kind in ("hard", "soft") and d.start_line < d.end_line
        assert Directive.from_dict(d.path, d.to_dict()) == d
        assert all(d.start_line <= c.line < d.end_line for c in d.cues)
    return part


def check_chunks(note: ParsedNote, chunks: list[Chunk] | tuple[Chunk, ...], p: ChunkerParams) -> None:
    """Chunks are in source order, within the note, at most target_tokens (counted as the docstring says)."""
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts)
    for c in chunks:
        assert 0 <= c.start_line < c.end_line <= note.line_count
        assert c.text.strip() and c.embed_text.split("\n", 1)[1] == c.text
        assert c.tokens <= p.target_tokens
        assert c.tokens == counter().count(c.embed_text) + SPECIAL_TOKENS
        assert c.kind in ("hard", "soft", "lore")


def check_chunk_note(text: str, p: ChunkerParams, path: str = "n.md") -> list[Chunk]:
    """chunk_note of a parsed ``text`` (LF-normalized first, with its partition's kinds) keeps the chunk invariants."""
    text = normalize_newlines(text)
    note = parse_note(text, path)
    part = partition_note(note, text)
    chunks = timed(chunk_note, note, counter(), p, part.kinds, part.instruction)
    check_chunks(note, chunks, p)
    return chunks


def check_prepare(rel: str, data: bytes, p: ChunkerParams) -> PreparedNote | None:
    """prepare_note raises only ParseError (a binary file); what it returns becomes a file that decodes."""
    try:
        prep = timed(prepare_note, rel, data, counter(), p)
    except ParseError:
        assert b"\x00" in data[:BINARY_SNIFF_BYTES]
        return None
    check_chunks(prep.note, prep.chunks, p)
    vectors = np.ones((len(prep.chunks), 4), dtype=np.float32) / 2
    doc = build_document(
        prep,
        vectors.astype(np.float32),
        ModelMeta("test/fuzz", 4, 256),
        p,
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00Z",
    )
    back = decode(encode(doc, compress=True), rel)
    assert len(back.chunks) == len(prep.chunks) and back.source_text == data
    return prep
