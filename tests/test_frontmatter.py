"""Tests for botbin.parsing.frontmatter: YAML -> plain metadata, tags, aliases, title, date, warnings."""

from __future__ import annotations

import datetime as dt
import json

import msgpack
import pytest

from botbin.parsing.frontmatter import FrontMatter, parse_frontmatter, to_plain


def test_none_and_blank_give_empty_metadata() -> None:
    assert parse_frontmatter(None, "a.md") == FrontMatter()
    assert parse_frontmatter("  \n\n", "a.md") == FrontMatter()


def test_yaml_dates_become_iso_strings() -> None:
    fm = parse_frontmatter("date: 2026-11-29\nwhen: 2026-11-29T10:30:00Z\nlocal: 2026-11-29 08:00:00\n", "a.md")
    assert fm.data == {
        "date": "2026-11-29",
        "when": "2026-11-29T10:30:00+00:00",
        "local": "2026-11-29T08:00:00",
    }
    assert fm.date == "2026-11-29"


def test_non_string_keys_become_strings() -> None:
    fm = parse_frontmatter("3: three\n2.5: half\n2026-01-01: day\nfalse: no\n", "a.md")
    assert fm.data == {"3": "three", "2.5": "half", "2026-01-01": "day", "False": False}
    assert all(isinstance(k, str) for k in fm.data)


def test_nested_data_is_plain_and_serialisable() -> None:
    yaml_text = "project:\n  name: botbin\n  started: 2026-01-02\n  people: [ann, {name: bo, since: 2025-05-06}]\n"
    fm = parse_frontmatter(yaml_text, "a.md")
    assert fm.data == {
        "project": {
            "name": "botbin",
            "started": "2026-01-02",
            "people": ["ann", {"name": "bo", "since": "2025-05-06"}],
        },
    }
    # Whatever the frontmatter holds must go into AIF-BIN metadata (MessagePack) and the state file (JSON).
    assert msgpack.unpackb(msgpack.packb(fm.data), strict_map_key=True) == fm.data
    assert json.loads(json.dumps(fm.data)) == fm.data


def test_huge_integers_are_messagepack_safe() -> None:
    fm = parse_frontmatter("id: 123456789012345678901234567890\nneg: -9223372036854775809\n", "a.md")
    assert msgpack.unpackb(msgpack.packb(fm.data)) == fm.data


def test_to_plain_handles_python_values() -> None:
    value: dict[object, object] = {1: (dt.date(2026, 1, 2), dt.time(3, 4)), "s": {b"x"}, "f": frozenset(), "n": None}
    assert to_plain(value) == {"1": ["2026-01-02", "03:04:00"], "s": ["x"], "f": [], "n": None}


def test_binary_yaml_value_becomes_text() -> None:
    assert parse_frontmatter("a: !!binary aGVsbG8=\n", "a.md").data == {"a": "hello"}


@pytest.mark.parametrize(
    ("yaml_text", "tags"),
    [
        ("tags: [alpha, beta]", ("alpha", "beta")),
        ("tags:\n  - alpha\n  - '#beta'\n", ("alpha", "beta")),
        ("tags: alpha, beta,#gamma", ("alpha", "beta", "gamma")),
        ("tags: '#alpha #beta  gamma'", ("alpha", "beta", "gamma")),
        ("tags: project/sub", ("project/sub",)),
        ("tag: solo", ("solo",)),
        ("tags: [a, b, a, '#a']", ("a", "b")),
        ("tags: [1, 2026]", ("1", "2026")),
        ("tags:", ()),
        ("tags: ''", ()),
    ],
)
def test_tags(yaml_text: str, tags: tuple[str, ...]) -> None:
    fm = parse_frontmatter(yaml_text, "a.md")
    assert fm.tags == tags
    assert fm.warnings == ()


def test_tags_key_wins_over_tag() -> None:
    assert parse_frontmatter("tags: [a]\ntag: b\n", "a.md").tags == ("a",)


@pytest.mark.parametrize(
    ("yaml_text", "aliases"),
    [
        ("aliases: [One, Two]", ("One", "Two")),
        ("aliases: One, Two Words", ("One", "Two Words")),
        ("alias: Solo Name", ("Solo Name",)),
        ("aliases:\n  - First Name\n  - First Name\n", ("First Name",)),
    ],
)
def test_aliases(yaml_text: str, aliases: tuple[str, ...]) -> None:
    assert parse_frontmatter(yaml_text, "a.md").aliases == aliases


@pytest.mark.parametrize(
    ("yaml_text", "title"),
    [("title: My Note", "My Note"), ("title: 5", None), ("title: '   '", None), ("other: x", None)],
)
def test_title(yaml_text: str, title: str | None) -> None:
    assert parse_frontmatter(yaml_text, "a.md").title == title


@pytest.mark.parametrize(
    ("yaml_text", "path", "date"),
    [
        ("date: 2026-01-05", "memory/2026-11-29.md", "2026-01-05"),
        ("created: 2026-01-05", "memory/2026-11-29.md", "2026-01-05"),
        ("date: 2026-01-05\ncreated: 2020-02-02", "x.md", "2026-01-05"),
        ("date: 2026-01-05T10:00:00", "x.md", "2026-01-05T10:00:00"),
        ("title: x", "memory/2026-11-29.md", "2026-11-29"),
        ("title: x", "memory/log 2026-11-29 notes.md", "2026-11-29"),
        ("date: someday", "memory/2026-11-29.md", "2026-11-29"),
        ("title: x", "2026-01-01/notes.md", None),
        ("date: hello", "x.md", None),
    ],
)
def test_note_date_from_key_or_filename(yaml_text: str, path: str, date: str | None) -> None:
    assert parse_frontmatter(yaml_text, path).date == date


def test_date_from_filename_without_frontmatter() -> None:
    assert parse_frontmatter(None, "memory/2026-11-29.md").date == "2026-11-29"


def test_malformed_yaml_gives_warning_with_file_and_line() -> None:
    # The opening fence is line 0 of the note, so the second YAML line ("b: : :") is line 3 of the file (1-based).
    fm = parse_frontmatter("a: 1\nb: : :\nc: 3\n", "memory/bad.md", first_line=0)
    assert fm.data == {}
    assert fm.tags == ()
    assert fm.title is None
    assert len(fm.warnings) == 1
    assert fm.warnings[0].startswith("memory/bad.md:3: malformed YAML")


def test_malformed_yaml_line_follows_first_line() -> None:
    fm = parse_frontmatter("a: [1, 2\nb: 3\n", "n.md", first_line=4)
    assert fm.warnings[0].startswith("n.md:7: ")


def test_malformed_yaml_keeps_date_from_filename() -> None:
    fm = parse_frontmatter("a: [\n", "memory/2026-11-29.md")
    assert fm.data == {}
    assert fm.date == "2026-11-29"
    assert len(fm.warnings) == 1


def test_unsafe_yaml_tag_is_refused_with_a_warning() -> None:
    fm = parse_frontmatter("a: !!python/object/apply:os.system ['echo hi']\n", "n.md")
    assert fm.data == {}
    assert len(fm.warnings) == 1
    assert fm.warnings[0].startswith("n.md:")


@pytest.mark.parametrize(("yaml_text", "type_name"), [("- a\n- b\n", "list"), ("just text", "str"), ("42", "int")])
def test_non_mapping_yaml_is_ignored_with_warning(yaml_text: str, type_name: str) -> None:
    fm = parse_frontmatter(yaml_text, "memory/odd.md", first_line=0)
    assert fm.data == {}
    assert fm.tags == ()
    assert fm.warnings == (f"memory/odd.md:1: frontmatter is a {type_name}, not a mapping; ignored",)


def test_impossible_date_is_a_warning_not_a_crash() -> None:
    fm = parse_frontmatter("date: 2026-13-45\ntitle: x\n", "memory/a.md")
    assert fm.data == {}
    assert len(fm.warnings) == 1
    assert fm.warnings[0].startswith("memory/a.md:")


def test_recursive_alias_is_cut_off_not_a_crash() -> None:
    fm = parse_frontmatter("a: &x [*x]\nb: 1\n", "memory/a.md")
    assert fm.data["b"] == 1
    depth, node = 0, fm.data["a"]
    while isinstance(node, list):
        depth, node = depth + 1, node[0]
    assert node == "…" and depth == 32
    assert msgpack.unpackb(msgpack.packb(fm.data)) == fm.data
