"""Tests for botbin.chunking: heading-aware chunks sized by a token counter (a fake one and the real WordPiece)."""

from __future__ import annotations

import hashlib
import itertools
import re

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from botbin.chunking import SPECIAL_TOKENS, Chunk, ChunkerParams, chunk_note
from botbin.embedding import WordPieceCounter, bundled_model_path
from botbin.parsing.blocks import ParsedNote, parse_note
from botbin.parsing.text import decode_note


class WordCounter:
    """A fake TokenCounter: one token per whitespace-separated word (exact, additive, easy to reason about)."""

    def count(self, text: str) -> int:
        return len(text.split())

    def windows(self, text: str, max_tokens: int) -> list[tuple[int, int]]:
        starts = [m.start() for m in re.finditer(r"\S+", text)][:: max(1, max_tokens)]
        return [(s, starts[j + 1] if j + 1 < len(starts) else len(text)) for j, s in enumerate(starts)]


WORDS = WordCounter()


@pytest.fixture(scope="module")
def wordpiece() -> WordPieceCounter:
    return WordPieceCounter(bundled_model_path())


def note_of(text: str, path: str = "n.md") -> ParsedNote:
    return parse_note(decode_note(text.encode("utf-8"), path).text, path)


def words(prefix: str, n: int, end: str = "") -> str:
    return " ".join(f"{prefix}{i}" for i in range(n)) + end


def check_chunks(note: ParsedNote, chunks: list[Chunk], counter: WordPieceCounter | WordCounter, target: int) -> None:
    """The invariants every chunk list must keep, whatever the note."""
    source = "\n".join(b.text for b in note.blocks)
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts)
    for c in chunks:
        assert c.tokens == counter.count(c.embed_text) + SPECIAL_TOKENS, (c.start_line, c.embed_text[:80])
        assert c.tokens <= target
        assert 0 <= c.start_line < c.end_line <= note.line_count
        assert c.text.strip()
        prefix, _, body = c.embed_text.partition("\n")
        assert body == c.text
        assert prefix.startswith(note.title[:10])
        for line in c.text.split("\n"):
            assert line in source  # chunk text is verbatim note text
        assert c.text_md5 == hashlib.md5(c.embed_text.encode()).hexdigest()


def uncovered_lines(note: ParsedNote, chunks: list[Chunk]) -> list[int]:
    """Non-blank lines of non-heading blocks that no chunk's line range covers.

    What chunking guarantees: every line of body text lies in some chunk's range. Heading lines are carried by
    the heading prefix of embed_text instead (their own line is covered only when sections merge), and lines
    that make no block (frontmatter, thematic breaks, link reference definitions) are in no chunk at all.
    """
    text_lines = {
        ln
        for b in note.blocks
        if b.kind != "heading"
        for ln, s in enumerate(b.text.split("\n"), b.start_line)
        if s.strip()
    }
    return sorted(ln for ln in text_lines if not any(c.start_line <= ln < c.end_line for c in chunks))


# --- exact sizes with the fake word counter -------------------------------------------------------------------


def test_short_note_is_one_chunk_with_exact_size() -> None:
    note = note_of("first line of text\nsecond line\n")
    [chunk] = chunk_note(note, WORDS)
    assert chunk.text == "first line of text\nsecond line"
    assert chunk.embed_text == "n\nfirst line of text\nsecond line"
    assert chunk.heading_path == ()
    assert (chunk.start_line, chunk.end_line) == (0, 2)
    assert chunk.tokens == SPECIAL_TOKENS + 1 + 6


def test_paragraphs_are_packed_up_to_the_budget() -> None:
    # budget = 20 - 2 special - 1 prefix word = 17: three 5-word paragraphs fit, a fourth does not.
    text = "\n\n".join(words(f"p{i}w", 5) for i in range(7))
    chunks = chunk_note(note_of(text), WORDS, ChunkerParams(target_tokens=20, overlap_tokens=0, min_tokens=0))
    assert [c.tokens for c in chunks] == [18, 18, 8]
    assert [(c.start_line, c.end_line) for c in chunks] == [(0, 5), (6, 11), (12, 13)]
    assert chunks[0].text == "\n\n".join(words(f"p{i}w", 5) for i in range(3))
    assert chunks[2].text == words("p6w", 5)


def test_long_paragraph_splits_on_sentences() -> None:
    text = " ".join(words(f"s{i}w", 6, ".") for i in range(6))  # six 6-word sentences on one line
    chunks = chunk_note(note_of(text), WORDS, ChunkerParams(target_tokens=20, overlap_tokens=0, min_tokens=0))
    assert [c.text for c in chunks] == [
        words("s0w", 6, ".") + " " + words("s1w", 6, "."),
        words("s2w", 6, ".") + " " + words("s3w", 6, "."),
        words("s4w", 6, ".") + " " + words("s5w", 6, "."),
    ]
    assert [c.tokens for c in chunks] == [15, 15, 15]
    assert all((c.start_line, c.end_line) == (0, 1) for c in chunks)


def test_sentence_longer_than_budget_is_cut_into_token_windows() -> None:
    text = words("w", 40)
    chunks = chunk_note(note_of(text), WORDS, ChunkerParams(target_tokens=20, overlap_tokens=4, min_tokens=0))
    assert [c.tokens for c in chunks] == [20, 20, 9]
    assert [c.text.split() for c in chunks] == [
        [f"w{i}" for i in range(17)],
        [f"w{i}" for i in range(17, 34)],
        [f"w{i}" for i in range(34, 40)],
    ]
    assert "".join(c.text for c in chunks) == text


def test_code_splits_on_lines_not_sentences() -> None:
    code = "```\n" + "\n".join(f"x{i} = f(a. b. c)" for i in range(12)) + "\n```"
    note = note_of("# Code\n\n" + code + "\n")
    chunks = chunk_note(note, WORDS, ChunkerParams(target_tokens=30, overlap_tokens=0, min_tokens=0))
    assert len(chunks) > 1
    for c in chunks:
        for line in c.text.split("\n"):
            assert line == "```" or re.fullmatch(r"x\d+ = f\(a\. b\. c\)", line)
    check_chunks(note, chunks, WORDS, 30)
    assert uncovered_lines(note, chunks) == []


def test_overlap_repeats_trailing_sentences_of_previous_chunk() -> None:
    # Four paragraphs of three 4-word sentences (12 words); budget 27 fits two paragraphs.
    paras = [" ".join(words(f"{c}{i}w", 4, ".") for c in "abc") for i in range(4)]
    chunks = chunk_note(note_of("\n\n".join(paras)), WORDS, ChunkerParams(30, overlap_tokens=6, min_tokens=0))
    assert [c.text for c in chunks] == [
        paras[0] + "\n\n" + paras[1],
        words("c1w", 4, ".") + "\n\n" + paras[2],
        words("c2w", 4, ".") + "\n\n" + paras[3],
    ]
    assert [c.tokens for c in chunks] == [27, 19, 19]
    assert [(c.start_line, c.end_line) for c in chunks] == [(0, 3), (2, 5), (4, 7)]


def test_zero_overlap_repeats_nothing() -> None:
    paras = [" ".join(words(f"{c}{i}w", 4, ".") for c in "abc") for i in range(4)]
    chunks = chunk_note(note_of("\n\n".join(paras)), WORDS, ChunkerParams(30, overlap_tokens=0, min_tokens=0))
    seen = [w for c in chunks for w in c.text.split()]
    assert len(seen) == len(set(seen)) == 48


def test_heading_path_prefix_in_embed_text() -> None:
    note = note_of("# Project\n\n## Design\n\nWe chose SQLite.\n\n# Other\n\nMore text.\n", "memory/plan.md")
    chunks = chunk_note(note, WORDS, ChunkerParams(target_tokens=40, overlap_tokens=4, min_tokens=0))
    assert [(c.heading_path, c.embed_text) for c in chunks] == [
        (("Project", "Design"), "plan > Project > Design\nWe chose SQLite."),
        (("Other",), "plan > Other\nMore text."),
    ]
    assert [(c.start_line, c.end_line) for c in chunks] == [(4, 5), (8, 9)]


def test_title_equal_to_first_heading_is_not_repeated() -> None:
    note = note_of("# Plan\n\n## Sub\n\nbody\n", "Plan.md")
    [chunk] = chunk_note(note, WORDS)
    assert chunk.embed_text == "Plan > Sub\nbody"


def test_frontmatter_title_is_the_prefix_root() -> None:
    note = note_of("---\ntitle: Nice Title\n---\n# H\n\nbody\n", "memory/x.md")
    [chunk] = chunk_note(note, WORDS)
    assert chunk.embed_text == "Nice Title > H\nbody"
    assert (chunk.start_line, chunk.end_line) == (5, 6)
    assert "title:" not in chunk.text


def test_long_heading_prefix_is_capped_at_a_quarter_of_the_target() -> None:
    note = note_of("# " + words("h", 100) + "\n\nbody text here\n")
    [chunk] = chunk_note(note, WORDS, ChunkerParams(target_tokens=40, overlap_tokens=4, min_tokens=0))
    prefix = chunk.embed_text.split("\n")[0]
    assert prefix.split() == ["n", ">", *[f"h{i}" for i in range(8)]]
    assert chunk.tokens == SPECIAL_TOKENS + 10 + 3
    assert chunk.heading_path == (words("h", 100),)


def test_tiny_sections_stay_chunks_of_their_own() -> None:
    # Issue 18 changed this: tiny sections used to merge (one chunk "one two\n\n# B\n\nthree four"), which
    # diluted each section's meaning and showed a neighbour's text; a chunk now never spans two sections.
    note = note_of("# A\n\none two\n\n# B\n\nthree four\n")
    chunks = chunk_note(note, WORDS, ChunkerParams(target_tokens=50, overlap_tokens=8, min_tokens=20))
    assert [(c.heading_path, c.text, c.start_line, c.end_line) for c in chunks] == [
        (("A",), "one two", 2, 3),
        (("B",), "three four", 6, 7),
    ]
    assert [c.tokens for c in chunks] == [SPECIAL_TOKENS + 3 + 2] * 2


def test_long_section_windows_inside_itself_and_the_next_section_starts_fresh() -> None:
    a = " ".join(words(f"a{i}w", 5, ".") for i in range(8))  # 40 words in 5-word sentences
    note = note_of("# A\n\n" + a + "\n\n# B\n\nb1 b2\n")
    chunks = chunk_note(note, WORDS, ChunkerParams(target_tokens=25, overlap_tokens=5, min_tokens=20))
    assert [c.heading_path for c in chunks[:-1]] == [("A",)] * (len(chunks) - 1)
    assert len(chunks) >= 3
    assert (chunks[-1].heading_path, chunks[-1].text) == (("B",), "b1 b2")
    for prev, nxt in itertools.pairwise(chunks[:-1]):
        assert nxt.text.split(".")[0] in prev.text  # overlap within the section


def test_sections_are_not_merged_when_big_enough() -> None:
    note = note_of("# A\n\n" + words("a", 30) + "\n\n# B\n\n" + words("b", 30) + "\n")
    chunks = chunk_note(note, WORDS, ChunkerParams(target_tokens=100, overlap_tokens=8, min_tokens=20))
    assert [c.heading_path for c in chunks] == [("A",), ("B",)]


def test_merge_never_exceeds_target() -> None:
    # B (2 words + its heading) is tiny, but A (49 tokens) + B would be 53 > 50: B stays alone.
    note = note_of("# A\n\n" + words("a", 44) + "\n\n# B\n\nb1 b2\n")
    chunks = chunk_note(note, WORDS, ChunkerParams(target_tokens=50, overlap_tokens=8, min_tokens=20))
    assert [(c.heading_path, c.tokens) for c in chunks] == [(("A",), 49), (("B",), 7)]


SOUL = """# Soul file: ana

What botbin distilled.

## [Turns 1-5] 2026-11-29T10:00:00Z

- My blood type is AB negative.

## [Turns 6-10] 2026-11-29T10:05:00Z

- We talked about the weather.
- It rained a lot.

## [Turns 11-15] 2026-11-29T10:09:00Z

- My locker code at the gym is 4471.
"""


def test_soul_file_blocks_are_one_chunk_each() -> None:
    note = note_of(SOUL, "conversations/ana.md")
    chunks = chunk_note(note, WORDS)
    bodies = {c.heading_path[-1].split("]")[0] + "]": c.text for c in chunks if len(c.heading_path) > 1}
    assert bodies == {
        "[Turns 1-5]": "- My blood type is AB negative.",
        "[Turns 6-10]": "- We talked about the weather.\n\n- It rained a lot.",  # items: blocks
        "[Turns 11-15]": "- My locker code at the gym is 4471.",
    }
    assert len(chunks) == 4  # the preamble, then one chunk per block


DAILY = """# 2026-11-29

- 09:30 Picked Postgres for the billing service. #decision
- 10:05 Alice owns the migration
  and the rollback plan.
- 11:40 Lunch with Bob
- **14:05** Deploy window moved to Friday.
- [ ] 15:00 call the bank
- 2026-11-30 follow-up meeting booked
- a plain item without a time
"""


def test_dated_entries_of_a_daily_note_are_one_chunk_each() -> None:
    chunks = chunk_note(note_of(DAILY, "memory/2026-11-29.md"), WORDS)
    assert [c.text for c in chunks] == [
        "- 09:30 Picked Postgres for the billing service. #decision",
        "- 10:05 Alice owns the migration\n  and the rollback plan.",
        "- 11:40 Lunch with Bob",
        "- **14:05** Deploy window moved to Friday.",
        "- [ ] 15:00 call the bank",
        "- 2026-11-30 follow-up meeting booked\n\n- a plain item without a time",  # undated items join the entry
    ]
    assert [(c.start_line, c.end_line) for c in chunks] == [(2, 3), (3, 5), (5, 6), (6, 7), (7, 8), (8, 10)]


def test_dated_headings_are_sections() -> None:
    text = "# Log\n\n## 2026-11-28\n\nShipped v1.\n\n## 2026-11-29\n\nShipped v2.\n"
    chunks = chunk_note(note_of(text), WORDS)
    assert [(c.heading_path, c.text) for c in chunks] == [
        (("Log", "2026-11-28"), "Shipped v1."),
        (("Log", "2026-11-29"), "Shipped v2."),
    ]


def test_an_undated_list_and_numbers_are_not_entries() -> None:
    text = "- 3:2 is the ratio\n- 12:345 is no time\n- 2026 was a year\n- plain\n"
    [chunk] = chunk_note(note_of(text), WORDS)
    assert chunk.text == text.rstrip("\n").replace("\n", "\n\n")


def test_long_dated_entry_windows_inside_itself() -> None:
    entry = "- 09:30 " + " ".join(words(f"s{i}w", 5, ".") for i in range(10))
    chunks = chunk_note(note_of(entry + "\n- 10:00 next entry\n"), WORDS, ChunkerParams(20, 4, 10))
    assert chunks[-1].text == "- 10:00 next entry"
    assert all("10:00" not in c.text for c in chunks[:-1])
    assert len(chunks) >= 3


TABLE = "| name | value |\n|---|---|\n" + "\n".join(f"| row{i} r{i}x | {i} |" for i in range(30))


def test_table_split_over_chunks_repeats_its_header() -> None:
    note = note_of("# T\n\n" + TABLE + "\n")
    chunks = chunk_note(note, WORDS, ChunkerParams(target_tokens=40, overlap_tokens=0, min_tokens=0))
    assert len(chunks) >= 3
    rows = []
    for c in chunks:
        lines = c.text.split("\n")
        assert lines[:2] == ["| name | value |", "|---|---|"]
        rows += lines[2:]
        assert c.tokens <= 40
    assert rows == TABLE.split("\n")[2:]  # every row once, in order
    # Line ranges are those of the rows a chunk carries (the repeated header is not where it starts).
    assert chunks[0].start_line == 2
    assert [c.start_line for c in chunks[1:]] == [
        2 + 2 + len(chunks[0].text.split("\n")) - 2 + sum(len(x.text.split("\n")) - 2 for x in chunks[1:i])
        for i in range(1, len(chunks))
    ]
    check_chunks(note, chunks, WORDS, 40)


def test_table_header_with_overlap_is_not_repeated_twice(wordpiece: WordPieceCounter) -> None:
    note = note_of("# T\n\n" + TABLE + "\n")
    chunks = chunk_note(note, WORDS, ChunkerParams(target_tokens=40, overlap_tokens=8, min_tokens=0))
    for c in chunks:
        lines = c.text.split("\n")
        assert lines[:2] == ["| name | value |", "|---|---|"]
        assert lines.count("| name | value |") == 1
    real = chunk_note(note_of("# T\n\n" + REAL_CASES["long table"]), wordpiece)
    assert len(real) > 3
    assert all(c.text.startswith("| name | value | note |\n|---|---|---|\n| row ") for c in real)
    check_chunks(note, chunks, WORDS, 40)


def test_editing_one_section_changes_only_its_chunks(wordpiece: WordPieceCounter) -> None:
    sections = [f"## Part {i}\n\n" + english(30 + 40 * (i % 3), i) + "." for i in range(8)]
    before = chunk_note(note_of("# Doc\n\n" + "\n\n".join(sections)), wordpiece)
    sections[3] = sections[3].replace("memory", "recall", 1)
    after = chunk_note(note_of("# Doc\n\n" + "\n\n".join(sections)), wordpiece)
    changed = {c.text_md5 for c in after} - {c.text_md5 for c in before}
    assert len(changed) == 1  # the chunk-hash cache re-embeds one chunk
    assert len(after) == len(before) == 8


@pytest.mark.parametrize("text", ["", "\n\n", "---\ntitle: x\ntags: [a]\n---\n", "---\ntitle: x\n---\n\n\n"])
def test_notes_without_body_give_no_chunks(text: str) -> None:
    assert chunk_note(note_of(text), WORDS) == []


def test_headings_only_note_is_still_searchable() -> None:
    [chunk] = chunk_note(note_of("# One\n\n## Two\n"), WORDS)
    assert chunk.text == "# One\n\n## Two"
    assert (chunk.start_line, chunk.end_line) == (0, 3)


def test_heading_of_empty_section_is_kept() -> None:
    note = note_of("# Empty Section Title\n\n# Next\n\nbody of next\n")
    chunks = chunk_note(note, WORDS)
    assert any("Empty Section Title" in c.embed_text for c in chunks)


def test_chunk_params_as_dict() -> None:
    assert ChunkerParams().as_dict() == {
        "target_tokens": 256,
        "overlap_tokens": 32,
        "min_tokens": 50,
        "partition": 2,
        "boundaries": 2,
    }


# --- the real all-MiniLM-L6-v2 WordPiece tokenizer --------------------------------------------------------------

ENGLISH = [
    "the",
    "memory",
    "system",
    "stores",
    "notes",
    "as",
    "binary",
    "files",
    "with",
    "embeddings",
    "and",
    "serves",
    "hybrid",
    "search",
    "over",
    "markdown",
    "while",
    "the",
    "language",
    "server",
    "answers",
    "hover",
    "requests",
    "quickly",
    "and",
    "reliably",
]


def english(n: int, seed: int = 0) -> str:
    return " ".join(ENGLISH[(i * 7 + seed) % len(ENGLISH)] for i in range(n))


REAL_CASES = {
    "huge paragraph without punctuation": english(3000),
    "huge single word": "x" * 5000,
    "huge word of punctuated pieces": "-".join("abcdefghij"[i % 10] for i in range(2500)),
    "long code fence": "```python\n"
    + "\n".join(
        f"result_{i} = compute_value(item_{i}, factor={i % 7}, label='row {i}')  # step {i}" for i in range(300)
    )
    + "\n```\n",
    "long table": "| name | value | note |\n|---|---|---|\n"
    + "\n".join(f"| row {i} | {i * 37} | {english(6, i)} |" for i in range(300)),
    "cjk without spaces": "这是一个很长的中文句子没有空格也没有标点符号" * 150,
    "japanese with punctuation": "日本語のテキストはスペースなしで書かれます。" * 150,
    "korean": "한국어 텍스트는 띄어쓰기를 사용합니다 " * 200,
    "nested long headings": "\n\n".join("#" * level + " " + english(60, level) for level in range(1, 7))
    + "\n\n"
    + english(800)
    + "\n",
    "many sentences": " ".join(f"Sentence {i} is about {english(8, i)}." for i in range(150)),
}


REAL_CASE_PARAMS = list(REAL_CASES)


@pytest.mark.parametrize("name", REAL_CASE_PARAMS)
def test_real_tokenizer_chunks_fit_and_count_exactly(name: str, wordpiece: WordPieceCounter) -> None:
    note = note_of(REAL_CASES[name], "memory/2026-11-29.md")
    chunks = chunk_note(note, wordpiece)
    assert chunks
    check_chunks(note, chunks, wordpiece, 256)
    assert uncovered_lines(note, chunks) == []
    # Cross-check with the tokenizer itself, [CLS] and [SEP] included, as the model will see the text.
    tokenizer = Tokenizer.from_file(str(bundled_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    assert [c.tokens for c in chunks] == [len(tokenizer.encode(c.embed_text).ids) for c in chunks]


def test_real_tokenizer_huge_word_is_kept_whole(wordpiece: WordPieceCounter) -> None:
    note = note_of("x" * 5000)
    [chunk] = chunk_note(note, wordpiece)
    assert chunk.text == "x" * 5000
    # BERT maps a word over 100 characters to a single [UNK].
    assert chunk.tokens == SPECIAL_TOKENS + wordpiece.count("n") + 1


def test_real_tokenizer_punctuated_word_is_split_losslessly(wordpiece: WordPieceCounter) -> None:
    text = REAL_CASES["huge word of punctuated pieces"]
    chunks = chunk_note(note_of(text), wordpiece)
    assert len(chunks) > 10
    assert "".join(c.text for c in chunks) == text


def test_real_tokenizer_long_code_fence_chunks_stay_inside_the_fence(wordpiece: WordPieceCounter) -> None:
    note = note_of("# Code\n\n" + REAL_CASES["long code fence"])
    chunks = chunk_note(note, wordpiece)
    assert len(chunks) > 5
    assert all(c.heading_path == ("Code",) for c in chunks)
    assert all(2 <= c.start_line < c.end_line <= 2 + 302 for c in chunks)
    assert chunks[0].start_line == 2 and chunks[-1].end_line == 2 + 302


def test_real_tokenizer_nested_headings_prefix_is_capped(wordpiece: WordPieceCounter) -> None:
    note = note_of(REAL_CASES["nested long headings"])
    chunks = chunk_note(note, wordpiece)
    deepest = [c for c in chunks if len(c.heading_path) == 6]
    assert deepest
    for c in deepest:
        prefix = c.embed_text.split("\n")[0]
        assert prefix.startswith("n > " + english(60, 1)[:40])
        assert wordpiece.count(prefix) <= 256 // 4 + 1


def test_real_tokenizer_heading_prefix(wordpiece: WordPieceCounter) -> None:
    note = note_of("# Project Alpha\n\n## Storage Decision\n\nWe picked SQLite for the cache.\n", "memory/log.md")
    [chunk] = chunk_note(note, wordpiece)
    assert chunk.embed_text == "log > Project Alpha > Storage Decision\nWe picked SQLite for the cache."
    assert chunk.tokens == wordpiece.count(chunk.embed_text) + 2


def test_real_tokenizer_tiny_sections_stay_apart(wordpiece: WordPieceCounter) -> None:
    # Issue 18: these three used to merge into one chunk; each section is now its own.
    note = note_of("# A\n\nShort one.\n\n# B\n\nShort two.\n\n# C\n\nShort three.\n")
    chunks = chunk_note(note, wordpiece)
    assert [(c.text, c.start_line, c.end_line) for c in chunks] == [
        ("Short one.", 2, 3),
        ("Short two.", 6, 7),
        ("Short three.", 10, 11),
    ]


def test_real_tokenizer_overlap_between_paragraph_chunks(wordpiece: WordPieceCounter) -> None:
    sentences = [f"Sentence number {i} talks about memory systems and search quality." for i in range(80)]
    text = "# H\n\n" + "\n\n".join(" ".join(sentences[i : i + 3]) for i in range(0, 80, 3))
    note = note_of(text)
    chunks = chunk_note(note, wordpiece)
    assert len(chunks) >= 3
    check_chunks(note, chunks, wordpiece, 256)
    for a, b in itertools.pairwise(chunks):
        first_sentence = b.text.split(". ")[0]
        assert first_sentence in a.text
        assert b.start_line < a.end_line


def test_real_tokenizer_overlap_within_one_long_paragraph(wordpiece: WordPieceCounter) -> None:
    text = " ".join(f"Sentence number {i} talks about memory systems and search quality." for i in range(80))
    chunks = chunk_note(note_of(text), wordpiece)
    assert len(chunks) >= 3
    for a, b in itertools.pairwise(chunks):
        assert b.text.split(". ")[0] in a.text


def test_real_tokenizer_window_cut_inside_word_stays_within_target(wordpiece: WordPieceCounter) -> None:
    note = note_of(" ".join(["zyxwvutsrq"] * 200))
    chunks = chunk_note(note, wordpiece)
    assert max(wordpiece.count(c.embed_text) + 2 for c in chunks) <= 256


def test_real_tokenizer_tokens_exact_for_long_code_line(wordpiece: WordPieceCounter) -> None:
    note = note_of("```\n" + " ".join(["abcdefghijklmnop."] * 150) + "\n```\n")
    chunks = chunk_note(note, wordpiece)
    assert [c.tokens for c in chunks] == [wordpiece.count(c.embed_text) + 2 for c in chunks]


# --- property tests -----------------------------------------------------------------------------------------

VOCAB = [
    *ENGLISH,
    "API",
    "v2",
    "naïve",
    "Straße",
    "中文",
    "日本語",
    "한국어",
    "x:y",
    "a.b",
    "#tag",
    "`code`",
    "unbelievable",
    "internationalization",
    "42",
    "e.g.",
    "—",
    "(see",
    "below)",
]
SMALL = ChunkerParams(target_tokens=64, overlap_tokens=8, min_tokens=12)


def markdown_lines(min_words: int, max_words: int, vocab: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    sentence = st.lists(vocab, min_size=min_words, max_size=max_words).map(" ".join)
    end = st.sampled_from(["", ".", "!", "?", ";"])
    text = st.builds(lambda s, e: s + e, sentence, end)
    line = st.one_of(
        text,
        st.builds(lambda n, t: "#" * n + " " + t, st.integers(1, 6), text),
        text.map(lambda t: "- " + t),
        text.map(lambda t: "  - " + t),
        text.map(lambda t: "1. " + t),
        text.map(lambda t: "> " + t),
        text.map(lambda t: f"| {t} | x |"),
        st.sampled_from(["", "", "```", "---", "|---|---|", "    indented code"]),
    )
    return st.lists(line, min_size=0, max_size=40).map("\n".join)


def with_frontmatter(body: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(lambda fm, b: fm + b, st.sampled_from(["", "---\ntitle: T\ntags: [a]\n---\n"]), body)


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=with_frontmatter(markdown_lines(1, 8, st.sampled_from(VOCAB))))
def test_property_chunks_fit_and_cover_the_body(text: str) -> None:
    """With every sentence/line under the budget (no token windows), the documented invariants all hold."""
    counter = _wordpiece()
    note = note_of(text)
    chunks = chunk_note(note, counter, SMALL)
    check_chunks(note, chunks, counter, SMALL.target_tokens)
    assert uncovered_lines(note, chunks) == []
    if any(b.kind != "heading" for b in note.blocks):
        assert chunks


# No shrinking: shrinking a failing note through the real tokenizer takes minutes.
@settings(
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    text=markdown_lines(
        40, 120, st.one_of(st.sampled_from(VOCAB), st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=30))
    )
)
def test_property_long_sentences_fit_and_count_exactly(text: str) -> None:
    counter = _wordpiece()
    note = note_of(text)
    chunks = chunk_note(note, counter, SMALL)
    check_chunks(note, chunks, counter, SMALL.target_tokens)
    assert uncovered_lines(note, chunks) == []


_COUNTER: list[WordPieceCounter] = []


def _wordpiece() -> WordPieceCounter:
    # Hypothesis tests cannot take function-scoped fixtures; load the tokenizer once for the module.
    if not _COUNTER:
        _COUNTER.append(WordPieceCounter(bundled_model_path()))
    return _COUNTER[0]
