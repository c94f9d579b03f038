"""Compaction: a conversation's older messages folded into one extractive summary within a token budget, with its
confidence measured in embedding space (pure: the embedder and the token counter come in as functions).

Rules the user gave (gate.is_directive) are kept first and verbatim, as distillation keeps them. Then the sentences
of the other messages closest to the centroid of all the messages (distill.select_sentences' measure: what the
conversation is about), best first while they fit, each a ``- role: words`` bullet, in conversation order.

The confidence is the abstractive check's (memory/abstractive.py): the cosine of the summary to the mean of the
messages' embeddings. ``coverage`` is the share of the messages with substance whose closest kept sentence has a
cosine of at least COVERED_COSINE: what the summary leaves unsaid shows up there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from botbin.memory.abstractive import closeness
from botbin.memory.conversation.distill import centroid, fact_bullet, rule_bullet, split_sentences
from botbin.memory.conversation.gate import is_directive, substance

#: A message counts as represented by a kept sentence this similar (the abstractive check's ``min_coverage``).
COVERED_COSINE = 0.5

Embed = Callable[[list[str]], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class Compaction:
    """A summary of messages and how well it represents them."""

    summary: str
    """Markdown bullets; never over the budget."""
    tokens_before: int
    """Tokens of the messages folded (their contents)."""
    tokens_after: int
    """Tokens of ``summary``."""
    confidence: float
    """Cosine of the summary to the messages' centroid, in [-1, 1]; 0 for an empty summary."""
    coverage: float
    """Share of the messages with substance that a kept sentence represents, in [0, 1]."""
    rules_kept: int
    messages: int


def _fill(bullets: list[tuple[tuple[int, int], str]], budget: int, count: Callable[[str], int]) -> list[str]:
    """The bullets (keyed by conversation position), in order, that fit ``budget`` tokens when taken in turn."""
    kept: list[tuple[tuple[int, int], str]] = []
    used = 0
    for key, bullet in bullets:
        need = count(bullet)
        if used + need <= budget:
            kept.append((key, bullet))
            used += need
    return [bullet for _, bullet in sorted(kept)]


def compact(
    messages: Sequence[tuple[str, str]], budget_tokens: int, embed: Embed, count: Callable[[str], int]
) -> Compaction:
    """Fold ``messages`` ((role, content) pairs, oldest first) into a summary of at most ``budget_tokens``."""
    if not messages:
        return Compaction("", 0, 0, 0.0, 0.0, 0, 0)
    before = sum(count(content) for _, content in messages)
    rule_at = [i for i, (role, content) in enumerate(messages) if is_directive(role, content)]
    rules = _fill([((i, 0), rule_bullet(*messages[i])) for i in rule_at], budget_tokens, count)
    vectors = embed([content for _, content in messages])
    center = centroid(vectors)
    pieces = [
        ((i, j), role, sentence)
        for i, (role, content) in enumerate(messages)
        if i not in rule_at
        for j, sentence in enumerate(split_sentences(content))
        if substance(sentence) > 0
    ]
    piece_vectors = embed([s for _, _, s in pieces]) if pieces else np.zeros((0, vectors.shape[1]), np.float32)
    order: list[int] = np.argsort(-(piece_vectors @ center), kind="stable").tolist() if pieces else []
    room = budget_tokens - sum(count(r) for r in rules)
    facts = _fill([(pieces[k][0], fact_bullet(pieces[k][1], pieces[k][2])) for k in order], room, count)
    summary = "\n".join([*rules, *facts])
    kept_rows = [k for k in order if fact_bullet(pieces[k][1], pieces[k][2]) in facts]
    confidence = closeness(embed([summary])[0], vectors, 0.0, 0.0).centroid if summary else 0.0
    return Compaction(
        summary,
        before,
        count(summary),
        round(confidence, 4),
        _coverage(
            messages, vectors, piece_vectors[kept_rows], [i for i in rule_at if rule_bullet(*messages[i]) in rules]
        ),
        len(rules),
        len(messages),
    )


def _coverage(
    messages: Sequence[tuple[str, str]],
    vectors: npt.NDArray[np.float32],
    kept: npt.NDArray[np.float32],
    rule_at: list[int],
) -> float:
    """Share of the messages with substance that are a kept rule or close to a kept sentence."""
    weighty = [i for i, (_, content) in enumerate(messages) if substance(content) > 0]
    if not weighty:
        return 1.0
    best = (vectors[weighty] @ kept.T).max(axis=1) if len(kept) else np.zeros(len(weighty))
    covered = sum(1 for i, b in zip(weighty, best, strict=True) if i in rule_at or b >= COVERED_COSINE)
    return round(covered / len(weighty), 4)
