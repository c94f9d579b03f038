"""Issue 20, item 6: frontmatter tags and aliases come out as the text the user wrote, in every YAML shape
Obsidian and other tools write (YAML 1.1 booleans, dates and numbers, nested lists, comma strings, #tags)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from botbin.parsing.frontmatter import parse_frontmatter
from botbin.service import MemoryService
from botbin.wire.requests import SearchFilters, SearchRequest


@pytest.mark.parametrize(
    ("yaml_text", "tags"),
    [
        ("tags: [yes, no, on, off, y]", ("yes", "no", "on", "off", "y")),
        ("tags: [2024-01-01, 2024-01-01 10:00:00]", ("2024-01-01", "2024-01-01 10:00:00")),
        (
            "tags: [1.10, 010, 0x1F, 1_000, .inf, 12:30, 2024]",
            ("1.10", "010", "0x1F", "1_000", ".inf", "12:30", "2024"),
        ),
        ("tags:\n  - project\n  - [nested, [deeper]]", ("project", "nested", "deeper")),
        ("tags: alpha, beta gamma", ("alpha", "beta", "gamma")),
        ("tags: yes", ("yes",)),
        ("tag: 2024-01-01", ("2024-01-01",)),
        ('tags: ["#quoted", "#a/b"]', ("quoted", "a/b")),
        ("tags: #inbox #todo", ("inbox", "todo")),
        ("tags:\n  - #inbox\n  - later\ntitle: T", ("later", "inbox")),
        ("tags: [a, null, ~, a]", ("a",)),
        ("tags: [work]  # a YAML comment, not a tag", ("work",)),
        ("tags:", ()),
        ("tags: {project: , area: }", ("project", "area")),
    ],
)
def test_tags_are_the_text_the_user_wrote(yaml_text: str, tags: tuple[str, ...]) -> None:
    fm = parse_frontmatter(yaml_text, "note.md")
    assert fm.tags == tags and fm.warnings == ()


@pytest.mark.parametrize(
    ("yaml_text", "aliases"),
    [
        ('aliases: [yes, "Foo, Bar", 2024-01-01]', ("yes", "Foo, Bar", "2024-01-01")),
        ("alias: Foo, Bar", ("Foo", "Bar")),
        ("aliases: [[One, Two], Three]", ("One", "Two", "Three")),
    ],
)
def test_aliases_are_the_text_the_user_wrote(yaml_text: str, aliases: tuple[str, ...]) -> None:
    assert parse_frontmatter(yaml_text, "note.md").aliases == aliases


def test_data_keeps_resolved_values_for_dates_and_filters() -> None:
    fm = parse_frontmatter("date: 2024-01-01\ntags: [yes]\n", "note.md")
    assert fm.data == {"date": "2024-01-01", "tags": [True]} and fm.date == "2024-01-01"


def test_filtering_by_a_yaml_11_tag_finds_the_note(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(
        {
            "memory/a.md": "---\ntags: [yes, 2024-01-01, 1.10, [nested]]\n---\n# A\n\nThe heron nests by the lake.\n",
            "memory/b.md": "---\ntags: other\n---\n# B\n\nThe heron nests by the sea.\n",
        }
    )
    service.sync()
    for tag in ("yes", "2024-01-01", "1.10", "nested"):
        hits = service.search(SearchRequest(query="heron nests", filters=SearchFilters(tag=tag), show_all=True)).hits
        assert {h.path for h in hits} == {"memory/a.md"}, tag
