"""Why a hit ranked where it did: its score taken apart into what each ranking term added (index/ranking.py
``hybrid`` and ``add_context``, then memory/lifecycle.py ``rank``), for a person reading a search. Pure.

The parts add up to the hit's score: the weighted cosine and keyword weight, the note and neighbour terms (all
over ``1 + note_weight + neighbour_weight`` when those terms apply), what the bounds on them gave back (a chunk
keeps most of its own match, ranking.CONTEXT_MAX_LOSS and KEYWORD_KEEP_SHARE), and what decay took.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from botbin.index.hits import Hit

#: Parts smaller than this (float32 rounding) are left out.
_EPSILON = 1e-4


@dataclass(frozen=True)
class Weights:
    """The ranking weights a search ran with (botbin.toml ``alpha``, ``note_weight``, ``neighbour_weight``,
    ``decay_weight``)."""

    alpha: float
    """Weight of the cosine in the hybrid, in [0, 1] (the rest is the keyword weight's)."""
    note_weight: float
    """Weight of the note-level cosine."""
    neighbour_weight: float
    """Weight of the neighbours' mean cosine."""
    decay_weight: float
    """Weight of memo decay (``score * (1 - w + w * decay)``)."""


@dataclass(frozen=True)
class ScorePart:
    """One term of a hit's score."""

    name: str
    """``cosine``, ``keywords``, ``note``, ``neighbours``, ``bound``, ``decay`` or ``agent`` (agent recall's
    recency and scope)."""
    value: float
    """The term's own value: a cosine in [-1, 1], the keyword weight or the decay factor in [0, 1]; for
    ``bound`` and ``agent``, the points themselves."""
    points: float
    """What it adds to the score (negative: what it takes away)."""


def score_parts(hit: Hit, weights: Weights, degraded: bool = False) -> tuple[ScorePart, ...]:
    """The parts of ``hit.score``, in the order the stages apply them; they sum to ``hit.score`` (up to rounding).
    ``degraded``: the search ran without the model (keywords alone)."""
    stages = dict(hit.components)
    index_score = stages.get("hybrid", hit.score)
    alpha = 0.0 if degraded else weights.alpha
    nw, bw = weights.note_weight, weights.neighbour_weight
    context = not degraded and 0.0 < alpha < 1.0 and (nw > 0 or bw > 0)
    scale = 1.0 + nw + bw if context else 1.0
    parts = [ScorePart("cosine", hit.cosine, alpha * hit.cosine / scale)] if alpha > 0 else []
    if alpha < 1.0:
        parts.append(ScorePart("keywords", hit.bm25, (1.0 - alpha) * hit.bm25 / scale))
    if context:
        parts.append(ScorePart("note", hit.note_cosine, nw * hit.note_cosine / scale))
        parts.append(ScorePart("neighbours", hit.neighbour_cosine, bw * hit.neighbour_cosine / scale))
    running = sum(p.points for p in parts)
    if abs(index_score - running) > _EPSILON:
        parts.append(ScorePart("bound", index_score - running, index_score - running))
    running = index_score
    if "decay" in stages:
        decay = stages["decay"]
        ranked = index_score * (1.0 - weights.decay_weight + weights.decay_weight * decay)
        parts.append(ScorePart("decay", decay, ranked - index_score))
        running = ranked
    if abs(hit.score - running) > _EPSILON:
        parts.append(ScorePart("agent", hit.score - running, hit.score - running))
    return tuple(parts)
