"""Discourse lead-ins: the words of speech before a request that carry none of it (pure).

People rarely open a standing instruction with it: "By the way, from now on, call me Sam.", "Oh and going
forward, please always use metric units.", "One more thing: never book red-eyes.", "btw from now on use tabs".
The lexer skips these before it looks for the clause that holds the cue (openers.py) and reads a label made of
them ("One more thing:", "Quick note -") as no label at all (lexer.py). A lead-in carries no content, so a
sentence that is nothing else stays what it was (small talk, memory/conversation/smalltalk.py, is another matter).
"""

from __future__ import annotations

from collections.abc import Sequence

from botbin.directives.cues import Tok

#: Interjections and discourse markers skipped with or without a comma: "Oh and ...", "ok from now on ...".
INTERJECTIONS = frozenset(
    "oh ah aha hey ok okay alright hmm hm um uh er btw fyi ps anyway anyways actually oops".split()
)
#: Words that lead in only when a comma follows them ("Well, ...", "Listen, ..."); else they may be the verb of
#: the request itself ("Look at the logs first", "Listen to the customer").
COMMA_LEADS = frozenset("well listen look sorry right yes yeah yep so also and plus hi hello".split())
#: Lead-in phrases, a comma, colon or dash after them or not: "By the way, ...", "One more thing: ...".
PHRASES: tuple[tuple[str, ...], ...] = (
    ("by", "the", "way"),
    ("one", "more", "thing"),
    ("one", "last", "thing"),
    ("one", "more"),
    ("last", "thing"),
    ("quick", "note"),
    ("quick", "thing"),
    ("quick", "one"),
    ("just", "so", "you", "know"),
    ("so", "you", "know"),
    ("just", "a", "heads", "up"),
    ("a", "heads", "up"),
    ("heads", "up"),
    ("before", "i", "forget"),
    ("on", "second", "thought"),
    ("for", "the", "record"),
    ("while", "i", "remember"),
    ("while", "i", "think", "of", "it"),
    ("p", "s"),
)
#: Words that may join lead-ins: "Oh and also, ...", "btw and ...".
_JOINERS = frozenset("and also plus".split())


def _phrase_at(words: Sequence[str], k: int) -> int:
    """Length of the lead-in phrase starting at word ``k`` (the longest), 0 if none."""
    best = 0
    for phrase in PHRASES:
        if len(phrase) > best and tuple(words[k : k + len(phrase)]) == phrase:
            best = len(phrase)
    return best


def lead_end(toks: Sequence[Tok]) -> int:
    """Index of the first token after the lead-ins that open the sentence (0 when none do); never the last
    token (a sentence that is only lead-ins keeps its last word)."""
    words = [t.word for t in toks]
    k = 0
    while k < len(toks) - 1:
        n = _phrase_at(words, k)
        if n and k + n < len(toks):
            k += n
        elif words[k] in INTERJECTIONS or (words[k] in COMMA_LEADS and toks[k].comma_after):
            k += 1
        elif k > 0 and words[k] in _JOINERS:
            k += 1  # "Oh and ...": a joiner after a lead-in
        else:
            break
    return k if k < len(toks) else 0


def is_lead_label(name: str) -> bool:
    """True when a label ("One more thing:", "Hey quick thing:", "P.S.:") is made of lead-ins only."""
    words = name.replace(".", " ").replace(",", " ").split()
    k = 0
    while k < len(words):
        n = _phrase_at(words, k)
        if n:
            k += n
        elif words[k] in INTERJECTIONS or words[k] in COMMA_LEADS or words[k] in _JOINERS:
            k += 1
        else:
            return False
    return bool(words)
