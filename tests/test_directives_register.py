"""What counts as a rule (issue 19): the ordinary register (register.py), the addressee (addressee.py), the
instruction-note globs, and the precision/recall gates of the per-register labeled sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from botbin.config import load_settings
from botbin.directives.evaluate import evaluate, load_labeled
from botbin.directives.lexer import classify, lex
from botbin.directives.partition import is_instruction_path, partition_note
from botbin.parsing import parse_note

LABELED = Path(__file__).parent / "fixtures" / "directives"


@pytest.mark.parametrize(
    "text",
    [
        "Click **Settings** in the lower left corner.",
        "1. Press Ctrl+P to open the command palette.",
        "Select **Community plugins**, then **Browse**.",
        "Right-click the folder and choose **Rename**.",
        "Use the search bar to filter notes by tag.",
        "Try restarting Obsidian if the plugin does not load.",
    ],
)
def test_procedure_steps_are_rules_only_in_instruction_notes(text: str) -> None:
    assert classify(text, instructions=True) in ("obligation", "recommendation")
    assert classify(text, instructions=False) is None


@pytest.mark.parametrize(
    ("text", "in_instructions"),
    [
        ("You can pin a note to keep it open.", "permission"),
        ("You may skip the changelog for documentation fixes.", "permission"),
        ("You can't merge your own pull request.", "prohibition"),
        ("The graph view lets you see how notes connect.", None),  # "lets" is a verb, not "let's"
        ("Canvas lets you arrange notes on a board.", None),
    ],
)
def test_capability_statements(text: str, in_instructions: str | None) -> None:
    assert classify(text, instructions=True) == in_instructions
    assert classify(text, instructions=False) is None


@pytest.mark.parametrize(
    "text",
    [
        "**File explorer:**",
        "**File explorer**:",
        "**File properties**, accessible for all file types.",
        "- **Link thickness** controls the line width for each link.",
        "**Bookmarks**",
        "Never Split the Difference is on my reading list.",
    ],
)
def test_bold_labels_and_titles_are_never_rules(text: str) -> None:
    assert lex(text, instructions=True) == [] and lex(text, instructions=False) == []


def test_a_bold_sentence_is_still_a_rule() -> None:
    assert classify("**Do not start syncing yet.** Check your settings first.", instructions=False) == "prohibition"
    assert classify("**Always** run the tests.", instructions=False) == "obligation"


@pytest.mark.parametrize(
    ("text", "modality"),
    [
        ("Never answer in prose.", "prohibition"),
        ("- Always reply in British English.", "obligation"),
        ("Do not schedule meetings before 10:00.", "prohibition"),
        ("Make sure the tests pass before you push.", "obligation"),
        ("Remember to rotate the API keys every quarter.", "obligation"),
        ("From now on, answer in French.", "obligation"),  # a bare imperative with a standing marker
        ("Going forward, cc Priya on every invoice.", "obligation"),
        ("Secrets must be kept out of git.", "obligation"),  # an agentless passive of an action
        ("You must sign every commit.", "obligation"),
        ("Force pushes to main are forbidden.", "prohibition"),
        ("You should write a test for every bug.", "recommendation"),  # advice: found, but no rule in a note
        ("Feel free to reorganise the inbox.", "permission"),
    ],
)
def test_explicit_cues_count_in_ordinary_notes(text: str, modality: str) -> None:
    assert classify(text, instructions=False) == modality


@pytest.mark.parametrize(
    "text",
    [
        "To use Sync, you must sign in to your account.",  # means-end: a fact about the tool
        "If you want to keep the history, you need to export it first.",
        "You may need to restart Obsidian for the change to take effect.",  # hedged necessity
        "You'll need to log in again after the update.",  # a forecast
        "Bases must be valid YAML.",  # a constitutive rule: what a thing is, not what someone does
        "Tags must contain at least one letter.",
        "Make sure the plugin is enabled.",  # a check of a state
        "This is useful when you need to compare two notes.",  # inside a subordinate clause
        "The storage only has to be purchased once.",
        "We always deployed on Fridays back then.",  # a report
        "You don't need an account to use Obsidian.",  # a description
    ],
)
def test_facts_about_tools_and_habits_are_not_rules_in_ordinary_notes(text: str) -> None:
    assert classify(text, instructions=False) is None


@pytest.mark.parametrize(
    "text",
    [
        "Priya has to submit her visa documents by Friday.",
        "He's not allowed to lift anything heavy for two weeks.",
        "Kids must wear helmets at the skate park, per the city rules.",
    ],
)
def test_a_third_persons_duty_is_a_fact(text: str) -> None:
    assert classify(text, instructions=True) is None and classify(text, instructions=False) is None


def test_the_agent_named_in_the_third_person_is_still_bound() -> None:
    assert classify("Every PR needs a linked issue.") == "obligation"
    assert classify("Nobody may merge on Fridays.") == "prohibition"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("AGENTS.md", True),
        ("claude.md", True),
        ("docs/deep/Agents.MD", True),
        ("MEMORY.md", False),
        ("memory/2026-11-03.md", False),
        ("notes/agents-notes.md", False),
    ],
)
def test_instruction_paths(path: str, expected: bool) -> None:
    assert is_instruction_path(path) is expected


def test_instruction_notes_setting_names_more_notes(tmp_path: Path) -> None:
    (tmp_path / "botbin.toml").write_text('instruction_notes = ["AGENTS.md", "rules/**/*.md", "../x.md"]\n')
    loaded = load_settings(tmp_path, env={})
    assert loaded.settings.instruction_notes == ("AGENTS.md", "rules/**/*.md")
    assert any("'../x.md'" in w for w in loaded.warnings)
    text = "# Rules\n\n- Use tabs.\n- Click Save.\n"
    note = parse_note(text, "rules/team/style.md")
    assert not partition_note(note, text).instruction
    part = partition_note(note, text, loaded.settings.instruction_notes)
    assert part.instruction and [d.kind for d in part.directives] == ["hard", "hard"]
    assert not partition_note(parse_note(text, "CLAUDE.md"), text, loaded.settings.instruction_notes).instruction


def test_memory_note_keeps_facts_as_memory() -> None:
    text = (
        "# Memory\n\n## People\n\n- **Priya Raman**: tech lead, owns the scheduler.\n\n## Decisions\n\n"
        "- **Postgres over SQLite** (2026-09): one shared store.\n\n## Rules\n\n- Never answer in prose.\n"
        "- Use British spelling.\n- You should keep answers short.\n\n## Open questions\n\n"
        "- Do we need PgBouncer?\n"
    )
    part = partition_note(parse_note(text, "MEMORY.md"), text)
    assert not part.instruction
    assert [(d.kind, d.modality, d.text) for d in part.directives] == [
        ("soft", "prohibition", "- Never answer in prose.")
    ]


@pytest.mark.parametrize("name", ["register_instructions", "register_notes", "register_blind"])
def test_register_sets_meet_the_issue_targets(name: str) -> None:
    """Per modality precision >= 0.95 and recall >= 0.90 (issue 19), each register apart; register_blind was
    written after the rules and scored once before any fix (bench/README.md has its first-run figures)."""
    rows = load_labeled(LABELED / f"{name}.jsonl")
    for flag in (True, False):
        part = [r for r in rows if r.instructions is flag]
        if not part:
            continue
        ev = evaluate(part)
        for score in ev.per_label:
            if score.support >= 5:
                assert score.precision >= 0.95 and score.recall >= 0.90, (name, flag, score, ev.errors)


def test_second_blind_set_floors() -> None:
    """register_blind2, written and scored once after the rules were set (first run: ordinary notes 0.926 /
    0.926, instruction notes 1.0 / 1.0); floors against regressions, not targets."""
    rows = load_labeled(LABELED / "register_blind2.jsonl")
    for flag in (True, False):
        ev = evaluate([r for r in rows if r.instructions is flag])
        assert ev.overall.precision >= 0.92 and ev.overall.recall >= 0.92, (flag, ev.errors)


def test_labeled_rows_carry_their_register(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(
        '{"text": "Click Save.", "modality": "none", "register": "notes"}\n'
        '{"text": "Click Save.", "modality": "obligation"}\n'
    )
    rows = load_labeled(path)
    assert [r.instructions for r in rows] == [False, True]
    assert evaluate(rows).errors == ()
    path.write_text('{"text": "x", "modality": "none", "register": "email"}\n')
    with pytest.raises(ValueError, match=r"set\.jsonl:1"):
        load_labeled(path)


def test_collect_rules_reads_every_rule_straight_from_the_notes() -> None:
    from botbin.directives.rulebook import collect_rules

    book = collect_rules(
        [
            ("memory/2026-11-03.md", "# Log\n\nMet Dana. Never book meetings before 10:00.\n\n- Click Save.\n"),
            ("docs/CLAUDE.md", "- Use tabs.\n"),
            ("MEMORY.md", "# Memory\n\n- Priya leads the team.\n- Never answer in prose.\n"),
            ("CLAUDE.md", "# Claude\n\n> Prefer short answers.\n\n- Cite the note.\n"),
            ("AGENTS.md", "# Agents\n\n- Never push to main.\n"),
        ]
    )
    assert book.instruction_notes == ("AGENTS.md", "CLAUDE.md", "docs/CLAUDE.md")
    assert [(d.path, d.text) for d in book.hard] == [
        ("AGENTS.md", "- Never push to main."),
        ("CLAUDE.md", "- Cite the note."),
        ("docs/CLAUDE.md", "- Use tabs."),
    ]
    assert [(d.path, d.text) for d in book.instruction_soft] == [("CLAUDE.md", "> Prefer short answers.")]
    assert [(d.path, d.start_line) for d in book.note_rules] == [("MEMORY.md", 3), ("memory/2026-11-03.md", 2)]
