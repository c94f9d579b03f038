"""Which cues count in an ordinary note (memory, daily notes, how-to pages) as opposed to an instruction note.

An instruction note (AGENTS.md, CLAUDE.md, ``botbin: instructions``) is addressed to the agent: every
imperative in it is a command, "you can" grants a permission. Any other note is written for a human reader
or records what happened, so only words that carry deontic force on their own make a rule there:

- modal necessity and its negation ("must", "must not", "need to", "have to", "shall"), deontic status words
  ("is required", "is forbidden", "is not allowed"), "should" (a recommendation);
- deontic openers: "Never ...", "Always ...", "Do not ...", "Don't ...", "Avoid ...", "Make sure ...",
  "Be sure to ...", "Remember to ...", "Don't forget to ...", "Stop ...ing", "Refrain from ...";
- a bare imperative ("Use tabs.") only with a standing-time marker that says it is meant to last
  ("From now on, answer in French.", "Going forward, cc Priya.").

What does not count there: procedure steps for a reader ("Click **Settings**", "Press Ctrl+P", "Select
...", "Try restarting"), capability and possibility ("you can", "you may", "you can't": dynamic or epistemic
modality, not permission), habits and descriptions ("you don't need an account", "you always see ..."), and
means-end necessity, von Wright's technical norms ("To use Sync, you must sign in", "You need to restart
Obsidian for the change to take effect", "If you want X, you have to Y"): a fact about how a tool works,
not a rule to follow.
"""

from __future__ import annotations

from collections.abc import Sequence

from botbin.directives import words as w
from botbin.directives.cues import Tok, word_at

#: Word sequences that make an imperative a standing instruction ("From now on, reply in French").
STANDING_MARKERS: tuple[tuple[str, ...], ...] = (
    ("from", "now", "on"),
    ("going", "forward"),
    ("henceforth",),
    ("from", "here", "on"),
    ("from", "today", "on"),
    ("in", "future"),
    ("in", "the", "future"),
    ("at", "all", "times"),
    ("every", "single", "time"),
    ("from", "this", "point", "on"),
)
#: Words that, right before "to", belong to the cue or its complement, not to a purpose clause.
_TO_HEADS = frozenset(
    "need needs have has ought able going want wants required allowed permitted free "
    "important essential necessary crucial vital better best good forget remember sure supposed due used try".split()
)
#: Goal conditions: "if you want to", "if you'd like to", "if you wish to".
_GOAL_VERBS = frozenset("want wish like prefer plan intend need".split())


_MARKERS_BY_FIRST: dict[str, tuple[tuple[str, ...], ...]] = {
    first: tuple(m for m in STANDING_MARKERS if m[0] == first) for first in {m[0] for m in STANDING_MARKERS}
}
"""STANDING_MARKERS by first word: a sentence is scanned once, not once per marker (a hot spot of big notes)."""


def has_standing_marker(toks: Sequence[Tok]) -> bool:
    """True when the sentence says its command is meant to last ("from now on", "going forward")."""
    words = [t.word for t in toks]
    return any(
        tuple(words[k : k + len(m)]) == m
        for k, word in enumerate(words)
        if word in _MARKERS_BY_FIRST
        for m in _MARKERS_BY_FIRST[word]
    )


def means_end(toks: Sequence[Tok]) -> bool:
    """True for a means-end (anankastic) sentence: a purpose clause ("To use X, ...", "... in order to ...",
    "... for X to work", "... to enable it") or a goal condition ("If you want to X, ...")."""
    if word_at(toks, 0) == "to" and any(t.comma_after for t in toks):
        return True  # "To achieve this, you must host your own server"
    for k, tok in enumerate(toks):
        nxt = word_at(toks, k + 1)
        if tok.word == "to" and (nxt in w.IMPERATIVE_VERBS or nxt == "be") and word_at(toks, k - 1) not in _TO_HEADS:
            return True  # "To use Sync, you must ...", "You must sign in to use Sync"
        if tok.word == "order" and word_at(toks, k - 1) == "in" and nxt == "to":
            return True
        if tok.word in ("so", "such") and nxt == "that":
            return True
        if tok.word == "if" and any(t.word in _GOAL_VERBS for t in toks[k + 1 : k + 4]):
            return True  # "If you want to keep your history, you need to ..."
    return False


#: Modals that make a following necessity a possibility or a forecast: "you may need to", "you'll have to".
_HEDGING_MODALS = frozenset("may might could will would won't you'll we'll they'll i'll it'll you'd likely".split())
#: Subordinators: a cue after one (no comma between) sits in a subordinate clause, not the main one.
_SUBORDINATE = frozenset("when whenever if unless because since while although though whether once".split())


def counts_in_notes(modality: str, toks: Sequence[Tok], cue_start: int, modal: bool = True) -> bool:
    """Whether an explicit cue of ``modality`` (starting at character ``cue_start``) found in ``toks`` still
    counts in an ordinary note. Not: a necessity that states a means to an end, a necessity under a hedging
    or future modal ("You may need to restart", "You'll need to log in again"), a cue inside a subordinate
    clause ("This is useful when you need to ..."). A prohibition with a purpose is still a ban ("To keep the
    vault safe, never share your password"). ``modal`` False: a clause opener ("Make sure", "Always"), which
    is only checked for a constitutive "make sure" (see constitutive)."""
    i = next((k for k, t in enumerate(toks) if t.start >= cue_start), len(toks))
    for tok in reversed(toks[:i]):
        if tok.comma_after:
            break
        if tok.word in _SUBORDINATE:
            return False
    if modality == "prohibition" and modal:
        return not constitutive(toks, i)  # "The file name must not contain a colon"
    if modality != "obligation":
        return True
    if not modal:
        return not constitutive(toks, i) or _addresses_reader(toks, i)
    return word_at(toks, i - 1) not in _HEDGING_MODALS and not means_end(toks) and not constitutive(toks, i)


def _addresses_reader(toks: Sequence[Tok], i: int) -> bool:
    """True when "Always" or "Never" opens the clause and a base-form verb follows: a command to the reader,
    whatever the verb ("Always include the ticket link", "Never start a call late"), not a description of a
    thing ("Always contains a date")."""
    opens = all(t.word in w.SKIP_OPENERS for t in toks[:i]) or toks[i - 1].comma_after
    return toks[i].word in ("always", "never") and opens and not _third_person(word_at(toks, i + 1))


def _third_person(word: str) -> bool:
    return word in ("is", "are", "has", "does", "was", "were") or (word.endswith("s") and word[:-1] in _STATIVE)


#: Stative predicates: "X must be valid YAML", "Tags must contain a letter", "The name must match the ID".
_STATIVE = frozenset(
    "be contain contains match include exist have equal consist start end begin point remain "
    "stay fit conform adhere correspond refer support look appear".split()
)
#: Subjects that make a necessity bind a person: "you must", "we need to", "everyone must".
_AGENTS = frozenset(
    "you u we i everyone everybody anyone someone people users user team collaborators "
    "members admins authors contributors developers".split()
)


def constitutive(toks: Sequence[Tok], i: int) -> bool:
    """True for a constitutive rule, one that says what a thing must be rather than what someone must do
    (Searle's constitutive vs regulative rules): a non-personal subject and a stative predicate ("Bases must
    be valid YAML", "Tags must contain a letter", "Obsidian must be running"). Token ``i`` is the modal; an
    agentless passive of an action ("Secrets must be kept out of git") still binds whoever acts, so it counts.
    ``make sure`` followed by a state of a thing is a check of that state ("Make sure the plugin is enabled")."""
    word, j = word_at(toks, i), i + 1
    if word in ("necessary", "essential", "crucial", "vital", "important"):
        subject = word_at(toks, i - 2) if word_at(toks, i - 1) in ("is", "are") else "it"
        return subject not in _AGENTS and subject not in ("it", "it's", "this", "that")  # "X is necessary to Y"
    if word == "make" and word_at(toks, i + 1) == "sure":
        rest = [t.word for t in toks[i + 2 : i + 8]]
        if rest[:1] == ["that"]:
            rest = rest[1:]
        return (
            bool(rest)
            and rest[0] not in _AGENTS
            and rest[0] != "to"
            and not any(r in _AGENTS for r in rest[:2])
            and any(r in ("is", "are", "has", "have", "exists") for r in rest)
        )
    if word in ("need", "needs", "have", "has") and word_at(toks, i + 1) == "to":
        j = i + 2
    while word_at(toks, j) in ("also", "always", "still", "first", "exactly", "only", "not", "never"):
        j += 1
    verb = word_at(toks, j)
    if verb not in _STATIVE:
        return False
    if verb == "be":
        after = word_at(toks, j + 1)
        if after.endswith("ed") or after in w.IRREGULAR_PARTICIPLES:
            return False  # "must be kept", "must be reviewed": an action by whoever is in charge
    subject = next((t.word for t in reversed(toks[:i]) if t.word not in w.ADVERBS), "")
    return subject not in _AGENTS
