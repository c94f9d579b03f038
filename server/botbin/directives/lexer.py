"""Deontic lexer: text -> cues (obligation, prohibition, recommendation, permission) with character spans.

A compiled, rule-based lexer, not a model (about 0.5 s per MB of markdown). The text is masked first (code
spans, fenced code, URLs, link texts and targets, wikilinks and quoted examples become FILLER characters of
the same length, so every span still indexes the input), split into sentences and clauses, and each sentence
yields at most one cue: the earliest explicit cue ("must not", "should", "you may", "is forbidden"; see
cues.py), else a cue opening a clause ("Never ...", "No ...", an imperative verb: "Use tabs."; see
openers.py). Curly quotes and apostrophes count as straight ones; case is ignored. Two registers: an
instruction note (every imperative a command) and an ordinary note, where only explicit cues count and a
third person's duty, a means to an end or a constitutive rule is no rule (register.py, addressee.py).

The modalities follow deontic logic (von Wright, 1951): obligation O(p), prohibition O(not p), permission
P(p); recommendation is the weak "ought" of style guides (RFC 2119's SHOULD / SHOULD NOT).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from botbin.directives import words as w
from botbin.directives.addressee import binds_third_party
from botbin.directives.cues import CUE_VERBS, FILLER, TRIGGERS, Found, Modality, Tok, explicit_cue
from botbin.directives.leadins import is_lead_label
from botbin.directives.openers import clause_start_cue
from botbin.directives.register import counts_in_notes, has_standing_marker

MODALITIES: tuple[Modality, ...] = ("obligation", "prohibition", "recommendation", "permission")


@dataclass(frozen=True)
class Cue:
    """One directive found in a text."""

    modality: Modality
    cue: str
    """The cue words as written in the text, e.g. ``"Never"``, ``"must not"``, ``"Use"``."""
    start: int
    """Character offset of the cue words in the input (0-based)."""
    end: int
    """Character offset after the cue words (exclusive)."""
    sentence_start: int
    """Character offset of the sentence holding the cue (0-based, markers such as ``- `` excluded)."""
    sentence_end: int
    """Character offset after that sentence (exclusive)."""
    positive: bool
    """False when the rule says not to do the action (prohibitions, "should not", "prefer not to")."""
    action_start: int
    """Where the action the rule is about begins: the cue itself for an imperative verb ("Use tabs"), else
    right after the cue ("never | push to main")."""


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2032": "'"})
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
# Every scan stops at the next opener of its own kind (a backtick run is taken whole), so text full of
# unclosed openers ("[a](" or "<!--" or "`" repeated) is not rescanned from each of them: linear time.
_MASKS = re.compile(
    r"(?<!`)(?P<tick>`++)[^`]+?(?P=tick)"  # code span
    r"|<!--(?:(?!<!--).){0,2000}?-->"  # HTML comment (bounded, on one line)
    r"|\[[^\[\]\n]{0,300}\]\([^()\s]{0,2000}(?:\s+\"[^\"]{0,300}\")?\)"  # [link text](target "title"): no rule
    r"|\[\[[^\[\]\n]{0,300}\]\]"  # [[wikilink]]
    r"|<[a-z][a-z0-9+.-]{0,30}:[^<>\s]{0,2000}>"  # autolink
    r"|\b(?:[a-z][a-z0-9+.-]{0,30}://|www\.)[^\s<>()\"]+"  # bare URL
    r"|(?<![\w\"])\"[^\"\n]{1,300}\"(?![\w\"])"  # "quoted example"
    r"|(?<![\w'])'(?=\w)[^'\n]{1,300}?(?<=[\w.!?])'(?![\w'])",  # 'quoted example' (not an apostrophe)
    re.IGNORECASE,
)
# Sentence boundaries: end punctuation, semicolons, blank lines, and line starts of list items, headings,
# quotes or table rows (a rule list without periods is still one rule per line).
_BOUNDARY = re.compile(
    r"(?<=[.!?])[\"')\]*_]*\s+|(?<=[。！？])\s*(?=\S)|;\s+|\n(?=[ \t]*(?:[-*+>|#]|\d+[.)]|\n))|\n\s*\n|\n(?=[A-Z])"
)
_MARKER = re.compile(r"[ \t]*(?:>[ \t]*)*(?:#{1,6}[ \t]+|[-*+][ \t]+(?:\[[ xX]\][ \t]+)?|\d+[.)][ \t]+)?")
_WORD = re.compile(r"[a-z]+(?:['-][a-z]+)*", re.IGNORECASE)
_COMMA_AFTER = re.compile("[" + re.escape(" \"'`" + FILLER) + "]*,")
"""A comma after a word, past spaces, quotes and masked code (looked for within 80 characters)."""
_HEADING = re.compile(r"[ \t]*(?:>[ \t]*)*#{1,6}[ \t]")
_LABEL = re.compile(r"[\s*_]*[a-z][a-z0-9 ]{0,30}(?::[*_]*|[*_]*:)\s", re.IGNORECASE)
_QUOTED_LINE = re.compile(r"[ \t]*>")
#: Words of a label that attribute what follows to someone else.
_ATTRIBUTION = frozenset("from quote quoted says said per via according".split())
#: Labels that name a speaker: what follows is a transcript line, not the note's own rule.
_SPEAKERS = frozenset("user assistant bot ai human me system agent claude gpt chatgpt q a".split())
#: Labels after which a command may follow ("Important: back up the database first").
_RULE_LABELS = frozenset(
    "important note rule rules tip warning caution reminder todo action policy always never "
    "critical required must mandatory hint nb do don't remember instructions instruction".split()
)
#: Common spellings without the apostrophe ("pls dont touch").
_APOSTROPHE = {
    "dont": "don't",
    "doesnt": "doesn't",
    "cant": "can't",
    "shouldnt": "shouldn't",
    "mustnt": "mustn't",
    "isnt": "isn't",
    "arent": "aren't",
    "youre": "you're",
}
#: A bold or italic span opening a sentence, and what follows it: "**File explorer**:", "**Row height** sets".
_EMPHASIS_LEAD = re.compile(r"(\*\*|__|\*|_)(?=\S)([^*_\n]{1,80}?)(?<=\S)\1[ \t]*(.?)")


def _blank(m: re.Match[str]) -> str:
    return re.sub(r"[^\n]", FILLER, m.group(0))


def _mask_fences(text: str) -> str:
    """Blank fenced code blocks (an unclosed fence runs to the end, as CommonMark says)."""
    parts: list[str] = []
    pos = 0
    while (m := _FENCE.search(text, pos)) is not None:
        fence = m.group(1)
        closing = re.compile(rf"^[ \t]{{0,3}}{fence[0]}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        line_end = text.find("\n", m.end())
        close = closing.search(text, line_end + 1) if line_end >= 0 else None
        end = len(text) if close is None else close.end()
        parts += [text[pos : m.start()], re.sub(r"[^\n]", FILLER, text[m.start() : end])]
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def mask(text: str) -> str:
    """``text`` with curly quotes straightened and code, URLs and quoted examples blanked (same length)."""
    norm = _mask_fences(text.translate(_QUOTES))
    return _MASKS.sub(_blank, norm)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of markdown ``text``: botbin's one sentence splitter (rules, snippets,
    distilled turns, roots). Code, URLs and quoted examples never end a sentence; list, quote and heading
    markers are left out of the spans."""
    return sentences(mask(text))


def sentences(masked: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of masked text, list and heading markers excluded."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in [*_BOUNDARY.finditer(masked), None]:
        end = len(masked) if m is None else m.start()
        marker = _MARKER.match(masked, start, end)
        s = marker.end() if marker else start
        while s < end and masked[s].isspace():
            s += 1
        e = end
        while e > s and masked[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
        if m is not None:
            start = m.end()
    return spans


def _tokens(masked: str, start: int, end: int) -> list[Tok]:
    out: list[Tok] = []
    for m in _WORD.finditer(masked, start, end):
        word = m.group(0).lower()
        if word == "lets" and out:
            word = "lets"  # "X lets you ...": a verb; only a sentence-opening "lets" is the spelling of "let's"
        elif word == "lets":
            word = "let's"
        # a comma after masked code or a quote still ends the clause: "If it needs `sudo`, ask"
        comma = _COMMA_AFTER.match(masked, m.end(), min(end, m.end() + 80)) is not None
        out.append(Tok(_APOSTROPHE.get(word, word), m.start(), m.end(), comma))
    return out


def lex(text: str, instructions: bool = True) -> list[Cue]:
    """Directive cues in ``text`` (markdown allowed), at most one per sentence, in order.

    ``instructions``: True when the text is addressed to the agent (an instruction note, a user's turn): every
    imperative is a command. False for an ordinary note: only explicit cues count (see register.py).
    Never raises; every span indexes ``text``. Linear in the input (1 MB of markdown in well under 1 s).
    """
    masked = mask(text)
    cues: list[Cue] = []
    line_start, seen = 0, 0
    for s, e in sentences(masked):
        newline = masked.rfind("\n", seen, s)  # only the text since the last sentence: linear overall
        line_start, seen = (newline + 1 if newline >= 0 else line_start), s
        cue = _sentence_cue(masked, s, e, line_start, instructions)
        if cue is not None:
            modality, cs, ce, positive = cue
            word = masked[cs:ce].lower()
            verb = (word in w.IMPERATIVE_VERBS and word not in CUE_VERBS) or (
                " " not in word and word not in TRIGGERS and word not in CUE_VERBS
            )
            cues.append(Cue(modality, text[cs:ce], cs, ce, s, e, positive, cs if verb else ce))
    return cues


def classify(text: str, instructions: bool = True) -> Modality | None:
    """Modality of the first cue in ``text``, or None when it holds no directive (``instructions``: see lex)."""
    cues = lex(text, instructions)
    return cues[0].modality if cues else None


def _is_term(masked: str, s: int, e: int) -> bool:
    """True when the sentence opens with an emphasized term that a label or description follows:
    "**File explorer**:", "**File properties**, accessible ...", "**Row height** sets ...", "**Bookmarks**"."""
    m = _EMPHASIS_LEAD.match(masked, s, e)
    if m is None or m.group(2).rstrip().endswith((".", "!")):
        return False  # "**Do not start syncing yet.**" is a whole sentence in bold
    after = m.group(3)
    if after in ("", ":", ",", "(", "\u2014", "\u2013", "-", "="):
        return True
    nxt = _WORD.match(masked, m.end(3) - len(after), e)
    return nxt is not None and nxt.group(0).lower().endswith("s") and nxt.group(0).lower() not in w.DETERMINERS


def _is_title(masked: str, toks: list[Tok]) -> bool:
    """True when the sentence opens with three or more words in Title Case ("Never Split the Difference")."""
    if len(toks) < 3:
        return False
    words = [masked[t.start : t.end] for t in toks[:3]]
    if masked[toks[0].end : toks[1].start] != " " or masked[toks[1].end : toks[2].start] != " ":
        return False  # "Select **Settings** > **Privacy**": names of buttons, not a title
    return (
        all(x[:1].isupper() and x != "I" for x in (words[0], words[1]))
        and (words[2][:1].isupper() or words[2].lower() in ("the", "a", "an", "of", "me", "to", "and"))
        and not all(x.isupper() for x in words)
    )


def _sentence_cue(masked: str, s: int, e: int, line_start: int, instructions: bool = True) -> Found | None:
    body = masked[s:e].rstrip(" *_\"')]")
    if body.endswith("?") or (body.endswith(":") and _is_term(masked, s, e)):
        return None
    label = _LABEL.match(masked, s, e)
    name = masked[s : label.end()].strip(" *_:\n").lower() if label else ""
    if label and (name in ("example", "examples", "e.g", "eg", "for example") or name in _SPEAKERS):
        return None
    if label and _ATTRIBUTION.intersection(name.split()):
        return None  # "Key idea from the book: you should never ...", "Quote of the day: ...": someone else's words
    if label and _QUOTED_LINE.match(masked, line_start) and name.isalpha() and name not in _RULE_LABELS:
        return None  # "> **alex:** you have to restart the pod": a pasted chat line, someone else's words
    toks = _tokens(masked, s, e)
    if label and len(toks) > 1:  # "Important: never push" / "Update: we shipped" -> what follows the label
        toks = [t for t in toks if t.start >= label.end()]
        s = label.end()
    if not toks:
        return None
    found = explicit_cue(toks, instructions)
    if found is not None:
        reported = any(t.word in w.REPORTING for t in toks if t.end <= found[1])
        if reported or binds_third_party(toks, found[1]):
            return None
        return found if instructions or counts_in_notes(found[0], toks, found[1]) else None
    ruled = name in _RULE_LABELS or name.split(" ")[0] in ("step", "rule", "todo") or is_lead_label(name)
    if label and len(toks) > 1 and not ruled:
        return None  # "**Felix Brandt**: contact at ...": a term and its description, not a command
    heading = _HEADING.match(masked, line_start) is not None
    if heading and len(toks) < 3:
        return None  # "## Commit conventions": a short heading names a topic
    if _is_term(masked, s, e):
        return None  # "**Link thickness** controls the line width": a term and its description
    if _is_title(masked, toks):
        return None  # "Never Split the Difference is on my list", "## Don't Make Me Think": a title
    found = clause_start_cue(toks, masked, s, instructions or has_standing_marker(toks))
    if found is None or instructions or counts_in_notes(found[0], toks, found[1], modal=False):
        return found
    return None
