"""Big notes cost in proportion to their size, checked by counting work, never by timing: the chunker tokenizes
each character of a note about once, and directive conflicts compare only rules on the same action (not every
pair of rules that share a first word). About 3 s (the real tokenizer on a 150 KB note)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from botbin.chunking import ChunkerParams, chunk_note
from botbin.directives import conflicts
from botbin.directives.conflicts import Conflict, _scoped_apart, find_conflicts, normalize_action
from botbin.directives.partition import Directive, RuleCue, partition_note
from botbin.embedding import bundled_model_path
from botbin.embedding.model import WordPieceCounter
from botbin.parsing import parse_note

WORDS = [
    "memory",
    "note",
    "vault",
    "search",
    "index",
    "chunk",
    "sync",
    "model",
    "vector",
    "query",
    "editor",
    "table",
    "list",
    "code",
    "block",
]


def markdown(size: int) -> str:
    """About ``size`` bytes of headings, paragraphs, lists, tables and code fences."""
    rng = random.Random(0)
    parts, n = ["# Big\n"], 0
    while sum(len(p) for p in parts) < size:
        n += 1
        sentence = " ".join(rng.choices(WORDS, k=12)).capitalize() + "."
        parts.append(f"## Part {n}\n\n{sentence * rng.randint(1, 6)}\n\n- {sentence}\n- {sentence}\n")
        if n % 3 == 0:
            parts.append("| a | b |\n|---|---|\n" + "".join(f"| {w} | {i} |\n" for i, w in enumerate(WORDS)))
        if n % 4 == 0:
            parts.append("```python\n" + "".join(f"x_{i} = {i}\n" for i in range(8)) + "```\n")
    return "\n".join(parts)


class CountingCounter:
    """The real WordPiece counter, adding up the characters it is given."""

    def __init__(self) -> None:
        self.inner = WordPieceCounter(bundled_model_path())
        self.chars = 0

    def count(self, text: str) -> int:
        self.chars += len(text)
        return self.inner.count(text)

    def count_many(self, texts: list[str]) -> list[int]:
        self.chars += sum(len(t) for t in texts)
        return self.inner.count_many(texts)

    def windows(self, text: str, max_tokens: int) -> list[tuple[int, int]]:
        self.chars += len(text)
        return self.inner.windows(text, max_tokens)


def test_chunking_a_big_note_tokenizes_each_character_about_once() -> None:
    text = markdown(150_000)
    note = parse_note(text, "big.md")
    counter = CountingCounter()
    chunks = chunk_note(note, counter, ChunkerParams(), partition_note(note, text).kinds)
    assert len(chunks) > 100
    assert counter.chars <= 2 * len(text)  # re-tokenizing a growing window would make this grow with the note


class CountingWords(tuple):  # type: ignore[type-arg]
    """An action's words, counting how often they are compared with another action's."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        CountingWords.compared += 1
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return tuple.__hash__(self)


def rules(n: int, seed: int = 0) -> list[Directive]:
    """``n`` one-rule directives, all on "use ..." actions (one head), a few of them contradicting each other."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        thing = f"tool{rng.randrange(n // 4)}"
        positive = rng.random() < 0.5
        cue = RuleCue(
            "obligation" if positive else "prohibition", "must" if positive else "never", 1, positive, f"use {thing}"
        )
        out.append(Directive(f"notes/{i % 7}.md", "soft", f"rule {i}", 0, 1, (), (cue,)))
    return out


def naive(directives: list[Directive]) -> list[str]:
    """Conflicts by trying every pair (the reference)."""
    refs = [(normalize_action(c.action), d, c) for d in directives for c in d.cues]
    found = set()
    for i, (wa, da, ca) in enumerate(refs):
        for wb, db, cb in refs[i + 1 :]:
            if (
                wa == wb
                and ca.positive != cb.positive
                and not _scoped_apart(conflicts.RuleRef(da, ca), conflicts.RuleRef(db, cb))
            ):
                found.add(" ".join(wa))
    return sorted(found)


def test_conflicts_compare_only_rules_on_the_same_action(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = rules(400)
    want = naive(plain)
    got: list[Conflict] = find_conflicts(plain)
    assert len(want) > 10 and sorted({c.action for c in got}) == want

    def counting(action: str) -> Any:
        return CountingWords(normalize_action(action))

    monkeypatch.setattr(conflicts, "normalize_action", counting)
    CountingWords.compared = 0
    find_conflicts(rules(2000))
    assert CountingWords.compared < 20 * 2000  # every pair of the 2,000 "use" rules would be ~2,000,000
