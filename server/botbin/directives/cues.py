"""Explicit deontic cues: modal verbs, status words and adverbs that mark a rule wherever they stand.

"must not", "should", "you may", "is forbidden", "never fail to", "you don't have to", ... Each function
takes the sentence's tokens and an index and returns ``(modality, start, end, positive)`` or None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

from botbin.directives import words as w

Modality = Literal["obligation", "prohibition", "recommendation", "permission"]
#: A cue found in a sentence: modality, character start and end, and whether the rule says "do".
Found = tuple[Modality, int, int, bool]
#: What masked text is replaced with: not a word, not a space, so "(`Go` 1.23)" cannot open a sentence.
FILLER = "\x00"


class Tok(NamedTuple):
    """One word of a sentence (masked text), lowercased."""

    word: str
    """Lowercase word, straight apostrophe."""
    start: int
    end: int
    comma_after: bool


def word_at(toks: Sequence[Tok], i: int) -> str:
    """The word at ``i``, or "" outside the sentence."""
    return toks[i].word if 0 <= i < len(toks) else ""


def span(toks: Sequence[Tok], i: int, j: int) -> tuple[int, int]:
    """Character span from token ``i`` to token ``j`` (inclusive, clamped to the sentence)."""
    return toks[i].start, toks[min(j, len(toks) - 1)].end


def is_past(word: str) -> bool:
    """True for a past-tense form ("used", "ran")."""
    return word in w.IRREGULAR_PAST or (word.endswith("ed") and word not in w.ED_BASE_FORMS)


def is_participle(word: str) -> bool:
    """True for a past participle ("kept", "reviewed")."""
    return word in w.IRREGULAR_PARTICIPLES or (word.endswith(("ed", "en")) and word not in w.ED_BASE_FORMS)


def explicit_cue(toks: Sequence[Tok], instructions: bool = True) -> Found | None:
    """The earliest cue that does not depend on the clause opening with it.

    ``instructions`` False (an ordinary note, see register.py): "you can" / "you may" state a capability or
    a possibility, and "you always" / "you don't" a habit, so none of them is a cue there.
    """
    for i, tok in enumerate(toks):
        if tok.word in TRIGGERS and (tok.word not in ("is", "are") or word_at(toks, i + 1) in ("to", "not")):
            found = _explicit_at(toks, i, instructions)
            if found is not None:
                return found
    return None


#: Every word that can start an explicit cue in _explicit_at (a fast pre-filter).
TRIGGERS = frozenset(
    "must shall mustn't shan't should shouldn't ought never not don't do doesn't may can can't cannot might need "
    "needs have has no allowed permitted forbidden prohibited banned required mandatory compulsory obligatory fine "
    "ok okay acceptable "
    "free welcome permission feel important essential crucial vital necessary better best advisable recommended "
    "preferable worth good recommend suggest prefer ideally preferably under always let's is are nobody needn't "
    "off-limits got rather well".split()
)
#: Single-word cues that are not the action itself ("Avoid | tabs", "Never | push").
CUE_VERBS = frozenset("avoid refrain prefer consider try favor favour aim lean quit stop hold go let's".split())
_FLIP = ("fail", "forget", "neglect", "omit")
#: Deontic status words: "is forbidden", "are not allowed", "is compulsory".
_STATUS_WORDS = frozenset(
    "allowed permitted forbidden prohibited banned required mandatory compulsory obligatory".split()
)
_NEG = ("not", "never")
_NEGATORS = ("not", "never", "don't", "doesn't", "isn't", "aren't")
_BE = ("is", "are", "be", "been", "it's", "that's", "'s", "was", "were")
#: "is better", not "was better" (a past judgement, not advice).
_PRESENT_BE = ("is", "are", "be", "been", "it's", "that's", "'s", "you'd", "we'd", "had")
_CONTRACTED = {
    "you've": "you",
    "we've": "we",
    "you'll": "you",
    "you'd": "you",
    "you're": "you",
    "we'll": "we",
    "we'd": "we",
    "we're": "we",
    "i'd": "i",
    "i'll": "i",
    "i'm": "i",
    "it's": "it",
    "that's": "that",
    "there's": "there",
}


def before(toks: Sequence[Tok], i: int, skip: frozenset[str] = w.ADVERBS) -> tuple[str, int]:
    """The nearest word before ``i`` that is not in ``skip`` (contractions resolved), and its index."""
    j = i - 1
    while j >= 0 and toks[j].word in skip and i - j < 4:  # a few adverbs at most: linear on "never never ..."
        j -= 1
    word = word_at(toks, j)
    return _CONTRACTED.get(word, word), j


def _explicit_at(toks: Sequence[Tok], i: int, instructions: bool = True) -> Found | None:
    word, nxt = toks[i].word, word_at(toks, i + 1)
    subject, j = before(toks, i)
    raw = word_at(toks, j)
    if word in ("must", "shall", "mustn't", "shan't", "should", "shouldn't", "ought") and (
        toks[i].comma_after or i == len(toks) - 1 or nxt in ("and", "or")
    ):
        return None  # "(MUST, SHOULD, MAY)": the word is mentioned, not used
    if word in ("must", "shall", "mustn't", "shan't"):
        return _must(toks, i, subject)
    if word in ("should", "shouldn't", "ought"):
        after = word_at(toks, i + 2)
        if (
            (nxt == "have" and is_participle(after))
            or any(t.word == "now" for t in toks[i:])
            or (subject in ("it", "this", "that", "there") and nxt in ("be", "work") and not is_participle(after))
            or (subject not in w.RULE_SUBJECTS | {"we", "i"} and nxt == "be" and after in _EXPECTED_STATES)
        ):
            return None  # "It should work now", "You should have asked": expectation or hindsight
        negated = word.endswith("n't") or nxt in _NEG
        return ("recommendation", *span(toks, i, i + 1 if negated else i), not negated)
    if word in ("never", "not", "don't", "do", "doesn't") and (flip := _flip_at(toks, i)) is not None:
        return ("obligation", *span(toks, i, flip), True)
    if word in ("may", "can", "can't", "cannot") and subject in ("you", "u"):
        if word_at(toks, j - 1) in ("if", "when", "where", "whenever", "wherever"):
            return None  # "Maybe avoid Friday deploys if you can": a hedge on the command, not a permission
        go_ahead = word == "can" and nxt == "go" and word_at(toks, i + 2) == "ahead"
        if go_ahead:
            return ("permission", *span(toks, i - 1, i + 2), True)  # "You can go ahead and archive ...": a grant
        if not instructions and not (word == "may" and nxt == "want"):
            return None  # "You can pin a note", "You may need to restart": what is possible, not a permission
        if nxt == "have" and is_participle(word_at(toks, i + 2)):
            return None  # "You may have noticed"
        if word in ("can't", "cannot") and nxt in _CANT_IDIOMS:
            return None  # "You can't really predict", "You can't miss the building": not a ban
        if word in ("can't", "cannot") or nxt == "not":
            return ("prohibition", *span(toks, i, i + 1 if nxt == "not" else i), False)
        if nxt == "want":
            return ("recommendation", *span(toks, i, i + 1), True)
        return ("permission", *span(toks, i - 1, i), True)
    if word == "may" and instructions and subject in _AGENT_NOUNS and nxt not in _EPISTEMIC_AFTER_MAY:
        negated = nxt == "not"  # "The assistant may use web search", "Agents may not push": the agent named
        return ("prohibition", *span(toks, i, i + 1), False) if negated else ("permission", *span(toks, i, i), True)
    if word in ("might", "may") and nxt == "want" and word_at(toks, i + 2) == "to":
        return ("recommendation", *span(toks, i, i + 2), True)
    if word in ("need", "needs", "have", "has") and nxt == "to":
        return _need_to(toks, i, subject)
    if word in ("need", "needs") and toks[0].word in ("every", "each", "all", "any") and nxt not in ("not", "no"):
        return ("obligation", *span(toks, i, i), True)  # "Every PR needs a linked issue": a requirement
    if word == "no" and nxt == "need" and word_at(toks, i + 2) == "to":
        return ("permission", *span(toks, i, i + 2), True)
    if (
        word in ("nobody", "no")
        and (word == "nobody" or nxt == "one")
        and word_at(toks, i + 1 + (word == "no")) in ("may", "can", "should", "must", "is", "shall")
        and (instructions or word_at(toks, i + 1 + (word == "no")) in ("should", "must", "shall", "may"))
    ):
        return ("prohibition", *span(toks, i, i + 2 + (word == "no")), False)  # "Nobody may merge", "No one is to"
    if word in ("is", "are") and nxt == "to" and (subject in ("you", "u") or word_at(toks, i + 2) == "be"):
        return ("obligation", *span(toks, i, i + 1), True)  # "are to be reviewed", "you are to"
    if (
        word in ("is", "are")
        and nxt == "not"
        and word_at(toks, i + 2) in ("to", "optional")
        and (subject == "you" or word_at(toks, i + 2) == "optional")
    ):
        neg = word_at(toks, i + 2) == "to"
        return ("prohibition" if neg else "obligation", *span(toks, i, i + 2), not neg)
    if word == "off-limits":
        return ("prohibition", *span(toks, i, i), False)
    if word == "got" and nxt == "to" and _have_got_subject(toks, j, subject, raw) in ("you", "we"):
        return ("obligation", *span(toks, i, i + 1), True)
    if word in ("rather", "well") and subject in ("we", "you") and raw in ("we'd", "you'd"):
        return ("recommendation", *span(toks, j, i), True)  # "We'd rather you", "You'd do well to"
    if word == "best" and nxt == "to" and i == 0:
        return ("recommendation", *span(toks, i, i + 1), True)
    if word in _STATUS_WORDS:
        return _status_word(toks, i)
    if (
        word in ("fine", "ok", "okay", "acceptable", "free", "welcome")
        and nxt == "to"
        and (raw in _BE or subject == "you")
    ):
        return ("permission", *span(toks, i, i + 1), True)
    if word == "permission" and nxt == "to" and "you" in (t.word for t in toks[:i]):
        return ("permission", *span(toks, i, i + 1), True)
    if word == "feel" and nxt == "free":
        return ("permission", *span(toks, i, i + 2), True)
    if (
        word in ("important", "essential", "crucial", "vital", "necessary")
        and nxt in ("to", "that")
        and (raw in _BE or (i == 1 and toks[0].word == "is"))
        and not (nxt == "to" and _not_a_verb(word_at(toks, i + 2)))
    ):
        return ("obligation", *span(toks, i, i + 1), True)
    if word in ("better", "best", "advisable", "recommended", "preferable", "worth") and (
        raw in _PRESENT_BE or (word in ("best", "better") and nxt == "to" and _only_hedges(toks, i))
    ):
        return ("recommendation", *span(toks, i, i), True)
    if word in ("ok", "okay", "fine") and nxt == "to" and _only_hedges(toks, i):
        return ("permission", *span(toks, i, i + 1), True)  # "ok to use english for comments"
    if (word == "acceptable" and raw in _BE) or (word == "needn't" and subject in ("you", "u")):
        return ("permission", *span(toks, i, i), True)
    if word == "good" and nxt == "idea" and raw in (*_BE, "a"):
        return ("recommendation", *span(toks, i, i + 1), True)
    if word in ("recommend", "suggest", "prefer") and subject in ("we", "i"):
        negated = nxt == "not"
        return ("recommendation", *span(toks, i, i + 1 if negated else i), not negated)
    if word in ("ideally", "preferably"):
        return ("recommendation", *span(toks, i, i), True)
    if word == "under" and nxt == "no" and word_at(toks, i + 2) == "circumstances":
        return ("prohibition", *span(toks, i, i + 2), False)
    if instructions and (
        (word in ("always", "never") and subject in w.RULE_SUBJECTS) or (word in ("don't", "do") and subject == "you")
    ):
        return _subject_adverb(toks, i)
    if word == "let's":
        return ("recommendation", *span(toks, i, i), True)
    return None


def _not_a_verb(word: str) -> bool:
    """True for what cannot follow an infinitive "to": "crucial to discovering", "important to you"."""
    return word.endswith("ing") or word in w.DETERMINERS or word in ("you", "me", "us", "them", "him", "her")


def _only_hedges(toks: Sequence[Tok], i: int) -> bool:
    """True when only hedges, adverbs and openers come before ``i`` ("probably best to ...")."""
    return all(t.word in w.HEDGES or t.word in w.ADVERBS or t.word in w.SKIP_OPENERS for t in toks[:i])


def _must(toks: Sequence[Tok], i: int, subject: str) -> Found | None:
    """ "must", "must not", "must never fail to"; "It must be the cache" is a guess, not a duty."""
    word, nxt, after = toks[i].word, word_at(toks, i + 1), word_at(toks, i + 2)
    negated = word.endswith("n't") or nxt in _NEG
    if not negated and nxt == "have" and is_participle(after):
        return None  # "The migration must have failed": an inference about the past
    if not negated and subject in w.THIRD_PERSON - {"i"} and nxt == "be" and not is_participle(after):
        return None  # "That must be the cache"
    if negated and after in _FLIP:
        return ("obligation", *span(toks, i, i + 2), True)
    if not negated and nxt == "be" and _identity(toks, i + 2, subject):
        return None  # "You must be Tom's sister": a guess about who someone is
    return ("prohibition", *span(toks, i, i + 1), False) if negated else ("obligation", *span(toks, i, i), True)


def _have_got_subject(toks: Sequence[Tok], j: int, subject: str, raw: str) -> str:
    """The subject of "'ve got to" / "have got to" ("You've got to sign"), "" for a past "we never got to"."""
    if raw.endswith("'ve"):
        return subject
    return before(toks, j)[0] if subject == "have" else ""


#: Frequency adverbs that make a necessity a tendency: "Sometimes you have to wait".
_SOMETIMES = frozenset("sometimes occasionally often rarely seldom".split())
#: States after "should be" that make it a forecast: "The team should be back by Thursday".
_EXPECTED_STATES = frozenset("back ready done finished available here there over live fine able".split())
#: Words after "can't" that make it an inability or an idiom: "You can't really predict", "can't miss it".
_CANT_IDIOMS = frozenset("really possibly quite always miss help wait believe imagine predict know guarantee".split())
#: The agent named in the third person in an instruction note ("The assistant may ...", "Agents may ...").
_AGENT_NOUNS = frozenset("assistant assistants agent agents claude bot bots model llm ai copilot".split())
#: Words after "may" that make it a possibility ("The agent may be slow", "Agents may need a restart").
_EPISTEMIC_AFTER_MAY = frozenset("be have need take fail crash want seem appear well".split())
#: Words that open a noun phrase after "be": "must be a", "must be the", "must be Tom's".
_NP_STARTERS = frozenset("a an the my your his her our their".split())


def _identity(toks: Sequence[Tok], k: int, subject: str) -> bool:
    """True when ``be`` before token ``k`` is followed by a noun phrase and a person is the subject: "You must be
    Tom's sister", "You don't have to be a genius" say who someone is (or need not be), not what to do."""
    word = word_at(toks, k)
    return subject in ("you", "u", "we", "i") and (word in _NP_STARTERS or word.endswith("'s"))


def _need_to(toks: Sequence[Tok], i: int, subject: str) -> Found | None:
    """ "you need to", "has to be announced" (duties); "you don't have to" (an exemption)."""
    if any(t.word in _SOMETIMES for t in toks[:i]):
        return None  # "Sometimes you have to wait a minute for the index": what tends to happen
    who = before(toks, before(toks, i)[1])[0] if subject in _NEGATORS else subject
    if word_at(toks, i + 2) == "be" and _identity(toks, i + 3, who):
        return None  # "You don't have to be a genius to see it", "You have to be a member to post"
    if subject in _NEGATORS:
        return ("permission", *span(toks, i - 1, i + 1), True) if who == "you" else None
    if subject in w.DETERMINERS or subject in ("no", "any"):
        return None  # "eliminates the need to switch": a noun, not a duty
    if subject == "only":
        return None  # "only has to be bought once": a bound on what is needed, not a duty
    passive = word_at(toks, i + 2) == "be" and is_participle(word_at(toks, i + 3))
    if (
        subject in w.RULE_SUBJECTS
        or passive
        or i == 0
        or (subject not in w.THIRD_PERSON and subject not in _BE and subject.isalpha() and subject != "to")
    ):
        return ("obligation", *span(toks, i, i + 1), True)
    return None


def _flip_at(toks: Sequence[Tok], i: int) -> int | None:
    """Index of the flipped verb in "never fail to", "do not forget to", "don't ever neglect to" (a negated
    omission, so a duty), else None."""
    word = toks[i].word
    j = i + 2 if word == "do" and word_at(toks, i + 1) == "not" else i + 1
    if word == "do" and j == i + 1:
        return None
    if word_at(toks, j) == "ever":  # "Don't ever forget to"
        j += 1
    if word == "not" and word_at(toks, i - 1) not in ("do", "must", "should"):
        return None
    flipped = word_at(toks, j) in _FLIP and (word_at(toks, j + 1) == "to" or word_at(toks, j) == "omit")
    return j if flipped else None


def _status_word(toks: Sequence[Tok], i: int) -> Found | None:
    """ "is not allowed", "are forbidden", "is required": a rule stated as a status ("Prohibited actions" is not)."""
    word = toks[i].word
    prev, j = before(toks, i, w.ADVERBS | {"not", "never"})
    negated = any(t.word in _NEGATORS for t in toks[max(0, j) : i])
    if prev not in _BE and prev not in ("isn't", "aren't") and word_at(toks, i + 1) != "to":
        return None
    if prev in ("was", "were"):
        return None  # "In 2021 we were required to ...": history
    start = max(0, j)
    if word in ("allowed", "permitted"):
        return ("prohibition", *span(toks, start, i), False) if negated else ("permission", *span(toks, start, i), True)
    if word in ("forbidden", "prohibited", "banned"):
        if negated:
            return ("permission", *span(toks, start, i), True)  # "You are not prohibited from ..."
        return ("prohibition", *span(toks, start, i), False)
    if negated or prev in ("isn't", "aren't"):
        return ("permission", *span(toks, start, i), True)  # "not required": an exemption
    return ("obligation", *span(toks, start, i), True)


def _subject_adverb(toks: Sequence[Tok], i: int) -> Found | None:
    """ "we always squash", "you never push", "you don't commit secrets": a house rule, unless past tense."""
    word, nxt = toks[i].word, word_at(toks, i + 1)
    if word == "do":
        if nxt != "not":
            return None
        word, nxt = "don't", word_at(toks, i + 2)
    if is_past(nxt) or nxt in ("know", "like", "have", "need", "want", "think", "see", "get", "receive", "hear"):
        return None  # "You always get a warning the first time": what happens, not a rule
    if word == "always":
        return ("obligation", *span(toks, i, i), True)
    return ("prohibition", *span(toks, i, i + 1 if toks[i].word == "do" else i), False)
