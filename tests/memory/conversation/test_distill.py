"""distill.py: buffer -> block text, sentence selection, verbatim rules."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from botbin.memory.conversation.distill import (
    Block,
    BufferedTurn,
    build_block,
    centroid,
    needs_selection,
    rule_bullet,
    select_sentences,
    split_sentences,
)
from botbin.memory.conversation.gate import GateScore
from botbin.memory.conversation.turns import Turn

G = GateScore(1, 1, 0, 0, 1, 1, 0, 0, 1)


def _item(
    n: int,
    content: str,
    admitted: bool = True,
    protected: bool = False,
    role: str = "Caroline",
    when: datetime | None = None,
) -> BufferedTurn:
    return BufferedTurn(n, Turn(role, content, "caroline", "3", when), G, admitted, protected)


def test_block_text() -> None:
    buffer = [
        _item(12, "hi", admitted=False),
        _item(13, "I moved to Berlin\nin May.", when=datetime(2023, 5, 8)),
        _item(14, "Never call me before 9am.\nNot even on Sundays.", False, True, "user"),
        _item(15, "I moved to Berlin\nin May."),
    ]
    block = build_block(buffer, {})
    assert block is not None
    assert block.text == (
        "## [Turns 12-15] session 3 · 2023-05-08\n\n"
        "- Caroline: I moved to Berlin in May.\n"
        "- Never call me before 9am. _(caroline: rule, verbatim)_\n  Not even on Sundays.\n"  # the user's name
    )
    assert build_block([_item(1, "hi", admitted=False)], {}) is None
    assert build_block([], {}) is None
    assert Block(1, 1, None, None, ("- a: b",)).header == "## [Turns 1-1]"


def test_facts_replace_long_turns() -> None:
    block = build_block([_item(1, "long text"), _item(2, "short")], {1: "The best sentence."})
    assert block is not None and block.bullets == ("- Caroline: The best sentence.", "- Caroline: short")


def test_rule_bullet_keeps_words_and_blank_lines() -> None:
    assert rule_bullet("user", "Always:\r\n\r\n- run tests\n") == "- Always: _(user: rule, verbatim)_\n\n  - run tests"


def test_a_rule_bullet_is_a_rule_to_the_partition() -> None:
    """Issue 19: the soul file's rule bullet opens with the rule, so the partition (an ordinary note) sees it."""
    from botbin.directives.partition import partition_source

    text = (
        "# ana\n\n## [Turns 1-1] session 1\n\n"
        + rule_bullet("user", "From now on, never schedule meetings for me before 10:00.")
        + "\n- Ana: I moved.\n"
    )
    _, part = partition_source(text, "memory/soul/ana.md")
    (rule,) = part.directives
    assert (rule.kind, rule.modality, rule.start_line) == ("soft", "prohibition", 4)
    assert rule.text.startswith("- From now on, never schedule meetings") and "(user: rule, verbatim)" in rule.text


def test_sentences() -> None:
    assert split_sentences("Hi there! I moved to Berlin. It is\ngreat?  Yes.") == [
        "Hi there!",
        "I moved to Berlin.",
        "It is great?",
        "Yes.",
    ]
    assert not needs_selection("One. Two. Three.")
    assert needs_selection(" ".join(["This is a sentence with some words."] * 8))


def test_select_sentences_keeps_the_closest_in_order() -> None:
    vectors = np.eye(4, dtype=np.float32)
    center = np.array([0.1, 0.9, 0.0, 0.8], dtype=np.float32)
    assert select_sentences(["a", "b", "c", "d"], vectors, center) == ["b", "d"]
    assert select_sentences(["a"], vectors[:1], center) == ["a"]


def test_centroid_is_unit_or_zero() -> None:
    c = centroid(np.array([[1, 0], [0, 1]], dtype=np.float32))
    assert abs(float(np.linalg.norm(c)) - 1) < 1e-6
    assert not centroid(np.array([[1, 0], [-1, 0]], dtype=np.float32)).any()
