"""Conflicting directives: opposite rules on the same action, across notes or within one."""

from __future__ import annotations

import json

import pytest

from botbin.directives.conflicts import Conflict, find_conflicts, normalize_action
from botbin.directives.partition import Directive, RuleCue, partition_source


def directives(notes: dict[str, str]) -> list[Directive]:
    """Directives of ``notes`` (path -> text), in the given order."""
    return [d for path, text in notes.items() for d in partition_source(text, path)[1].directives]


def conflicts(notes: dict[str, str]) -> list[Conflict]:
    return find_conflicts(directives(notes))


def pairs(found: list[Conflict]) -> list[tuple[str, str, str]]:
    return [(c.action, c.first.cue.phrase, c.second.cue.phrase) for c in found]


@pytest.mark.parametrize(
    ("first", "second", "action", "do", "dont"),
    [
        ("- Always use tabs.\n", "Never use tabs.\n", "use tabs", "Always use tabs", "Never use tabs"),
        (
            "- Answer in English.\n",
            "- Do not answer in English.\n",
            "answer in english",
            "Answer in English",
            "Do not answer in English",
        ),
        (
            "- Always answer in English.\n",
            "- Don't answer in English.\n",
            "answer in english",
            "Always answer in English",
            "Don't answer in English",
        ),
        ("- Push to main.\n", "- Avoid pushing to main.\n", "push main", "Push to main", "Avoid pushing to main"),
        ("- You may use tabs.\n", "- You must not use tabs.\n", "use tabs", "You may use tabs", "must not use tabs"),
        (
            "- Don't forget to use tabs.\n",
            "- Never use tabs.\n",
            "use tabs",
            "Don't forget to use tabs",
            "Never use tabs",
        ),
        ("- ALWAYS use tabs\n", "- Never use Tabs!\n", "use tabs", "ALWAYS use tabs", "Never use Tabs"),
    ],
)
def test_opposite_rules_across_two_notes(first: str, second: str, action: str, do: str, dont: str) -> None:
    found = conflicts({"AGENTS.md": first, "memory/style.md": second})
    assert pairs(found) == [(action, do, dont)]
    (c,) = found
    assert (c.first.directive.path, c.second.directive.path) == ("AGENTS.md", "memory/style.md")
    assert c.first.cue.positive and not c.second.cue.positive


def test_the_rule_that_says_do_comes_first_whatever_the_order() -> None:
    (c,) = conflicts({"AGENTS.md": "- Never use tabs.\n", "CLAUDE.md": "- Always use tabs.\n"})
    assert (c.first.directive.path, c.second.directive.path) == ("CLAUDE.md", "AGENTS.md")


def test_avoid_using_conflicts_with_use() -> None:
    assert normalize_action("using globals.") == ("use", "globals")
    found = conflicts({"AGENTS.md": "- Avoid using globals.\n", "CLAUDE.md": "- Use globals.\n"})
    assert pairs(found) == [("use globals", "Use globals", "Avoid using globals")]


def test_comma_after_the_cue_keeps_the_action() -> None:
    found = conflicts({"AGENTS.md": "- Always use tabs.\n", "CLAUDE.md": "- Never, ever use tabs.\n"})
    assert [c.action for c in found] == ["use tabs"]


def test_within_one_note_and_one_block() -> None:
    found = conflicts({"AGENTS.md": "# Rules\n\n- Always use tabs.\n- Never use tabs.\n"})
    assert [(c.first.cue.line, c.second.cue.line) for c in found] == [(2, 3)]
    (same_line,) = conflicts({"AGENTS.md": "- Always use tabs. Never use tabs.\n"})
    assert same_line.first.directive is same_line.second.directive


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("- Always use tabs.\n", "- Use tabs.\n"),  # same polarity
        ("- Never use tabs.\n", "- Do not use tabs.\n"),
        ("- You may use tabs.\n", "- You can use tabs.\n"),  # permission vs permission
        ("- You may use tabs.\n", "- You don't have to use tabs.\n"),
        ("- Feel free to use tabs.\n", "- You are not required to use tabs.\n"),
        ("- Always use tabs.\n", "- Never use tabs in YAML files.\n"),  # a qualified rule is an exception
        ("- Never use tabs in YAML files.\n", "- Always use tabs.\n"),
        ("- Always use tabs.\n", "- Never use spaces.\n"),  # another action
        ("- Always use tabs.\n", "We never used tabs in 2020.\n"),  # history, not a rule
    ],
)
def test_no_conflict(first: str, second: str) -> None:
    assert conflicts({"AGENTS.md": first, "CLAUDE.md": second}) == []


def test_lore_never_conflicts() -> None:
    notes = {"AGENTS.md": "- Always use tabs.\n", "memory/x.md": "```\nnever use tabs\n```\n\n> `never use tabs`\n"}
    assert conflicts(notes) == []


def test_describe_names_both_paths_with_1_based_lines() -> None:
    (c,) = conflicts({"AGENTS.md": "# Style\n\n- Always use tabs.\n", "docs/style.md": "# Style\n\nNever use tabs.\n"})
    assert c.describe() == '"Always use tabs" (AGENTS.md:3) conflicts with "Never use tabs" (docs/style.md:3)'


def test_to_dict_shape() -> None:
    (c,) = conflicts({"AGENTS.md": "# Style\n\n- Always use tabs.\n", "docs/style.md": "# Style\n\nNever use tabs.\n"})
    d = c.to_dict()
    assert d == {
        "action": "use tabs",
        "message": c.describe(),
        "first": {
            "path": "AGENTS.md",
            "line": 2,
            "kind": "hard",
            "modality": "obligation",
            "cue": "Always",
            "text": "Always use tabs",
        },
        "second": {
            "path": "docs/style.md",
            "line": 2,
            "kind": "soft",
            "modality": "prohibition",
            "cue": "Never",
            "text": "Never use tabs",
        },
    }
    assert json.loads(json.dumps(d)) == d


def test_conflicts_are_sorted_by_the_first_rule() -> None:
    notes = {"b.md": "Never push to main.\n\nNever use tabs.\n", "AGENTS.md": "- Use tabs.\n- Push to main.\n"}
    found = conflicts(notes)
    assert [(c.action, c.first.cue.line, c.second.cue.line) for c in found] == [("use tabs", 0, 2), ("push main", 1, 0)]


def test_each_pair_is_reported_once() -> None:
    notes = {"AGENTS.md": "- Always use tabs.\n", "a.md": "Never use tabs.\n", "b.md": "Do not use tabs.\n"}
    found = conflicts(notes)
    assert sorted((c.first.directive.path, c.second.directive.path) for c in found) == [
        ("AGENTS.md", "a.md"),
        ("AGENTS.md", "b.md"),
    ]


@pytest.mark.parametrize(
    ("action", "words"),
    [
        ("use tabs.", ("use", "tabs")),
        ("Use TABS for indentation, except in Makefiles.", ("use", "tabs", "for", "indentation")),
        ("to always push to the main branch", ("push", "main", "branch")),
        ("pushing to main", ("push", "main")),
        ("committing secrets; ever", ("commit", "secrets")),
        ("answer in English (the customer's language)", ("answer", "in", "english")),
        ("deploy - unless approved", ("deploy",)),
        (
            "one two three four five six seven eight nine ten",
            ("one", "two", "three", "four", "five", "six", "seven", "eight"),
        ),
        ("", ()),
        (", ever", ()),
    ],
)
def test_normalize_action(action: str, words: tuple[str, ...]) -> None:
    assert normalize_action(action) == words


def test_rule_phrase() -> None:
    assert RuleCue("prohibition", "Never", 0, False, "push to main.").phrase == "Never push to main"
    assert RuleCue("obligation", "Use", 0, True, "Use tabs!").phrase == "Use tabs"
    assert RuleCue("obligation", "use", 0, True, "Use tabs;").phrase == "Use tabs"
