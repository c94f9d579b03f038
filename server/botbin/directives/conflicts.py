"""Conflicting directives: two rules on the same action with opposite polarity ("always use tabs" / "never use tabs").

The action of a cue is the rest of its sentence after the cue ("never | use tabs"), or the sentence from an
imperative verb ("Answer in English"), up to the first comma, colon, semicolon or dash. Actions compare as
normalized word sequences and must be equal: a qualified rule ("never use tabs in YAML files") is an
exception to "always use tabs", not a contradiction. Opposite polarity:
one rule says do (obligation, recommendation, permission), the other says do not (prohibition, "should
not"). Permission against permission never conflicts.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from botbin.directives.partition import Directive, RuleCue
from botbin.directives.words import IMPERATIVE_VERBS

_WORD = re.compile(r"[\w'-]+")
_FILLER = frozenset(
    "to be the a an please ever always never any all that you we it your our just really also do does".split()
)
_CLAUSE_END = re.compile(r"[,;:()\u2014]|\s-\s")
_MAX_WORDS = 8
#: At most this many conflicts are reported (a pasted list of 1000 contradicting rules stays readable).
MAX_CONFLICTS = 200


@dataclass(frozen=True)
class RuleRef:
    """One side of a conflict."""

    directive: Directive
    cue: RuleCue


@dataclass(frozen=True)
class Conflict:
    """Two directives that say opposite things about one action."""

    action: str
    """The shared action, normalized ("use tabs")."""
    first: RuleRef
    """The rule that says do (or the earlier one, when both are prohibitions of opposite sense)."""
    second: RuleRef
    """The rule that says do not."""

    def describe(self) -> str:
        """One line naming both rules and their 1-based lines: ``"Always use tabs" (AGENTS.md:7) conflicts ..."``."""
        a, b = self.first, self.second
        return (
            f'"{a.cue.phrase}" ({a.directive.path}:{a.cue.line + 1}) conflicts with '
            f'"{b.cue.phrase}" ({b.directive.path}:{b.cue.line + 1})'
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON: ``{action, message, first: {path, line, kind, modality, cue, text}, second: {...}}``, 0-based lines."""
        return {
            "action": self.action,
            "message": self.describe(),
            "first": _ref_dict(self.first),
            "second": _ref_dict(self.second),
        }


def _ref_dict(ref: RuleRef) -> dict[str, Any]:
    return {
        "path": ref.directive.path,
        "line": ref.cue.line,
        "kind": ref.directive.kind,
        "modality": ref.cue.modality,
        "cue": ref.cue.cue,
        "text": ref.cue.phrase,
    }


def _lemma(word: str) -> str:
    """Base form of a leading -ing verb ("using" -> "use", "pushing" -> "push"), else the word."""
    if word.endswith("ing") and len(word) > 4:
        stem = word[:-3]
        for base in (stem, stem + "e", stem[:-1]):
            if base in IMPERATIVE_VERBS:
                return base
    return word


def normalize_action(action: str) -> tuple[str, ...]:
    """Content words of an action, casefolded, up to the first clause break, at most 8 words."""
    clause = _CLAUSE_END.split(action.lstrip(" ,;:\u2014-"), maxsplit=1)[0]  # "Never, ever use tabs"
    words = [w.casefold().strip("'-") for w in _WORD.findall(clause)]
    words = [w for w in words if w and w not in _FILLER][:_MAX_WORDS]
    if words:
        words[0] = _lemma(words[0])
    return tuple(words)


def find_conflicts(directives: Iterable[Directive]) -> list[Conflict]:
    """Every pair of cues on the same action with opposite polarity, in source order of the first rule."""
    by_head: dict[str, list[tuple[tuple[str, ...], RuleRef]]] = defaultdict(list)
    for directive in directives:
        for cue in directive.cues:
            words = normalize_action(cue.action)
            if words:
                by_head[words[0]].append((words, RuleRef(directive, cue)))
    conflicts: list[Conflict] = []
    seen: set[tuple[int, int]] = set()
    repeated: set[tuple[str, str]] = set()
    for group in by_head.values():
        # Only a cue of the same words and the other polarity can conflict: look those up instead of trying
        # every pair of the head's group (a big note's hundreds of "use ..." rules made it quadratic).
        opposite: dict[tuple[tuple[str, ...], bool], list[int]] = defaultdict(list)
        for j, (words_b, b) in enumerate(group):
            opposite[(words_b, not b.cue.positive)].append(j)
        for i, (words_a, a) in enumerate(group):
            later = opposite.get((words_a, a.cue.positive), [])
            for j in later[bisect_right(later, i) :]:
                b = group[j][1]
                if a.directive is b.directive and a.cue.line == b.cue.line and a.cue.cue == b.cue.cue:
                    continue
                if _scoped_apart(a, b):
                    continue
                same_words = (a.cue.phrase, b.cue.phrase)
                if same_words in repeated:
                    continue  # the same two rules again elsewhere: one report is enough
                repeated.add(same_words)
                key = (id(a), id(b))
                if key in seen:
                    continue
                seen.add(key)
                do, dont = (a, b) if a.cue.positive else (b, a)
                conflicts.append(Conflict(" ".join(words_a), do, dont))
    conflicts.sort(key=lambda c: (c.first.directive.path, c.first.cue.line, c.second.directive.path, c.second.cue.line))
    return conflicts[:MAX_CONFLICTS]


def _scoped_apart(a: RuleRef, b: RuleRef) -> bool:
    """Rules of one note under different headings ("## Python: use tabs" / "## YAML: never use tabs") apply
    to different things, so they do not conflict; rules in different notes always can."""
    da, db = a.directive, b.directive
    return da.path == db.path and bool(da.heading_path or db.heading_path) and da.heading_path != db.heading_path
