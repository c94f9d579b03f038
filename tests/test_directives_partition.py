"""Partition of a note into hard, soft and lore blocks; its directives; the (path, hash) cache."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, SupportsIndex

import pytest

from botbin.directives.partition import (
    Directive,
    Partition,
    is_instruction_note,
    partition_note,
    partition_source,
)
from botbin.parsing import parse_note

WORKSPACE = Path(__file__).parent / "fixtures" / "directives" / "workspace"
MEMORY = (WORKSPACE / "AGENTS.md").read_text(encoding="utf-8")  # MEMORY.md until issue 19 made it memory

BODY = """# Project

Some background about the project. It started in 2020.

## Rules

- Always use tabs.
- Dates are ISO 8601
- Never push to main.

> Prefer small commits.

Run the linter before pushing.

```
never do this
```
"""
#: (block kind, kind in an instruction note, kind in an ordinary note) for each block of BODY.
BODY_KINDS = [
    ("heading", "lore", "lore"),
    ("paragraph", "lore", "lore"),
    ("heading", "lore", "lore"),
    ("list_item", "hard", "soft"),
    ("list_item", "hard", "lore"),  # no cue: a rule only in an instruction note
    ("list_item", "hard", "soft"),
    ("quote", "soft", "lore"),  # advice ("Prefer ...") is a rule only in an instruction note (issue 19)
    ("paragraph", "soft", "lore"),  # a bare imperative is a step for a reader outside instruction notes
    ("code", "lore", "lore"),
]


def part(text: str, path: str) -> Partition:
    return partition_note(parse_note(text, path), text)


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("MEMORY.md", "x\n", False),  # Bot-BIN's curated memory, not instructions (issue 19)
        ("AGENTS.md", "x\n", True),
        ("docs/AGENTS.md", "x\n", True),
        ("a/b/c/CLAUDE.md", "x\n", True),
        ("agents.md", "x\n", True),
        ("Claude.MD", "x\n", True),
        ("memory/2026-11-03.md", "x\n", False),
        ("notes/agents-notes.md", "x\n", False),
        ("MEMORY.md.bak.md", "x\n", False),
        ("notes/rules.md", "---\nbotbin: instructions\n---\nx\n", True),
        ("notes/rules.md", "---\nbotbin: [instructions, pinned]\n---\nx\n", True),
        ("notes/rules.md", "---\nbotbin: other\n---\nx\n", False),
        ("notes/rules.md", "---\ntags: [instructions]\n---\nx\n", False),
    ],
)
def test_instruction_note_detection(path: str, text: str, expected: bool) -> None:
    note = parse_note(text, path)
    assert is_instruction_note(note) is expected
    assert part(text, path).instruction is expected


@pytest.mark.parametrize("path", ["AGENTS.md", "docs/AGENTS.md", "CLAUDE.md"])
def test_kinds_in_an_instruction_note(path: str) -> None:
    note = parse_note(BODY, path)
    p = partition_note(note, BODY)
    assert [b.kind for b in note.blocks] == [k for k, _, _ in BODY_KINDS]
    assert list(p.kinds) == [k for _, k, _ in BODY_KINDS]
    assert [(d.kind, d.start_line) for d in p.directives] == [
        ("hard", 6),
        ("hard", 7),
        ("hard", 8),
        ("soft", 10),
        ("soft", 12),
    ]


def test_kinds_in_an_ordinary_note_follow_the_lexer_only() -> None:
    p = part(BODY, "memory/2026-11-03.md")
    assert not p.instruction
    assert list(p.kinds) == [k for _, _, k in BODY_KINDS]
    assert all(d.kind == "soft" and d.cues for d in p.directives)


def test_ordinary_note_lore_without_cues() -> None:
    p = part("# Log\n\n- Dana owns the export job\n- The CSV had a BOM\n\nWe fixed it on Monday.\n", "memory/log.md")
    assert set(p.kinds) == {"lore"} and p.directives == ()


def test_hard_rule_without_a_cue_has_no_modality() -> None:
    (dates,) = [d for d in part(BODY, "AGENTS.md").directives if "ISO" in d.text]
    assert (dates.kind, dates.cues, dates.modality) == ("hard", (), None)


def test_directives_carry_text_heading_path_and_cues() -> None:
    first = part(BODY, "AGENTS.md").directives[0]
    assert first.path == "AGENTS.md" and first.text == "- Always use tabs."
    assert (first.start_line, first.end_line, first.heading_path) == (6, 7, ("Project", "Rules"))
    (cue,) = first.cues
    assert (cue.modality, cue.cue, cue.line, cue.positive, cue.action) == ("obligation", "Always", 6, True, "use tabs.")
    assert first.modality == "obligation"


def test_cue_lines_are_0_based_note_lines() -> None:
    text = (
        "# Rules\n\n- Commits:\n  - Never push to main.\n  - Sign every commit.\n- Keep PRs small. Always\n"
        "  write a description.\n\n> First line of the quote.\n> You must never share keys.\n\n"
        "Background. The deploy runs nightly.\nNever deploy on Fridays.\n"
    )
    lines = text.split("\n")
    p = part(text, "AGENTS.md")
    cues = [c for d in p.directives for c in d.cues]
    assert [(c.cue, c.line) for c in cues] == [
        ("Never", 3),
        ("Sign", 4),
        ("Keep", 5),
        ("Always", 5),
        ("must never", 9),
        ("Never", 12),
    ]
    for c in cues:
        assert c.cue in lines[c.line]
    assert [d.kind for d in p.directives] == ["hard", "hard", "soft", "soft"]


def test_fixture_memory_note() -> None:
    note, p = partition_source(MEMORY, "AGENTS.md")  # the fixture read as an instruction note
    lines = MEMORY.split("\n")
    by_line = {d.start_line: d for d in p.directives}
    assert {n: (d.kind, d.modality) for n, d in by_line.items()} == {
        11: ("hard", "obligation"),
        12: ("hard", "prohibition"),
        13: ("hard", None),
        15: ("soft", "recommendation"),
        17: ("soft", "obligation"),
    }
    for d in p.directives:
        assert d.text == "\n".join(lines[d.start_line : d.end_line])
    # frontmatter of only title and tags is metadata, not a rule; the background paragraph and code are lore
    assert all(d.start_line > 4 for d in p.directives)
    lore = [b.kind for b, k in zip(note.blocks, p.kinds, strict=True) if k == "lore"]
    assert lore == ["heading", "paragraph", "heading", "code"]


@pytest.mark.parametrize(
    ("path", "frontmatter", "hard"),
    [
        ("AGENTS.md", "indent: tabs\nlanguage: en\n", True),
        ("notes/rules.md", "botbin: instructions\nindent: tabs\n", True),
        ("AGENTS.md", "title: Rules\ntags: [a, b]\naliases: [r]\ndate: 2026-11-03\n", False),
        ("notes/rules.md", "botbin: instructions\ntitle: Rules\ndescription: house rules\n", False),
        ("notes/plain.md", "indent: tabs\n", False),  # not an instruction note
    ],
)
def test_frontmatter_is_hard_only_with_non_meta_keys(path: str, frontmatter: str, hard: bool) -> None:
    text = f"---\n{frontmatter}---\n# Rules\n\n- Use tabs.\n"
    p = part(text, path)
    fm = [d for d in p.directives if d.start_line == 0]
    n = frontmatter.count("\n") + 2
    if hard:
        (d,) = fm
        assert (d.kind, d.start_line, d.end_line, d.cues, d.heading_path) == ("hard", 0, n, (), ())
        assert d.text == "\n".join(text.split("\n")[:n])
        assert p.directives[0] is d  # first, before the body's rules
    else:
        assert fm == []


def test_frontmatter_needs_the_source_text() -> None:
    text = "---\nindent: tabs\n---\n- Use tabs.\n"
    note = parse_note(text, "AGENTS.md")
    assert [d.start_line for d in partition_note(note).directives] == [3]
    assert [d.start_line for d in partition_note(note, text).directives] == [0, 3]


def test_partition_is_deterministic() -> None:
    note = parse_note(MEMORY, "MEMORY.md")
    assert partition_note(note, MEMORY) == partition_note(note, MEMORY)


@pytest.mark.parametrize("text", ["", "\n", "---\n---\n", "```\n- never\n", "> \n>\n", "-\n-\n", "#\n", "| a |\n|-|\n"])
def test_odd_notes_never_raise(text: str) -> None:
    for path in ("MEMORY.md", "memory/x.md"):
        p = part(text, path)
        assert len(p.kinds) == len(parse_note(text, path).blocks)


# -- to_dict / from_dict ------------------------------------------------------------------------------------


def test_to_dict_from_dict_round_trip() -> None:
    directives = [*part(BODY, "AGENTS.md").directives, *part("---\nindent: tabs\n---\nx\n", "CLAUDE.md").directives]
    assert len(directives) == 6
    for d in directives:
        raw = d.to_dict()
        assert set(raw) == {"kind", "text", "start_line", "end_line", "heading_path", "cues"}
        assert all(set(c) == {"modality", "cue", "line", "positive", "action"} for c in raw["cues"])
        assert Directive.from_dict(d.path, raw) == d


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "garbage",
        3,
        [],
        {},
        {"kind": "hard"},
        {"cues": "abc"},
        {"cues": None},
        {"kind": "hard", "text": "t", "start_line": "x", "end_line": 1, "heading_path": [], "cues": []},
        {
            "kind": "hard",
            "text": "t",
            "start_line": 0,
            "end_line": 1,
            "heading_path": [],
            "cues": [{"modality": "obligation", "cue": "Use", "line": "two", "positive": True, "action": "a"}],
        },
        {"kind": "hard", "text": "t", "start_line": 0, "end_line": 1, "heading_path": [], "cues": [{"modality": "x"}]},
    ],
)
def test_from_dict_of_garbage_is_none(raw: Any) -> None:
    assert Directive.from_dict("a.md", raw) is None


# -- partition_source cache -----------------------------------------------------------------------------


def test_partition_source_caches_by_path_and_text() -> None:
    text = "# Rules\n\n- Never push to main, said the cache test.\n"
    first = partition_source(text, "AGENTS.md")
    assert partition_source(text, "AGENTS.md") is first
    copy = "".join(list(text))
    assert copy is not text and partition_source(copy, "AGENTS.md") is first  # keyed by content, not identity
    edited = partition_source(text.replace("main", "master"), "AGENTS.md")
    assert edited is not first and edited[1].directives[0].text.endswith("master, said the cache test.")
    other_path = partition_source(text, "memory/x.md")
    assert other_path is not first and not other_path[1].instruction
    assert partition_source(text, "AGENTS.md") is first  # still cached after the others


def test_partition_source_matches_partition_note() -> None:
    note, p = partition_source(MEMORY, "MEMORY.md")
    assert note == parse_note(MEMORY, "MEMORY.md")
    assert p == partition_note(note, MEMORY)


def test_partition_source_accepts_lone_surrogates() -> None:
    _, p = partition_source("- Never push \udc80 to main.\n", "AGENTS.md")
    assert p.kinds == ("hard",)


class _CountingText(str):
    """A block text that adds up the characters its ``count`` calls scan (for a cost test without timing)."""

    scanned = 0

    def count(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        lo = 0 if start is None else int(start)
        hi = len(self) if end is None else int(end)
        _CountingText.scanned += max(0, hi - lo)
        return super().count(sub, start, end)


def test_cue_lines_cost_is_linear_in_the_block() -> None:
    text = "Never use tabs.\n" * 2000  # one paragraph block, 2,000 cues
    note = parse_note(text, "memory/log.md")
    (block,) = note.blocks
    counted = replace(note, blocks=(replace(block, text=_CountingText(block.text)),))
    _CountingText.scanned = 0
    p = partition_note(counted, text)
    assert len(p.directives[0].cues) == 2000
    assert _CountingText.scanned <= 2 * len(text), f"scanned {_CountingText.scanned:,} characters for {len(text):,}"


def test_fixture_memory_note_is_ordinary() -> None:
    """MEMORY.md is curated memory: only its explicit obligations and prohibitions are (soft) rules."""
    _, p = partition_source(MEMORY, "MEMORY.md")
    assert not p.instruction
    assert [(d.start_line, d.kind, d.modality) for d in p.directives] == [
        (11, "soft", "obligation"),
        (12, "soft", "prohibition"),
    ]
