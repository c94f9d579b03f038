"""Conversation capture keeps what matters (issue 32): a standing instruction after a lead-in is a rule (a rule
bullet that the soul file's partition makes soft guidance), small talk is not stored, and the speaker is the
user's name where the host gives it. Measured on labelled lines (tests/fixtures/conversation/capture_*.jsonl:
``capture_dev`` was written first and the code tuned on it; ``capture_heldout`` was written after, then
measured; bench/bench_capture.py reports the same with the real model)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from botbin.directives.leadins import is_lead_label, lead_end
from botbin.directives.lexer import lex
from botbin.directives.partition import partition_source
from botbin.memory.conversation.distill import RULE_MARK
from botbin.memory.conversation.smalltalk import is_small_talk, strip_small_talk
from botbin.memory.conversation.soul import soul_rel
from botbin.memory.conversation.turns import Turn
from botbin.service import MemoryService

SETS = Path(__file__).parents[2] / "fixtures" / "conversation"


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (SETS / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _verdicts(service: MemoryService, rows: list[dict[str, Any]]) -> list[tuple[bool, bool]]:
    """(stored, rule) per row, each row the only turn of a user of its own (as bench/bench_capture.py)."""
    observer = service.observer()
    for i, row in enumerate(rows):
        observer.observe(Turn(row["role"], row["content"], f"labelled-{i}", "s1"))
    observer.flush()
    out = []
    for i in range(len(rows)):
        rel = soul_rel(service.ws.settings.soul_dir, f"labelled-{i}")
        path = service.root / rel
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        _, part = partition_source(text, rel)
        rule = any(d.kind == "soft" and RULE_MARK in d.text for d in part.directives)
        out.append(("\n- " in text, rule))
    return out


@pytest.mark.parametrize("name", ["capture_dev.jsonl", "capture_heldout.jsonl"])
def test_rules_and_small_talk_on_labelled_lines(make_service: Callable[..., MemoryService], name: str) -> None:
    rows = _rows(name)
    found = _verdicts(make_service(), rows)
    labels = [r["label"] for r in rows]
    rules = [rule for lab, (_, rule) in zip(labels, found, strict=True) if lab == "rule"]
    false_rules = [r["content"] for r, (_, rule) in zip(rows, found, strict=True) if rule and r["label"] != "rule"]
    small = [not stored for lab, (stored, _) in zip(labels, found, strict=True) if lab == "smalltalk"]
    dropped = [r["content"] for r, (stored, _) in zip(rows, found, strict=True) if r["label"] == "fact" and not stored]
    assert sum(rules) / len(rules) >= 0.9, [r["content"] for r, f in zip(rows, found, strict=True) if not f[1]]
    assert len(false_rules) <= len(rows) // 50, false_rules
    assert sum(small) / len(small) >= 0.9
    assert not dropped  # small talk is left out, content never


def test_the_new_users_conversation(make_service: Callable[..., MemoryService]) -> None:
    """Issue 32, tried as a new user would: the greeting was kept as a bullet and the lead-in instruction missed."""
    service = make_service()
    observer = service.observer()
    talk = [
        ("assistant", "Good morning! How can I help today?"),
        ("user", "By the way, from now on, call me Sam."),
        ("assistant", "Sure thing, Sam!"),
        ("user", "Thanks! My flight to Lisbon leaves at 9 on Friday."),
        ("user", "ok sounds good"),
    ]
    for role, text in talk:
        observer.observe(Turn(role, text, "Sam", "s1"))
    observer.flush()
    soul = (service.root / "memory/soul/sam.md").read_text(encoding="utf-8")
    assert "- By the way, from now on, call me Sam. _(Sam: rule, verbatim)_" in soul
    assert "- Sam: My flight to Lisbon leaves at 9 on Friday." in soul  # the user's name; the thanks left out
    assert "Good morning" not in soul and "Sure thing" not in soul and "sounds good" not in soul
    service.sync()
    directives = service.directives().directives
    assert [(d.kind, d.text.split(" _(")[0]) for d in directives] == [
        ("soft", "- By the way, from now on, call me Sam.")
    ]


@pytest.mark.parametrize(
    ("text", "small"),
    [
        ("Thanks, Sam!", True),
        ("Hi Sam, how's it going?", True),
        ("Okay, got it. Talk soon!", True),
        ("Let me know if there's anything else I can help with.", True),
        ("😊", True),
        ("Have a lovely weekend!", True),
        ("Thanks! The wifi password is kestrel42.", False),
        ("9:30", False),
        ("Thanks for the update on the Acme deal.", False),
        ("Enjoy the concert in Berlin.", False),
        ("ok so the budget is 40k", False),
    ],
)
def test_small_talk(text: str, small: bool) -> None:
    assert is_small_talk(text) is small


def test_small_talk_around_content_is_dropped_from_the_bullet() -> None:
    assert strip_small_talk("Good morning! I adopted a cat named Miso. Thanks!") == "I adopted a cat named Miso."
    assert strip_small_talk("Thanks!") == "Thanks!"  # nothing else: the text stays (the gate left it out already)


def test_lead_ins() -> None:
    def words(text: str) -> list[str]:
        from botbin.directives.lexer import _tokens, mask

        masked = mask(text)
        toks = _tokens(masked, 0, len(masked))
        return [t.word for t in toks[lead_end(toks) :]]

    assert words("By the way, from now on, call me Sam.")[:3] == ["from", "now", "on"]
    assert words("Oh and btw, always use metric.")[0] == "always"
    assert words("Look at the logs first.")[0] == "look"  # a verb, not a lead-in, without its comma
    assert words("Listen, never share it.")[0] == "never"
    assert is_lead_label("one more thing") and is_lead_label("hey quick thing") and not is_lead_label("felix brandt")
    assert [c.modality for c in lex("One more thing: from now on, reply in French.", instructions=False)] == [
        "obligation"
    ]
    assert lex("Oh and I always drink tea.", instructions=False) == []  # a habit stays a habit
