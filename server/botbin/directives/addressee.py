"""Who a rule binds: a duty or a permission of a third person is a fact about them, not a rule for the reader.

"Priya's brother has to submit his visa documents by Friday", "He's not allowed to drive until the cast comes
off", "Kids must wear helmets at the skate park, per the city rules": the note records someone else's
obligation, so it is memory, not a rule the agent follows. The agent itself named in the third person ("The
assistant may use web search", "Agents must not push") and things ("Each endpoint needs an entry") still
make rules. A rule attributed to a source ("per the city rules", "according to the handbook") is reported.
"""

from __future__ import annotations

from collections.abc import Sequence

from botbin.directives import words as w
from botbin.directives.cues import Tok, word_at

#: Subjects that name a third person (the cue binds them, not the reader).
THIRD_PARTY = frozenset(
    "he she he's she's he'd she'd he'll she'll his her him "  # not "they": often things ("they must be green")
    "kids children child toddler baby sister brother mom mum dad mother father wife husband son daughter "
    "parents grandma grandpa friend friends boss neighbour neighbor landlord doctor teacher students".split()
)
#: Outside parties, a third person when named definitely ("The vendor must deliver the servers by the 15th");
#: "All contractors must sign the NDA" and "Vendors must be paid" are still rules.
OUTSIDE_PARTIES = frozenset(
    "vendor vendors supplier suppliers contractor contractors builder builders plumber tenant tenants "
    "lawyer lawyers accountant courier seller buyer buyers insurer airline".split()
)
#: Words that attribute the rule to a source: "per the city rules", "according to the handbook".
_ATTRIBUTION_OBJECTS = frozenset("the my his her their its city school".split())


def binds_third_party(toks: Sequence[Tok], cue_start: int) -> bool:
    """True when the subject of the cue at character ``cue_start`` is a third person, or when the sentence
    attributes the rule to a source ("per the city rules")."""
    i = next((k for k, t in enumerate(toks) if t.start >= cue_start), len(toks))
    j = i - 1
    while j >= 0 and (toks[j].word in w.ADVERBS or toks[j].word in ("not", "only", "also", "is", "are")):
        j -= 1
    if word_at(toks, i) in THIRD_PARTY:
        return True  # the cue starts at its subject: "He's not allowed to"
    if j == 0 and any(t.word in ("his", "her") for t in toks[i:]):
        return True  # "Priya has to submit her visa documents": a named person and her duty
    if word_at(toks, j) in OUTSIDE_PARTIES and word_at(toks, j - 1) in ("the", "our", "my") and j == 1:
        return word_at(toks, i + 1) != "be"  # "The vendor must deliver ...", not "The vendor must be paid"
    if word_at(toks, j) in THIRD_PARTY or (
        word_at(toks, j - 1) in ("his", "her", "their", "my", "our") and word_at(toks, j) in THIRD_PARTY
    ):
        return True
    for k, tok in enumerate(toks):
        if tok.word == "per" and word_at(toks, k + 1) in _ATTRIBUTION_OBJECTS:
            return True
        if tok.word == "according" and word_at(toks, k + 1) == "to" and k > i:
            return True
    return False
