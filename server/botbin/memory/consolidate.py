"""Consolidation into roots (DESIGN section 8): which memos become durable, and their extractive summary.

A root is one line of readable text with links to its source memos. Three reasons make a memo durable:

- ``recurs``: memos of at least two different notes (sessions) whose embeddings have cosine >=
  ``consolidate_duplicate_cosine`` (0.85: all-MiniLM-L6-v2 paraphrases of one fact score about 0.8-0.95,
  different facts on one topic under 0.8, as measured on the STS benchmark by sentence-transformers);
- ``reinforced``: a memo retrieved at least ``consolidate_min_reinforcement`` times (3);
- ``stated``: a sentence that states a stable preference or fact in the first person ("I prefer", "my X is",
  "we always" ...), or a lasting rule (the deontic lexer finds a cue, and "always", "never", "must" or
  "do not" says it lasts: "Always run the tests", not the to-do "Update the docs").

The extractive summary of a group is its sentence closest to the group's centroid (a medoid, as in
centroid-based summarization, Radev et al. 2004): deterministic, offline, and verbatim from the sources.
Pure: embeddings come in as arrays; ``embed`` is called only on sentences.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from botbin.directives.lexer import classify, sentence_spans

#: First-person statements of lasting facts and preferences (English; other languages rely on recurrence).
STABLE_FACT = re.compile(
    r"\b(?:I|we)\s+(?:really\s+)?(?:prefer|like|love|hate|dislike|always|never|usually|use|work|live)\b"
    r"|\bmy\s+(?:[\w'\u2019-]+\s+){0,3}(?:is|are|was|has|lives|works)\b|\b(?:called|named)\s+[A-Z]"
    r"|\bfavou?rite\b|\bprefers?\b",
    re.IGNORECASE,
)
#: Words that make a rule lasting rather than a to-do ("Always run the tests" vs "Update the docs").
DURABLE_RULE = re.compile(r"\b(?:always|never|must|must not|do not|don't|shall)\b", re.IGNORECASE)
MAX_PAIRWISE = 20_000
"""Most memos compared pairwise for recurrence (the newest ones); beyond that the cost grows as n^2."""


@dataclass(frozen=True)
class Candidate:
    """A live memo offered for consolidation."""

    id: str
    path: str
    start_line: int
    end_line: int
    text: str
    kind: str
    """'hard', 'soft' or 'lore'."""
    reinforcement_count: int
    row: int
    """Row of its embedding in the matrix passed to ``find_groups``."""


@dataclass(frozen=True)
class Group:
    """Memos that consolidate into one root, and why."""

    members: tuple[Candidate, ...]
    reason: str
    """'recurs', 'reinforced' or 'stated'."""
    sentence: str | None = None
    """For 'stated': the sentence that states the fact."""


@dataclass(frozen=True)
class Root:
    """One durable root: its text, sources and reason."""

    text: str
    sources: tuple[Candidate, ...]
    reason: str
    abstractive: bool = False
    """True when an LLM wrote ``text`` and it passed the closeness check."""


def split_sentences(text: str) -> list[str]:
    """Sentences of a chunk of 3 words or more, whitespace collapsed (list and heading markers left out, and
    sentences that hold a code block)."""
    return [
        " ".join(text[s:e].split())
        for s, e in sentence_spans(text)
        if len(text[s:e].split()) >= 3 and "```" not in text[s:e] and "~~~" not in text[s:e]
    ]


def states_fact(sentence: str) -> bool:
    """A first-person statement of a lasting fact or preference, or a rule (the deontic lexer's cue)."""
    if STABLE_FACT.search(sentence):
        return True
    return bool(DURABLE_RULE.search(sentence)) and classify(sentence) is not None


def _recurring(cands: list[Candidate], matrix: npt.NDArray[np.float32], threshold: float) -> list[list[int]]:
    """Connected groups (union-find) of candidates of >= 2 notes linked by cosine >= ``threshold``."""
    idx = np.array([c.row for c in cands], dtype=np.int64)
    vecs = matrix[idx]
    parent = list(range(len(cands)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for start in range(0, len(cands), 512):
        sims = vecs[start : start + 512] @ vecs.T
        for a, b in zip(*np.nonzero(sims >= threshold), strict=True):
            i, j = start + int(a), int(b)
            if i < j and cands[i].path != cands[j].path:
                parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(cands)):
        groups.setdefault(find(i), []).append(i)
    return [g for g in groups.values() if len({cands[i].path for i in g}) >= 2]


def find_groups(
    cands: list[Candidate], matrix: npt.NDArray[np.float32], duplicate_cosine: float, min_reinforcement: int
) -> list[Group]:
    """Groups to consolidate, in a stable order (recurring, then reinforced, then stated; by path, line).

    ``matrix``: float32 (n, dim), normalized rows; a candidate's ``row`` points into it. Each candidate
    joins at most one group; only the newest MAX_PAIRWISE candidates are compared for recurrence.
    """
    ordered = sorted(cands, key=lambda c: (c.path, c.start_line))
    used: set[str] = set()
    groups: list[Group] = []
    pairwise = ordered[-MAX_PAIRWISE:] if len(ordered) > MAX_PAIRWISE else ordered
    for members in _recurring(pairwise, matrix, duplicate_cosine) if pairwise else []:
        group = tuple(pairwise[i] for i in sorted(members, key=lambda i: (pairwise[i].path, pairwise[i].start_line)))
        groups.append(Group(group, "recurs"))
        used.update(c.id for c in group)
    for c in ordered:
        if c.id not in used and c.reinforcement_count >= min_reinforcement:
            groups.append(Group((c,), "reinforced"))
            used.add(c.id)
    for c in ordered:
        if c.id in used:
            continue
        stated = [s for s in split_sentences(c.text) if states_fact(s)]
        if stated:
            groups.append(Group((c,), "stated", stated[0]))
            used.add(c.id)
    return groups


def extractive(
    group: Group, matrix: npt.NDArray[np.float32], embed: Callable[[list[str]], npt.NDArray[np.float32]]
) -> Root:
    """The group's sentence closest to its centroid (or the stated sentence), verbatim."""
    if group.sentence is not None:
        return Root(group.sentence, group.members, group.reason)
    sents = [s for c in group.members for s in split_sentences(c.text)]
    if not sents:
        sents = [" ".join(group.members[0].text.split())]
    centroid = matrix[[c.row for c in group.members]].mean(axis=0)
    best = int(np.argmax(embed(sents) @ centroid)) if len(sents) > 1 else 0
    return Root(" ".join(sents[best].split()), group.members, group.reason)
