"""Deontic lexer: behaviour cases, span invariants (property test), and precision/recall gates on the labeled sets."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botbin.directives.evaluate import Evaluation, evaluate, load_labeled
from botbin.directives.lexer import FILLER, MODALITIES, Cue, classify, lex, mask, sentences

LABELED = Path(__file__).parent / "fixtures" / "directives"


def only(text: str) -> Cue:
    """The one cue of ``text`` (fails when there is none or more than one)."""
    cues = lex(text)
    assert len(cues) == 1, (text, cues)
    return cues[0]


def check_spans(text: str, cues: list[Cue]) -> None:
    """Every span indexes ``text``: cue words inside their sentence, the action start inside it too."""
    for c in cues:
        assert 0 <= c.sentence_start <= c.start <= c.end <= c.sentence_end <= len(text), (text, c)
        assert c.sentence_start <= c.action_start <= c.sentence_end, (text, c)
        assert text[c.start : c.end] == c.cue, (text, c)
        assert c.modality in MODALITIES


# -- behaviour --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "modality", "cue", "positive"),
    [
        # a negated omission is a duty
        ("Never fail to run the tests.", "obligation", "Never fail", True),
        ("Don't forget to sign your commits.", "obligation", "Don't forget", True),
        ("Do not forget to update the lockfile.", "obligation", "Do not forget", True),
        ("Do not neglect to close file handles.", "obligation", "Do not neglect", True),
        ("Make sure you never forget to run the tests.", "obligation", "never forget", True),
        # plain negation is a prohibition
        ("Never push to main.", "prohibition", "Never", False),
        ("Don't push to main.", "prohibition", "Don't", False),
        ("Do not push to main.", "prohibition", "Do not", False),
        ("Users must not share API keys.", "prohibition", "must not", False),
        ("It is forbidden to use globals.", "prohibition", "is forbidden", False),
        ("Avoid using globals.", "prohibition", "Avoid", False),
        # the other modalities
        ("You must sign every commit.", "obligation", "must", True),
        ("Always answer in English.", "obligation", "Always", True),
        ("You should use tabs.", "recommendation", "should", True),
        ("You should not use tabs.", "recommendation", "should not", False),
        ("Prefer tabs over spaces.", "recommendation", "Prefer", True),
        ("It is recommended to use tabs.", "recommendation", "recommended", True),
        ("You may use tabs.", "permission", "You may", True),
        ("Feel free to use tabs.", "permission", "Feel free to", True),
        ("You don't have to use tabs.", "permission", "don't have to", True),
    ],
)
def test_modalities_and_negation_flip(text: str, modality: str, cue: str, positive: bool) -> None:
    c = only(text)
    assert (c.modality, c.cue, c.positive) == (modality, cue, positive)
    assert classify(text) == modality


def test_flip_with_ever_is_still_an_obligation() -> None:
    assert classify("Don't ever forget to rotate the API key.") == "obligation"
    assert classify("Never ever fail to sign off your commits.") == "obligation"


def test_flip_with_ever_spans_the_flipped_verb() -> None:
    text = "Don't ever forget to rotate the API key."
    c = only(text)
    assert (c.modality, c.cue) == ("obligation", "Don't ever forget")
    assert text[c.action_start : c.sentence_end].split()[:2] == ["to", "rotate"]


@pytest.mark.parametrize(
    ("text", "modality", "cue"),
    [
        ("NEVER push to main.", "prohibition", "NEVER"),
        ("never push to main.", "prohibition", "never"),
        ("You MUST sign every commit.", "obligation", "MUST"),
        ("NEVER FAIL TO RUN THE TESTS.", "obligation", "NEVER FAIL"),
        ("ALWAYS use tabs", "obligation", "ALWAYS"),
    ],
)
def test_case_is_ignored_and_the_cue_keeps_its_spelling(text: str, modality: str, cue: str) -> None:
    c = only(text)
    assert (c.modality, c.cue) == (modality, cue)


@pytest.mark.parametrize(
    ("text", "modality", "cue"),
    [
        ("Don’t push to main.", "prohibition", "Don’t"),
        ("don’t forget to sign commits.", "obligation", "don’t forget"),
        ("DON’T FORGET TO RUN THE TESTS.", "obligation", "DON’T FORGET"),
        ("You don’t have to squash commits.", "permission", "don’t have to"),
        ("You’ll need to run the setup script once.", "obligation", "need to"),
    ],
)
def test_curly_apostrophes_count_as_straight_ones(text: str, modality: str, cue: str) -> None:
    c = only(text)
    assert (c.modality, c.cue) == (modality, cue)
    assert text[c.start : c.end] == c.cue  # the span is of the input, curly apostrophe and all


@pytest.mark.parametrize(
    ("text", "cue", "sentence"),
    [
        ("- Always use tabs.", "Always", "Always use tabs."),
        ("* never use tabs", "never", "never use tabs"),
        ("+ Use tabs.", "Use", "Use tabs."),
        ("1. Use tabs.", "Use", "Use tabs."),
        ("- [ ] Use tabs.", "Use", "Use tabs."),
        ("- [x] Never push to main.", "Never", "Never push to main."),
        ("> Prefer small commits.", "Prefer", "Prefer small commits."),
        ("- **Always** use tabs.", "Always", "**Always** use tabs."),
    ],
)
def test_list_and_quote_markers_are_not_part_of_the_sentence(text: str, cue: str, sentence: str) -> None:
    c = only(text)
    assert c.cue == cue
    assert text[c.sentence_start : c.sentence_end] == sentence


def test_a_rule_list_without_periods_is_one_rule_per_line() -> None:
    text = "- Always use tabs\n- never push to main\n- The CI is slow"
    cues = lex(text)
    assert [(c.modality, c.cue) for c in cues] == [("obligation", "Always"), ("prohibition", "never")]
    assert [text[c.sentence_start : c.sentence_end] for c in cues] == ["Always use tabs", "never push to main"]


@pytest.mark.parametrize(
    "text",
    [
        "The config key is `must_sign`.",
        "`never push to main`",
        "```\nnever push to main\n```\n",
        "~~~\nyou must sign every commit\n~~~\n",
        "```python\nnever push  # an unclosed fence runs to the end\n",
        "Intro.\n\n```\nyou must sign\n```\n\nThe end.",
        "See https://example.com/never-push-to-main for details.",
        "See www.example.com/you-must-not for details.",
        "<https://example.com/you-must-not>",
        "[never push to main](https://example.com)",
        "<!-- never push to main -->",
        'The bot replied "never push to main" yesterday.',
        "The bot replied “never push to main” yesterday.",
        "He wrote 'always use tabs' in the log.",
    ],
)
def test_code_urls_links_and_quoted_examples_are_ignored(text: str) -> None:
    assert lex(text) == []
    assert classify(text) is None


def test_masked_code_does_not_hide_the_rule_around_it() -> None:
    c = only("Run `never push` before you commit.")
    assert (c.modality, c.cue) == ("obligation", "Run")
    prose = "Never push to main (see `git help push`)."
    assert only(prose).modality == "prohibition"


def test_mask_keeps_length_and_lines() -> None:
    text = 'Run `x` at https://a.b/c and "quoted" ok\n```\ncode\n```\nend'
    masked = mask(text)
    assert len(masked) == len(text) and masked.count("\n") == text.count("\n")
    assert masked.startswith("Run " + FILLER * 3 + " at ") and masked.endswith("\nend")
    assert "code" not in masked and "quoted" not in masked
    assert mask("don’t “x”") == "don't " + FILLER * 3


@pytest.mark.parametrize(
    "text",
    [
        "Should I push to main?",
        "Can we use tabs?",
        "Must we sign every commit?",
        "- Do we ever push to main?",
        "Should I run `make lint`?",
    ],
)
def test_questions_are_not_rules(text: str) -> None:
    assert lex(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "We always used tabs.",
        "He never pushed to main.",
        "We never pushed on Fridays.",
        "You should have asked first.",
        "The build must have failed.",
        "The team uses tabs.",
        "This project was started in 2020.",
        "Example: use tabs.",
        "User: never push to main",
        "## Commit conventions",
    ],
)
def test_past_tense_reports_and_background_are_not_rules(text: str) -> None:
    assert lex(text) == []


@pytest.mark.parametrize(
    ("text", "modality", "cue"),
    [
        ("If the build fails, revert the commit.", "obligation", "revert"),
        ("If tests fail, do not merge.", "prohibition", "do not"),
        ("Before you push, run the tests.", "obligation", "run"),
        ("Unless told otherwise, use tabs.", "obligation", "use"),
    ],
)
def test_conditional_imperative_cue_is_the_main_clause(text: str, modality: str, cue: str) -> None:
    c = only(text)
    assert (c.modality, c.cue) == (modality, cue)
    assert c.sentence_start == 0 and c.sentence_end == len(text)


def test_one_cue_per_sentence_with_spans_and_action_start() -> None:
    text = "Use tabs. Never push to main. The CI is slow.\n\nYou may skip the changelog."
    cues = lex(text)
    assert [c.cue for c in cues] == ["Use", "Never", "You may"]
    assert [text[c.sentence_start : c.sentence_end] for c in cues] == [
        "Use tabs.",
        "Never push to main.",
        "You may skip the changelog.",
    ]
    use, never, may = cues
    assert use.action_start == use.start  # an imperative verb is the action itself
    assert text[never.action_start : never.sentence_end].strip() == "push to main."
    assert text[may.action_start : may.sentence_end].strip() == "skip the changelog."
    check_spans(text, cues)


def test_mid_sentence_cue_and_emphasis() -> None:
    c = only("Please never push to main.")
    assert (c.cue, c.start) == ("never", 7)
    c = only("**Never** push to main.")
    assert (c.cue, c.start, c.sentence_start) == ("Never", 2, 0)


def test_sentences_exclude_markers() -> None:
    text = "- Always use tabs\n- never push to main\n> quoted rule.\n# Heading"
    spans = sentences(mask(text))
    assert [text[s:e] for s, e in spans] == ["Always use tabs", "never push to main", "quoted rule.", "Heading"]


@pytest.mark.parametrize("text", ["", " ", "\n\n", FILLER, "```", "- ", "> ", "#", "?", "'", '"', "`", "[](", "\u2019"])
def test_degenerate_inputs(text: str) -> None:
    cues = lex(text)
    check_spans(text, cues)
    assert classify(text) in (None, *MODALITIES)


# -- property ---------------------------------------------------------------------------------------------

_PIECES = [
    *"*_#>-\n`\"'[]() \t.,;:!?",
    "\u2019",
    "\u201c",
    "\u201d",
    "```",
    "~~~",
    "http://",
    "www.",
    "1. ",
    "- ",
    "[ ] ",
    "never ",
    "must ",
    "not ",
    "Use ",
    "don't ",
    "Don’t forget to ",
    "you may ",
    "should ",
    "If x, ",
    "ok",
    "a",
    "tabs",
    "<!--",
    "-->",
    "[[",
    "]]",
    "<",
    ">",
]
_MARKDOWNISH = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join)
_UNICODE = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=300)
_MARKDOWN_CHARS = st.text(alphabet="*_#>-\n`\"'[]() abcNUvery.?,:;", max_size=200)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_UNICODE, _MARKDOWN_CHARS, _MARKDOWNISH, st.lists(st.one_of(_UNICODE, _MARKDOWNISH)).map("".join)))
def test_lex_never_raises_and_spans_index_the_input(text: str) -> None:
    cues = lex(text)
    check_spans(text, cues)
    assert [c.start for c in cues] == sorted(c.start for c in cues)
    masked = mask(text)
    assert len(masked) == len(text)
    for s, e in sentences(masked):
        assert 0 <= s < e <= len(text)


# -- precision and recall on the labeled sets -----------------------------------------------------------


def report(name: str, ev: Evaluation) -> str:
    lines = [f"{name}: overall precision {ev.overall.precision:.3f} recall {ev.overall.recall:.3f}"]
    lines += [
        f"  {s.label:<15} precision {s.precision:.3f} recall {s.recall:.3f} (n={s.support})" for s in ev.per_label
    ]
    lines += [f"  miss: gold {gold}, got {got}: {text}" for gold, got, text in ev.errors[:40]]
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("name", "min_precision", "min_recall"),
    [
        ("labeled", 0.95, 0.90),  # the spec target
        ("heldout", 0.93, 0.90),  # regression floors (0.949 / 0.929 when written)
        ("blind", 0.86, 0.93),  # (0.886 / 0.964 when written)
    ],
)
def test_precision_and_recall(name: str, min_precision: float, min_recall: float) -> None:
    rows = load_labeled(LABELED / f"{name}.jsonl")
    assert len(rows) > 200
    ev = evaluate(rows)
    ok = ev.overall.precision >= min_precision and ev.overall.recall >= min_recall
    assert ok, report(name, ev)


def test_evaluate_scores_and_errors() -> None:
    ev = evaluate(
        [
            ("Never push to main.", "prohibition"),
            ("Use tabs.", "obligation"),
            ("The sky is blue.", "none"),
            ("We used tabs.", "obligation"),
        ]
    )
    assert (ev.overall.precision, ev.overall.recall, ev.overall.support) == (1.0, 2 / 3, 3)
    assert ev.errors == (("obligation", "none", "We used tabs."),)
    assert [s.label for s in ev.per_label] == [*MODALITIES, "none"]


def test_load_labeled_rejects_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "Use tabs.", "modality": "obligation"}\n\n{"text": "x", "modality": "duty"}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:3"):
        load_labeled(path)
