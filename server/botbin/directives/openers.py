"""Clause openers: cues that count only at the start of a (main) clause, above all imperative verbs.

"Use tabs.", "Never push to main.", "No emojis in commit messages.", "If the build fails, revert it.",
"Perhaps use a dataclass" (advice), "Swap the butter for oil if you like" (a choice).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from botbin.directives import words as w
from botbin.directives.cues import FILLER, Found, Tok, is_past, span, word_at
from botbin.directives.leadins import lead_end
from botbin.directives.register import STANDING_MARKERS


def _at_clause_starts(toks: Sequence[Tok], masked: str) -> list[int]:
    """Indices where a clause that may hold an imperative starts: the sentence start (past its lead-ins: "By the
    way, ...", leadins.py), after a lead clause, and after a standing marker that opens one of these ("Okay,
    going forward, stop ...")."""
    base = lead_end(toks)
    i = base
    while (
        i < len(toks) - 1
        and toks[i].word in w.SKIP_OPENERS
        and not toks[i].comma_after
        and not (toks[i].word == "to" and any(t.comma_after for t in toks[i:]))
    ):  # "To avoid conflicts, disable X": a purpose clause leads, the command follows its comma
        i += 1
    starts = [i]
    if toks[i].word in w.CLAUSE_OPENERS or toks[base].word in w.CLAUSE_OPENERS:
        for j in range(base, len(toks) - 1):
            if toks[j].comma_after:
                k = j + 1
                while k < len(toks) - 1 and toks[k].word in w.SKIP_OPENERS:
                    k += 1
                starts.append(k)
                break
    else:  # "Also, use tabs", "Going forward, cc Priya": a short lead phrase, then the command
        lead = next((k for k in range(i, min(i + 3, len(toks) - 1)) if toks[k].comma_after), None)
        if lead is not None:
            starts.append(lead + 1)
    for start in list(starts):
        marker = _standing_lead(toks, start)
        if marker is not None and marker not in starts:
            starts.append(marker)  # "From now on please book aisle seats": the marker leads without a comma
    return starts + _coordinated(toks, masked, starts)


#: Conjunctions that open a main clause after a comma ("..., so always loop him in").
_COORDINATORS = frozenset("so and but then".split())
#: Words that carry a rule on their own at the start of such a clause.
_COORDINATED_OPENERS = frozenset("always never don't avoid stop remember make refrain".split())


def _coordinated(toks: Sequence[Tok], masked: str, starts: list[int]) -> list[int]:
    """Starts of main clauses joined by ", so" / ", and" / ", but" / ", then" that open with a deontic word:
    "Jonas handles the contracts now, so always loop him in", "The standup is at 9:30, so always plan around it"."""
    out: list[int] = []
    for j in range(len(toks) - 2):
        if toks[j + 1].word in _COORDINATORS and "," in masked[toks[j].end : toks[j + 1].start]:
            k = j + 2
            while k < len(toks) - 1 and toks[k].word in w.SKIP_OPENERS:
                k += 1
            if toks[k].word in _COORDINATED_OPENERS and k not in starts:
                out.append(k)
    return out


def _standing_lead(toks: Sequence[Tok], i: int) -> int | None:
    """Where the command starts after a standing marker that opens the sentence at ``i`` ("From now on ...")."""
    words = tuple(t.word for t in toks[i : i + 5])
    for marker in STANDING_MARKERS:
        if words[: len(marker)] == marker:
            k = i + len(marker)
            while k < len(toks) - 1 and toks[k].word in w.SKIP_OPENERS:
                k += 1
            return k if k < len(toks) else None
    return None


_HEDGED_LEAD = ("possible", "feasible", "practical", "doubt")
_HEDGED_TAIL = (
    ("when", "possible"),
    ("if", "possible"),
    ("where", "possible"),
    ("if", "you", "can"),
    ("if", "feasible"),
    ("when", "practical"),
    ("where", "practical"),
)
_OPTIONAL_TAIL = (("if", "you", "like"), ("if", "you", "want"), ("if", "you", "prefer"), ("if", "you", "wish"))


def clause_start_cue(toks: Sequence[Tok], masked: str, s: int, bare: bool = True) -> Found | None:
    """The cue opening the sentence or its main clause; "if possible" makes it advice, "if you like" a choice.

    ``bare`` False (an ordinary note, see register.py): a plain imperative ("Click Settings", "Use tabs") is
    a step for a reader, not a rule; only deontic openers count ("Never", "Always", "Don't", "Make sure").
    """
    lead = masked[s : toks[0].start]
    if any(ch.isalnum() or ch == FILLER for ch in lead):
        return None  # "- 14:00 sync with design", "`code` does": a time, a number or code opens it, not a verb
    for i in _at_clause_starts(toks, masked):
        found = _opener(toks, i, bare)
        if found is None:
            continue
        if found[0] == "obligation" and i > 0 and toks[i - 1].word in _HEDGED_LEAD:
            return ("recommendation", *found[1:])  # "Where possible, reuse the client"
        if found[0] == "prohibition" and i > 0 and toks[i - 1].word in _HEDGED_LEAD:
            return ("recommendation", found[1], found[2], False)
        words = tuple(t.word for t in toks)
        hedged = toks[0].word in w.HEDGES or any(
            words[k : k + len(t)] == t for t in _HEDGED_TAIL for k in range(len(words))
        )
        if hedged and found[0] in ("obligation", "prohibition"):
            return ("recommendation", found[1], found[2], found[0] == "obligation")  # "Use rg when possible"
        if found[0] == "obligation" and any(words[k : k + 3] in _OPTIONAL_TAIL for k in range(len(words))):
            return ("permission", *found[1:])  # "Swap the butter for olive oil if you like"
        return found
    return None


def _opener(toks: Sequence[Tok], i: int, bare: bool = True) -> Found | None:
    """A cue that counts only when it opens the clause: an imperative verb, "Never ...", "No ...", "Avoid ...".

    ``bare`` False: deontic openers only (see clause_start_cue).
    """
    word, nxt = toks[i].word, word_at(toks, i + 1)
    if word in w.HEDGES and i + 1 < len(toks):
        j = i + 1
        while j < len(toks) - 1 and toks[j].word in w.HEDGES:  # a loop, not recursion: "perhaps maybe ..."
            j += 1
        found = _opener(toks, j, bare) or _bare_opener(toks, j)  # a hedged imperative is advice in any note
        if found is not None and found[0] == "obligation":
            return ("recommendation", toks[i].start, found[2], True)  # "Perhaps use a dataclass"
        return found
    reported = is_past(nxt) and nxt not in w.IMPERATIVE_VERBS  # "Always put ...", "Never set ...": rules
    if word in ("never", "always") and (reported or nxt in ("again", "been")):
        return None  # "Never ran into this", "Always been a night owl": a report, not a rule
    if word == "never":
        return ("prohibition", *span(toks, i, i), False)
    if word == "don't" and nxt in ("know", "think", "care", "recall", "understand"):
        return None  # "Don't know yet whether ...": a note to self
    if word == "not" and nxt == "to" and word_at(toks, i + 2) in w.IMPERATIVE_VERBS:
        return ("prohibition", *span(toks, i, i + 1), False)  # "Please not to use the staging DB"
    if word in ("don't", "do") and "bother" in (nxt, word_at(toks, i + 2)):
        return ("permission", *span(toks, i, i + 1 + (word == "do")), True)  # an exemption, not a ban
    if word == "remember" and nxt == "to":
        return ("obligation", *span(toks, i, i + 1), True)  # "Remember to ..." (not "Remember that ...")
    found = _deontic_opener(toks, i)
    if found is not None or not bare:
        return found
    return _bare_opener(toks, i)


def _deontic_opener(toks: Sequence[Tok], i: int) -> Found | None:
    """An opener whose words carry the rule on their own ("Never", "Always", "Don't", "Avoid", "Make sure")."""
    word, nxt = toks[i].word, word_at(toks, i + 1)
    if (word == "quit" and nxt.endswith("ing")) or (word == "hold" and nxt == "off"):
        return ("prohibition", *span(toks, i, i + 1), False)
    if word == "not" and nxt in w.IMPERATIVE_VERBS:
        return ("prohibition", *span(toks, i, i + 1), False)  # "Not use tabs", "Please not commit"
    if word == "refrain" or (word == "steer" and nxt == "clear"):
        return ("prohibition", *span(toks, i, i + 1), False)
    if word == "always":
        return ("obligation", *span(toks, i, i), True)
    if word in ("don't", "do") and (word == "don't" or nxt == "not"):
        return ("prohibition", *span(toks, i, i if word == "don't" else i + 1), False)
    if word == "avoid":
        return ("prohibition", *span(toks, i, i), False)
    if word == "stop" and nxt.endswith("ing"):
        return ("prohibition", *span(toks, i, i), False)
    if word in ("make", "be") and nxt == "sure":
        return ("obligation", *span(toks, i, i + 1), True)
    if word == "go" and nxt == "ahead":
        return ("permission", *span(toks, i, i + 1), True)  # "Go ahead and archive old notes": a grant
    if word in ("prefer", "consider"):
        negated = nxt == "not"
        return ("recommendation", *span(toks, i, i + 1 if negated else i), not negated)
    return None


def _bare_opener(toks: Sequence[Tok], i: int) -> Found | None:
    """A plain imperative, a command only where the note is addressed to the agent ("Use tabs", "No emojis")."""
    word, nxt = toks[i].word, word_at(toks, i + 1)
    if (
        (word == "go" and nxt == "easy")
        or word in ("favor", "favour", "aim")
        or (word == "lean" and nxt in ("towards", "toward"))
    ):
        return ("recommendation", *span(toks, i, i), True)
    if word in ("keep", "leave") and _keep_away(toks, i):
        return ("prohibition", *span(toks, i, i), False)  # "Keep API keys out of the repo", "Leave X alone"
    if word == "back" and nxt == "up":
        return ("obligation", *span(toks, i, i + 1), True)
    if word == "no" and _is_ban(toks, i):
        return ("prohibition", *span(toks, i, i), False)
    if word == "try":
        negated = nxt == "not"
        return ("recommendation", *span(toks, i, i + 1 if negated else i), not negated)
    if (word in w.IMPERATIVE_VERBS or _unknown_verb(toks, i)) and _imperative(toks, i):
        return ("obligation", *span(toks, i, i), True)
    return None


def _keep_away(toks: Sequence[Tok], i: int) -> bool:
    words = [t.word for t in toks[i + 1 :]]
    if toks[i].word == "leave":
        return "alone" in words
    return (
        any((a == "out" and b == "of") or (a == "away" and b == "from") for a, b in itertools.pairwise(words))
        or "off" in words
    )


def _unknown_verb(toks: Sequence[Tok], i: int) -> bool:
    """A word the verb list lacks that still opens a command: "Preheat the oven", "Label the bags"."""
    word = toks[i].word
    return (
        word_at(toks, i + 1) in w.DETERMINERS
        and word not in w.NOT_IMPERATIVE
        and word not in w.THIRD_PERSON
        and not word.endswith(("s", "ed", "ing", "ly"))
        and word.isalpha()
    )


def _is_ban(toks: Sequence[Tok], i: int) -> bool:
    """ "No emojis in commit messages." is a ban; "No, we chose Postgres" and "No cache is used" are not."""
    if toks[i].comma_after or i + 1 >= len(toks) or toks[i + 1].word in w.NO_NOT_BAN:
        return False
    rest = list(toks[i + 1 :])
    for k, tok in enumerate(rest):
        if tok.word in _SUBORDINATORS:
            rest = rest[:k]  # "No force pushes after review has started": the verb is in the time clause
            break
    if any(t.word in w.STATEMENT_VERBS or t.word == "yet" for t in rest):
        return False
    # "No tests cover the export path": a plural noun followed by a base verb is a statement
    return not any(a.word.endswith("s") and b.word in w.IMPERATIVE_VERBS for a, b in itertools.pairwise(rest))


def _imperative(toks: Sequence[Tok], i: int) -> bool:
    """True when the verb at ``i`` opens a command, not a noun phrase ("Test results were good", "Use of")."""
    nxt = word_at(toks, i + 1)
    if nxt in w.NOUN_MARKERS or nxt in w.FINITE_AUX:
        return False
    if nxt in _OBJECT_STARTERS or nxt in w.DETERMINERS:
        return True
    if nxt.endswith("s") and word_at(toks, i + 2) in w.IMPERATIVE_VERBS:
        return False  # "Commit messages follow Conventional Commits": a plural noun and its verb
    for tok in toks[i + 1 :]:  # "Build failures on ARM are tracked": a noun phrase, then its verb
        if tok.word in _SUBORDINATORS or tok.comma_after:
            return tok.word not in w.FINITE_AUX
        if tok.word in w.FINITE_AUX:
            return False
    return True


_SUBORDINATORS = frozenset("after before when while until unless because since if once where so that which".split())
_OBJECT_STARTERS = frozenset(
    "the a an this that these those it them your my our all every each what which how who whatever whoever "
    "to up out in on off back down away only just its his her their".split()
)
