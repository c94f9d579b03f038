"""Precision and recall of the lexer on labeled sentences (``tests/fixtures/directives/*.jsonl``)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from botbin.directives.lexer import MODALITIES, classify

LABELS = (*MODALITIES, "none")


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


def load_labeled(path: Path) -> list[tuple[str, str]]:
    """(text, modality) pairs from a JSONL file of ``{"text", "modality", ...}``. Raises ValueError on a bad line."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if row.get("modality") not in LABELS or not isinstance(row.get("text"), str):
                raise ValueError(f"{path}:{number}: needs a text and a modality in {LABELS}")
            rows.append((row["text"], row["modality"]))
    return rows


def _ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


def evaluate(rows: list[tuple[str, str]]) -> Evaluation:
    """Classify every text and score it against its label."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    errors = []
    for text, gold in rows:
        predicted = classify(text) or "none"
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
