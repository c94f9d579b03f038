"""The lexer on general categories of sentences (issue 19, part B): a few examples per category, in the register
where the category matters. Not the labelled sets themselves (bench/bench_directives.py scores those)."""

from __future__ import annotations

import pytest

from botbin.directives.lexer import classify

NOTES, INSTRUCTIONS = False, True


@pytest.mark.parametrize(
    "text",
    [
        "Always include the ticket link when you summarise a bug.",
        "- Always be polite to the auditors.",
        "Please always match the tone of the original email.",
    ],
)
def test_always_with_any_base_verb_is_a_command_in_an_ordinary_note(text: str) -> None:
    assert classify(text, NOTES) == "obligation"


@pytest.mark.parametrize("text", ["- Always contains a date.", "Tag names must contain a letter."])
def test_a_thing_that_always_is_or_must_be_something_stays_a_description(text: str) -> None:
    assert classify(text, NOTES) is None


@pytest.mark.parametrize(
    ("text", "modality"),
    [
        ("From now on please book aisle seats for me.", "obligation"),
        ("Going forward use metric units in reports.", "obligation"),
        ("Wearing a badge on site is compulsory.", "obligation"),
        ("Attendance is not obligatory.", "permission"),
        ("Nobody may export personal data outside the EU.", "prohibition"),
    ],
)
def test_standing_markers_status_words_and_nobody_may_in_an_ordinary_note(text: str, modality: str) -> None:
    assert classify(text, NOTES) == modality


@pytest.mark.parametrize(
    "text",
    [
        "In future the team meets on Mondays.",
        "From now on I will walk to work.",
    ],
)
def test_a_standing_marker_before_a_statement_is_no_rule(text: str) -> None:
    assert classify(text, NOTES) is None


@pytest.mark.parametrize(
    "text",
    [
        "You must be Tom's sister.",
        "You must be the new intern.",
        "You don't have to be a genius to see the deadline is unrealistic.",
    ],
)
def test_who_someone_is_is_not_a_duty(text: str) -> None:
    assert classify(text, INSTRUCTIONS) is None


@pytest.mark.parametrize(
    ("text", "modality"), [("You must be logged in.", "obligation"), ("You must be polite.", "obligation")]
)
def test_must_be_a_state_is_still_a_duty(text: str, modality: str) -> None:
    assert classify(text, INSTRUCTIONS) == modality


@pytest.mark.parametrize(
    ("text", "modality"),
    [
        ("The assistant may use web search without asking.", "permission"),
        ("Agents may read any file under docs/.", "permission"),
        ("Agents may not push to main.", "prohibition"),
    ],
)
def test_the_agent_named_in_the_third_person_in_an_instruction_note(text: str, modality: str) -> None:
    assert classify(text, INSTRUCTIONS) == modality


@pytest.mark.parametrize("text", ["The agent may crash when the disk is full.", "The agent may be slow on ARM."])
def test_a_possibility_about_the_agent_is_no_permission(text: str) -> None:
    assert classify(text, INSTRUCTIONS) is None


def test_the_agent_may_counts_only_in_an_instruction_note() -> None:
    assert classify("The assistant may use web search.", NOTES) is None


@pytest.mark.parametrize(
    ("text", "modality"),
    [
        ("Maybe avoid Friday deploys if you can.", "recommendation"),
        ("Use rg if you can.", "recommendation"),
    ],
)
def test_if_you_can_hedges_the_command(text: str, modality: str) -> None:
    assert classify(text, INSTRUCTIONS) == modality


@pytest.mark.parametrize(
    "text",
    [
        "The `strict` option means every variable must have a type.",
        "The linter enforces that every exported function must have a comment.",
        "The README insists you should use Docker, but native installs work fine.",
        "The guide warns you must not skip the first step.",
    ],
)
def test_reported_and_described_rules(text: str) -> None:
    assert classify(text, INSTRUCTIONS) is None


@pytest.mark.parametrize(
    "text",
    [
        "You can't really predict how long the review takes.",
        "You can't miss the building; it's the blue one.",
        "You always get a warning the first time you run it.",
        "Sometimes you have to wait a minute for the index to rebuild.",
        "The meeting ran long, so we never got to the roadmap item.",
        "The team should be back from the offsite by Thursday.",
    ],
)
def test_idioms_habits_tendencies_and_forecasts_are_not_rules(text: str) -> None:
    assert classify(text, INSTRUCTIONS) is None


@pytest.mark.parametrize(
    ("text", "modality"),
    [
        ("You can't push to main.", "prohibition"),
        ("You've got to sign every commit.", "obligation"),
        ("We have got to stop this.", "obligation"),
        ("You should be ready by nine.", "recommendation"),
        ("Commit messages should be short.", "recommendation"),
    ],
)
def test_the_same_words_as_rules(text: str, modality: str) -> None:
    assert classify(text, INSTRUCTIONS) == modality


@pytest.mark.parametrize(
    "text",
    [
        "The contractors must finish the roof before the rain starts.",
        "The vendor must deliver the servers by the 15th.",
    ],
)
def test_a_definite_outside_party_s_duty_is_memory(text: str) -> None:
    assert classify(text, NOTES) is None


@pytest.mark.parametrize(
    "text", ["All contractors must sign the NDA before they get access.", "The vendor must be paid within 30 days."]
)
def test_a_rule_about_outside_parties_in_general_or_what_we_owe_them(text: str) -> None:
    assert classify(text, NOTES) == "obligation"


@pytest.mark.parametrize(
    ("text", "instructions"), [("If a note has no title, use its file name.", True), ("Email her the report.", True)]
)
def test_a_possessive_or_pronoun_after_an_imperative(text: str, instructions: bool) -> None:
    assert classify(text, instructions) == "obligation"


@pytest.mark.parametrize("text", ["Perhaps keep a spare charger in the office.", "Maybe restart the app first."])
def test_a_hedged_imperative_is_advice_in_an_ordinary_note_too(text: str) -> None:
    assert classify(text, NOTES) == "recommendation"


def test_a_hedge_before_a_statement_is_no_advice() -> None:
    assert classify("Maybe the build is broken.", NOTES) is None


@pytest.mark.parametrize(
    ("text", "modality"),
    [
        ("> **alex:** you have to restart the pod after changing the configmap", None),
        ("> **Important:** never push to main.", "prohibition"),
        ("> Never push to main.", "prohibition"),
    ],
)
def test_a_named_speaker_in_a_quote_is_someone_else_s_words(text: str, modality: str | None) -> None:
    assert classify(text, INSTRUCTIONS) == modality


@pytest.mark.parametrize(
    "text", ["Key idea from the book: you should never negotiate with yourself.", "Quote of the day: never give up."]
)
def test_a_label_that_attributes_the_words_is_no_rule(text: str) -> None:
    assert classify(text, INSTRUCTIONS) is None


@pytest.mark.parametrize(
    "text", ["You can go ahead and archive anything older than two years.", "Go ahead and merge typo fixes."]
)
def test_go_ahead_grants_in_an_ordinary_note_too(text: str) -> None:
    assert classify(text, NOTES) == "permission"


@pytest.mark.parametrize("text", ["You can go to Settings.", "We can go ahead with the launch."])
def test_going_somewhere_or_our_own_go_ahead_is_no_grant(text: str) -> None:
    assert classify(text, NOTES) is None
