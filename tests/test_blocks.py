"""Tests for botbin.parsing.blocks: markdown -> top-level blocks with line ranges, heading paths and #tags."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from botbin.parsing.blocks import Block, ParsedNote, parse_note
from botbin.parsing.text import decode_note

FIXTURES = Path(__file__).parent / "fixtures" / "parsing"


def load(name: str, transform: bytes | None = None) -> tuple[ParsedNote, list[str]]:
    """Parse fixture ``name`` through decode_note, as sync does; return the note and its LF lines."""
    data = transform if transform is not None else (FIXTURES / name).read_bytes()
    text = decode_note(data, name).text
    return parse_note(text, name), text.split("\n")


def shape(note: ParsedNote) -> list[tuple[str, int, int, tuple[str, ...]]]:
    return [(b.kind, b.start_line, b.end_line, b.heading_path) for b in note.blocks]


STRUCTURE = [
    ("paragraph", 5, 7, ()),
    ("heading", 8, 9, ("Project Alpha",)),
    ("paragraph", 10, 11, ("Project Alpha",)),
    ("list_item", 12, 14, ("Project Alpha",)),
    ("list_item", 14, 16, ("Project Alpha",)),
    ("list_item", 17, 18, ("Project Alpha",)),
    ("list_item", 19, 20, ("Project Alpha",)),
    ("list_item", 20, 21, ("Project Alpha",)),
    ("heading", 22, 23, ("Project Alpha", "Decisions")),
    ("code", 24, 29, ("Project Alpha", "Decisions")),
    ("table", 30, 33, ("Project Alpha", "Decisions")),
    ("quote", 34, 36, ("Project Alpha", "Decisions")),
    ("heading", 37, 38, ("Project Alpha", "Decisions", "Deep Dive")),
    ("html", 39, 40, ("Project Alpha", "Decisions", "Deep Dive")),
    ("heading", 41, 43, ("Project Alpha", "Setext Heading")),
    ("code", 44, 46, ("Project Alpha", "Setext Heading")),
    ("heading", 47, 48, ("Project Beta",)),
    ("paragraph", 49, 50, ("Project Beta",)),
]


def test_structure_blocks_kinds_lines_and_heading_paths() -> None:
    note, lines = load("structure.md")
    assert shape(note) == STRUCTURE
    assert note.line_count == len(lines) == 51
    assert note.warnings == ()


@pytest.mark.parametrize("name", ["structure.md", "tags.md", "headings_only.md"])
def test_block_text_is_exactly_its_source_lines(name: str) -> None:
    note, lines = load(name)
    assert note.blocks
    for block in note.blocks:
        assert 0 <= block.start_line < block.end_line <= len(lines)
        assert block.text == "\n".join(lines[block.start_line : block.end_line])
        # Trailing blank lines are trimmed, so the last line of the range has content.
        assert lines[block.end_line - 1].strip()


def test_blocks_are_in_source_order_and_do_not_overlap() -> None:
    note, _ = load("structure.md")
    for a, b in itertools.pairwise(note.blocks):
        assert a.end_line <= b.start_line


def test_frontmatter_is_metadata_not_a_block() -> None:
    note, lines = load("structure.md")
    assert lines[0] == "---" and lines[4] == "---"
    assert note.blocks[0].start_line == 5
    for block in note.blocks:
        assert "title: Structure Sample" not in block.text
        assert "tags: [sample, parsing]" not in block.text
    fm = note.frontmatter
    assert fm.title == "Structure Sample"
    assert fm.date == "2026-11-29"
    assert fm.data == {"title": "Structure Sample", "tags": ["sample", "parsing"], "date": "2026-11-29"}
    assert fm.tags == ("sample", "parsing")
    assert note.title == "Structure Sample"


def test_heading_inside_code_fence_stays_code() -> None:
    note, _ = load("structure.md")
    code = next(b for b in note.blocks if b.kind == "code")
    assert "# not a heading, just a comment" in code.text
    assert code.text.startswith("```python\n") and code.text.endswith("\n```")
    assert all("not a heading" not in h for b in note.blocks for h in b.heading_path)
    assert [b.text for b in note.blocks if b.kind == "heading"] == [
        "# Project Alpha",
        "## Decisions",
        "### Deep Dive",
        "Setext Heading\n--------------",
        "# Project Beta",
    ]


def test_one_block_per_top_level_list_item_nested_items_stay_inside() -> None:
    note, _ = load("structure.md")
    items = [b.text for b in note.blocks if b.kind == "list_item"]
    assert items == [
        "- first item\n  continued on a second line",
        "- second item\n  - nested under the second",
        "- third item after a blank line",
        "1. ordered one",
        "2. ordered two",
    ]


def test_heading_path_pops_to_the_right_level() -> None:
    note = parse_note("# A\n\n### C\n\nc\n\n## B\n\nb\n\n# D\n\nd\n", "n.md")
    paths = [(b.kind, b.heading_path) for b in note.blocks]
    assert paths == [
        ("heading", ("A",)),
        ("heading", ("A", "C")),
        ("paragraph", ("A", "C")),
        ("heading", ("A", "B")),
        ("paragraph", ("A", "B")),
        ("heading", ("D",)),
        ("paragraph", ("D",)),
    ]


def test_heading_text_drops_markers_and_closing_hashes() -> None:
    note = parse_note("##   Spaced Out   ##\n", "n.md")
    assert note.blocks == (Block("heading", "##   Spaced Out   ##", 0, 1, ("Spaced Out",)),)


def test_heading_inside_quote_is_part_of_the_quote() -> None:
    note = parse_note("> # Quoted\n> text\n", "n.md")
    assert shape(note) == [("quote", 0, 2, ())]


@pytest.mark.parametrize("name", ["frontmatter_only.md", "empty.md", "blank.md"])
def test_notes_without_body_have_no_blocks(name: str) -> None:
    note, lines = load(name)
    assert note.blocks == ()
    assert note.line_count == len(lines)


def test_frontmatter_only_keeps_its_metadata() -> None:
    note, _ = load("frontmatter_only.md")
    assert note.frontmatter.title == "Only Metadata"
    assert note.frontmatter.tags == ("meta",)


def test_crlf_and_bom_before_frontmatter() -> None:
    lf = (FIXTURES / "structure.md").read_bytes()
    crlf = b"\xef\xbb\xbf" + lf.replace(b"\n", b"\r\n")
    note, _ = load("structure.md", transform=crlf)
    assert shape(note) == STRUCTURE
    assert note.frontmatter.title == "Structure Sample"
    assert all("\r" not in b.text for b in note.blocks)


def test_lone_cr_line_endings() -> None:
    note, lines = load("x.md", transform=b"---\rtitle: CR\r---\r# H\r\rbody\r")
    assert note.frontmatter.title == "CR"
    assert shape(note) == [("heading", 3, 4, ("H",)), ("paragraph", 5, 6, ("H",))]
    assert lines[5] == "body"


def test_frontmatter_must_start_on_the_first_line() -> None:
    # Leading blank lines mean the dashes are markdown (a thematic break), not frontmatter.
    note = parse_note("\n---\ntitle: x\n---\nbody\n", "n.md")
    assert note.frontmatter.data == {}
    assert any("title: x" in b.text for b in note.blocks)


def test_malformed_frontmatter_warns_with_line_and_body_is_still_parsed() -> None:
    note = parse_note("---\ntitle: ok\nbad: [\n---\n# H\n\nbody\n", "memory/m.md")
    assert note.frontmatter.data == {}
    assert len(note.warnings) == 1
    assert note.warnings[0].startswith("memory/m.md:3: malformed YAML")
    assert note.warnings == note.frontmatter.warnings
    assert shape(note) == [("heading", 4, 5, ("H",)), ("paragraph", 6, 7, ("H",))]


def test_inline_tags_collected_after_frontmatter_tags() -> None:
    note, _ = load("tags.md")
    assert note.frontmatter.tags == (
        "front",
        "inline",
        "nested/child",
        "with-dash_and_underscore",
        "listtag",
        "quotetag",
        "tabletag",
    )


@pytest.mark.parametrize(
    "text",
    [
        "number #123 only",
        "link [[#Some Heading]] here",
        "link [[Other Note#Section]] here",
        "word x#y inside",
        "url https://example.com/#frag here",
        "paren (#paren) here",
        "entity &#39; here",
        "```\n#fenced\n```",
        "    #indented",
        "<div>#html</div>",
    ],
)
def test_not_inline_tags(text: str) -> None:
    assert parse_note(text, "n.md").frontmatter.tags == ()


def test_digit_leading_tag_with_letters_is_a_tag() -> None:
    assert parse_note("#1st and #v2 and #2026\n", "n.md").frontmatter.tags == ("1st", "v2")


def test_unicode_inline_tags() -> None:
    assert parse_note("Tags #café and #日本\n", "n.md").frontmatter.tags == ("café", "日本")


def test_no_inline_tag_from_inline_code() -> None:
    assert parse_note("Run `git checkout #main` now.\n", "n.md").frontmatter.tags == ()


def test_title_falls_back_to_file_name() -> None:
    assert parse_note("body", "memory/2026-11-29.md").title == "2026-11-29"
    assert parse_note("body", "Notes/Plan.MD").title == "Plan"
    assert parse_note("body", "README").title == "README"
