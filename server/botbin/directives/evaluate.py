"""Precision and recall of the lexer on labeled sentences (``tests/fixtures/directives/*.jsonl``).

Each line is ``{"text", "modality", "register"?}``: ``register`` is "instructions" (the default: a sentence of
an instruction note or a user's turn) or "notes" (a sentence of any other note), the way lex() reads it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from botbin.directives.lexer import MODALITIES, classify

LABELS = (*MODALITIES, "none")
REGISTERS = ("instructions", "notes")


class Labeled(NamedTuple):
    """One labeled sentence."""

    text: str
    modality: str
    """One of LABELS."""
    instructions: bool = True
    """True for a sentence of an instruction note (register "instructions"), False for any other note."""


@dataclass(frozen=True)
class Score:
    """Precision and recall of one label (or of all four modalities together)."""

    label: str
    precision: float
    recall: float
    support: int
    """Labeled sentences with this label."""


@dataclass(frozen=True)
class Evaluation:
    """Scores per label, the overall score over the four modalities, and the misclassified sentences."""

    per_label: tuple[Score, ...]
    overall: Score
    """A sentence counts as found only with the exact modality; 'none' predictions are not scored here."""
    errors: tuple[tuple[str, str, str], ...]
    """(gold, predicted, text) of each miss."""


def load_labeled(path: Path) -> list[Labeled]:
    """Rows of a JSONL file of ``{"text", "modality", "register"?, ...}``. Raises ValueError on a bad line."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if row.get("modality") not in LABELS or not isinstance(row.get("text"), str):
                raise ValueError(f"{path}:{number}: needs a text and a modality in {LABELS}")
            if row.get("register", "instructions") not in REGISTERS:
                raise ValueError(f"{path}:{number}: register must be one of {REGISTERS}")
            rows.append(Labeled(row["text"], row["modality"], row.get("register", "instructions") == "instructions"))
    return rows


def _ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


def evaluate(rows: Sequence[tuple[str, str] | tuple[str, str, bool]]) -> Evaluation:
    """Classify every text (``(text, label)``, or ``(text, label, instructions)`` as Labeled) and score it."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    errors = []
    for row in rows:
        text, gold = row[0], row[1]
        predicted = classify(text, row[2] if len(row) > 2 else True) or "none"
        if predicted == gold:
            tp[gold] += 1
        else:
            fp[predicted] += 1
            fn[gold] += 1
            errors.append((gold, predicted, text))
    per = tuple(Score(m, _ratio(tp[m], tp[m] + fp[m]), _ratio(tp[m], tp[m] + fn[m]), tp[m] + fn[m]) for m in LABELS)
    t, f, n = (sum(c[m] for m in MODALITIES) for c in (tp, fp, fn))
    overall = Score("overall", _ratio(t, t + f), _ratio(t, t + n), t + n)
    return Evaluation(per, overall, tuple(errors))
