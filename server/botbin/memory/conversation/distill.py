"""Extractive distillation: a buffer of turns -> one markdown block of bullet facts (pure, offline, deterministic).

A block looks like::

    ## [Turns 12-16] session 3 · 2023-05-08

    - Caroline: I moved to Berlin in May.
    - Never push to main without a review. _(User: rule, verbatim)_

Turn numbers are 1-based per user and run on across sessions and runs. Each turn the admission gate let in
gives one bullet, prefixed with its speaker: its own words when short, else its MAX_SENTENCES sentences
closest to the buffer's centroid (in their original order), less its small talk ("Good morning! ...").
A directive turn (a rule the user gave) is kept
whole and verbatim, whatever the gate said, its provenance after its first line (a leading label would hide
the rule's cue from the lexer and the partition, which then would not see a rule). A buffer with nothing
admitted gives no block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from botbin.directives.lexer import sentence_spans
from botbin.memory.conversation.gate import GateScore
from botbin.memory.conversation.smalltalk import strip_small_talk
from botbin.memory.conversation.turns import Turn

#: A turn longer than this (words) with more than MAX_SENTENCES sentences is cut to its best sentences.
LONG_TURN_WORDS = 40
MAX_SENTENCES = 2
RULE_MARK = "rule, verbatim"


@dataclass(frozen=True)
class BufferedTurn:
    """A turn waiting in the buffer, with the gate's verdict."""

    number: int
    """1-based turn number for its user."""
    turn: Turn
    gate: GateScore
    admitted: bool
    """The gate score reached ``admission_threshold``."""
    protected: bool
    """A directive turn: kept verbatim whatever the gate says."""


@dataclass(frozen=True)
class Block:
    """One distilled block of the soul file."""

    first_turn: int
    """Number of the block's first turn (1-based, per user)."""
    last_turn: int
    """Number of its last turn (inclusive)."""
    session: str | None
    date: str | None
    """ISO date (YYYY-MM-DD) of the first turn that has a timestamp."""
    bullets: tuple[str, ...]
    """The bullet items, each ``- Speaker: words`` (a rule's later lines indented by two spaces)."""

    @property
    def header(self) -> str:
        head = f"## [Turns {self.first_turn}-{self.last_turn}]"
        if self.session:
            head += f" session {one_line(self.session)}"
        return head + (f" · {self.date}" if self.date else "")

    @property
    def body(self) -> str:
        """The bullets, one per line: what the near-duplicate check embeds."""
        return "\n".join(self.bullets)

    @property
    def text(self) -> str:
        """The block as written to the soul file, ending with a newline."""
        return f"{self.header}\n\n{self.body}\n"


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) turned into one space."""
    return " ".join(text.split())


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (botbin's one splitter, directives/lexer.py: end punctuation, blank lines and
    list items split; code and URLs never do), each on one line."""
    return [s for start, end in sentence_spans(text) if (s := one_line(text[start:end]))]


def needs_selection(text: str) -> bool:
    """True when a turn is long enough to be cut to its best sentences."""
    return len(text.split()) > LONG_TURN_WORDS and len(split_sentences(text)) > MAX_SENTENCES


def select_sentences(
    sentences: Sequence[str],
    vectors: npt.NDArray[np.float32],
    centroid: npt.NDArray[np.float32],
    keep: int = MAX_SENTENCES,
) -> list[str]:
    """The ``keep`` sentences whose embeddings (``vectors``, float32 (len(sentences), 384)) are closest to
    ``centroid`` (float32 (384,)), in their original order; ties go to the earlier sentence."""
    if len(sentences) <= keep:
        return list(sentences)
    cosines = np.nan_to_num(vectors @ centroid, nan=-1.0)
    best = sorted(np.argsort(-cosines, kind="stable")[:keep].tolist())
    return [sentences[i] for i in best]


def fact_bullet(speaker: str, text: str) -> str:
    """``- Speaker: text`` on one line."""
    return f"- {one_line(speaker)}: {one_line(text)}"


def rule_bullet(speaker: str, content: str) -> str:
    """``- content _(Speaker: rule, verbatim)_``: the rule's words open the bullet, so the lexer and the partition
    see its cue ("From now on, never ..."), the provenance beside its first line; later lines are indented by
    two spaces so the bullet stays one list item; the words are kept exactly (trailing spaces aside)."""
    lines = content.strip().replace("\r\n", "\n").replace("\r", "\n").split("\n")
    rest = [f"  {line.rstrip()}" if line.strip() else "" for line in lines[1:]]
    return "\n".join([f"- {lines[0].rstrip()} _({one_line(speaker)}: {RULE_MARK})_", *rest])


def centroid(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The unit-length mean of ``vectors`` (float32 (n, 384), n >= 1); a zero mean stays zero."""
    mean = vectors.mean(axis=0, dtype=np.float64)
    norm = float(np.linalg.norm(mean))
    out: npt.NDArray[np.float32] = (mean / norm if norm > 0 else mean).astype(np.float32)
    return out


def build_block(buffer: Sequence[BufferedTurn], facts: Mapping[int, str]) -> Block | None:
    """The block of ``buffer`` (in turn order), or None when no turn was admitted or protected.

    ``facts``: turn number -> the words to keep of an admitted turn (its selected sentences); an admitted
    turn missing from it keeps its whole content.
    """
    if not buffer:
        return None
    bullets: list[str] = []
    for item in buffer:
        if item.protected:
            bullets.append(rule_bullet(item.turn.speaker, item.turn.content))
        elif item.admitted:  # a greeting or a thanks around the content is not kept with it
            bullets.append(fact_bullet(item.turn.speaker, strip_small_talk(facts.get(item.number, item.turn.content))))
    if not bullets:
        return None
    dated = next((t.turn.timestamp for t in buffer if t.turn.timestamp is not None), None)
    return Block(
        buffer[0].number,
        buffer[-1].number,
        buffer[0].turn.session,
        dated.date().isoformat() if dated else None,
        tuple(dict.fromkeys(bullets)),
    )
