"""Admission gate: how much a conversation turn deserves a place in durable memory, a score in [0, 1] (pure).

The score is a convex mix of two scorers, blended by a technical-density detector ``d`` in [0, 1]::

    score = (1 - d) * conversational + d * technical

* **conversational** = substance * (NOVELTY_WEIGHT * novelty + REPETITION_WEIGHT * repetition).
  ``novelty`` = max(semantic, lexical), 1.0 for an empty memory. *Semantic* novelty reads the highest cosine
  ``c`` between the turn and the memory on a band: 1 at or under UNRELATED_COSINE (MiniLM gives turns of one
  chat on other subjects about that much), 0 at or over SAME_COSINE (the same thing said again), linear
  between. *Lexical* novelty is the share of the turn's content words the memory has never used: a turn that
  brings news on a familiar subject ("I applied to adoption agencies this week", after many turns about
  adoption) embeds close to what was said before, but its new words are new (words of 3+ letters: numbers and
  two-letter names do not count).
  ``repetition`` counts the conversation's earlier turns that say nearly the same thing (cosine >=
  REPEAT_COSINE), saturating at REPEAT_SATURATION: what a user keeps saying matters to them. Counting
  repeats in the conversation only (not in the soul file) makes a second ingestion of the same log score
  every turn at most as high as the first did, so it admits nothing the first did not (and writes nothing).
  ``substance`` (content words, saturating at
  SUBSTANCE_WORDS; 0 for small talk, smalltalk.py) keeps "ok, thanks!" and "Good morning! How can I help
  today?" out however novel they are.
* **technical** = 1 - exp(-signals / TECH_SCALE), where signals count file paths, error codes, code
  identifiers and decision phrases ("we decided", "let's go with").
* **density** ``d`` = min(1, DENSITY_GAIN * signals / words): a quarter of the words being technical gives the
  technical scorer the whole weight; a turn with no signal is scored by the conversational scorer exactly.

"Memory" is the embeddings of the bullets already in the user's soul file (``durable``) plus the earlier
turns of the run (``conversation``), each float32 (n, 384) with L2-normalized rows, and the content words of
both (``known_words``). The weights are this module's choice (no source prescribes them). The novelty band
and the admission threshold they are compared with (``admission_threshold``, 0.35) were chosen on LoCoMo
conversations 0-4 (bench/bench_locomo_ingest.py; 5-9 held out): with novelty as 1 - cosine, turns of a long
chat soon resemble some earlier turn by 0.5-0.7, and the gate let in 20% of the turns and 21% of the evidence
turns; with the band and lexical novelty it lets in about 85% of the turns and 90% of the evidence, turning
away greetings, thanks and restatements. Planted facts (bench/bench_planted.py) still pass at any size.
"""

from __future__ import annotations

import math
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from botbin.directives.register import STANDING_MARKERS
from botbin.memory.conversation.smalltalk import is_small_talk
from botbin.memory.conversation.turns import USER_ROLES as _USER_ROLES

NOVELTY_WEIGHT = 0.75
REPETITION_WEIGHT = 0.25
#: Cosine at or under which a memory says something else: semantic novelty 1 (LoCoMo: the median best cosine of a
#: turn to the conversation's earlier turns is about 0.55).
UNRELATED_COSINE = 0.5
#: Cosine at or over which a memory says the same thing: semantic novelty 0 (FileRAG's near-duplicate cosine, the
#: ``duplicate_block_cosine`` default).
SAME_COSINE = 0.92
#: A memory row this similar (cosine) to the turn counts as the same thing said again.
REPEAT_COSINE = 0.75
#: Repetitions that make ``repetition`` 1.0.
REPEAT_SATURATION = 3
#: Content words (3+ letters, not a stop word) that make ``substance`` 1.0.
SUBSTANCE_WORDS = 3
#: Technical signals per word that make ``density`` 1.0 are 1 / DENSITY_GAIN.
DENSITY_GAIN = 4.0
#: Technical signals for which ``technical`` is 1 - 1/e (about 0.63).
TECH_SCALE = 2.0

_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "are",
        "but",
        "not",
        "you",
        "your",
        "yours",
        "all",
        "any",
        "can",
        "had",
        "has",
        "have",
        "her",
        "him",
        "his",
        "how",
        "its",
        "our",
        "out",
        "she",
        "they",
        "them",
        "their",
        "then",
        "there",
        "these",
        "this",
        "those",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "could",
        "should",
        "about",
        "from",
        "into",
        "just",
        "like",
        "that",
        "than",
        "too",
        "very",
        "also",
        "been",
        "being",
        "did",
        "does",
        "doing",
        "don",
        "got",
        "get",
        "gets",
        "getting",
        "haha",
        "hahaha",
        "lol",
        "yeah",
        "yes",
        "yep",
        "nope",
        "okay",
        "hey",
        "hi",
        "hello",
        "thanks",
        "thank",
        "thx",
        "wow",
        "cool",
        "nice",
        "great",
        "awesome",
        "sure",
        "well",
        "really",
        "much",
        "more",
        "some",
        "such",
        "only",
        "own",
        "same",
        "so",
        "it's",
        "that's",
        "i'm",
        "you're",
        "we're",
        "they're",
        "i've",
        "you've",
        "i'll",
        "you'll",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "one",
        "lot",
        "lots",
        "oh",
        "ah",
        "hmm",
        "um",
        "uh",
        "ok",
        "right",
        "good",
        "bye",
        "see",
        "soon",
    ]
)
_WORD = re.compile(r"[^\W\d_]{3,}(?:'[^\W\d_]+)?")
_PATH = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*\w|(?<![\w/-])\w[\w-]*+\.(?:py|pyi|js|mjs|"
    r"ts|tsx|jsx|md|json|jsonl|toml|ya?ml|rs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|zsh|"
    r"txt|csv|sql|html|css|scss|lock|cfg|ini|env|log|xml|proto|tf|dockerfile|gradle|swift)\b",
    re.IGNORECASE,
)
_ERROR = re.compile(
    r"\b(?:[A-Z]{1,5}-?\d{3,5}|E[A-Z]{3,}|0x[0-9A-Fa-f]{4,}|[A-Z]\w*(?:Error|Exception|Warning)|"
    r"errno \d+|SIG[A-Z]{3,})\b|\b(?:HTTP|status|error|code|exit)\s*(?:code\s*)?[1-5]\d\d\b"
)
_IDENTIFIER = re.compile(
    r"`[^`\n]+`|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z]+(?:[A-Z][a-z0-9]+)+\b|"
    r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b|(?<![\w.])\w+(?:\.\w+)*+\(\)|(?<!\w)--?[a-z][\w-]+\b|"
    r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"
)
_DECISION = re.compile(
    r"\b(?:decided|decision|let'?s go with|we(?:'ll| will) (?:use|go with|switch)|going with|"
    r"settled on|agreed (?:on|to|that)|chose|chosen|switch(?:ed)? to|opted for|"
    r"from now on)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TechnicalSignals:
    """What the technical scorer counts in one turn."""

    words: int
    """Whitespace-separated words."""
    paths: int
    """File paths and file names (``src/main.rs``, ``~/.config/x``, ``setup.py``)."""
    error_codes: int
    """Error codes and names (``E0425``, ``ENOENT``, ``ValueError``, ``HTTP 503``)."""
    identifiers: int
    """Code identifiers (``snake_case``, ``camelCase``, ``Foo.bar()``, ``--flag``, backtick spans)."""
    decisions: int
    """Decision phrases ("we decided", "let's go with", "switched to")."""

    @property
    def total(self) -> int:
        return self.paths + self.error_codes + self.identifiers + self.decisions


@dataclass(frozen=True)
class GateScore:
    """The admission gate's verdict on one turn; every field is in [0, 1]."""

    novelty: float
    """max(semantic, lexical) novelty (1.0 with an empty memory)."""
    semantic_novelty: float
    """The highest cosine to the memory, read on the band UNRELATED_COSINE (1) .. SAME_COSINE (0)."""
    lexical_novelty: float
    """Share of the turn's content words not in ``known_words`` (0.0 when none were given or it has none)."""
    repetition: float
    """Near-repeats among the conversation's earlier turns (cosine >= REPEAT_COSINE), over
    REPEAT_SATURATION, capped at 1."""
    substance: float
    """Content words over SUBSTANCE_WORDS, capped at 1; 0 for small talk (smalltalk.py)."""
    conversational: float
    """substance * (NOVELTY_WEIGHT * novelty + REPETITION_WEIGHT * repetition)."""
    technical: float
    """1 - exp(-signals / TECH_SCALE)."""
    density: float
    """The technical-density detector: the technical scorer's weight in the blend."""
    score: float
    """(1 - density) * conversational + density * technical."""


def _unit(value: float) -> float:
    """``value`` clipped to [0, 1] (NaN becomes 0)."""
    return 0.0 if not value >= 0.0 else min(1.0, float(value))


def _looks_like_path(match: str) -> bool:
    """False for "and/or", "he/she", "24/7": one slash between plain words is prose."""
    digits = any(c.isdigit() for c in match) and not match.replace("/", "").isdigit()
    return match.count("/") != 1 or match[0] in "/~." or "." in match or digits


def technical_signals(text: str) -> TechnicalSignals:
    """Count the technical signals of ``text`` (a path is not counted again as an identifier)."""
    paths = [p for p in _PATH.findall(text) if _looks_like_path(p)]
    rest = _PATH.sub(" ", text)
    errors = _ERROR.findall(rest)
    rest = _ERROR.sub(" ", rest)
    return TechnicalSignals(
        len(text.split()), len(paths), len(errors), len(_IDENTIFIER.findall(rest)), len(_DECISION.findall(text))
    )


def content_words(text: str) -> list[str]:
    """The casefolded words of ``text`` of 3+ letters that are not stop words, in order (repeats kept)."""
    return [w for w in _WORD.findall(text.casefold()) if w not in _STOP]


def substance(text: str) -> float:
    """Content words of ``text`` over SUBSTANCE_WORDS, capped at 1."""
    return _substance(content_words(text))


def lexical_novelty(text: str, known_words: AbstractSet[str]) -> float:
    """Share of the content words of ``text`` that are not in ``known_words``; 0.0 for a text without any."""
    return _share_new(content_words(text), known_words)


def _substance(words: list[str]) -> float:
    return min(1.0, len(words) / SUBSTANCE_WORDS)


def _share_new(words: list[str], known_words: AbstractSet[str]) -> float:
    return sum(w not in known_words for w in words) / len(words) if words else 0.0


def _max_cosine(vector: npt.NDArray[np.float32], rows: npt.NDArray[np.float32]) -> float:
    return float(np.nan_to_num(rows @ vector, nan=0.0).max()) if rows.shape[0] else 0.0


def memory_similarity(
    vector: npt.NDArray[np.float32], durable: npt.NDArray[np.float32], conversation: npt.NDArray[np.float32]
) -> tuple[float, float]:
    """(semantic novelty, repetition) of a turn ``vector`` (float32 (384,), unit length) against the soul
    file's bullets ``durable`` and the conversation's earlier turns ``conversation`` (float32 (n, 384) each,
    unit rows; n may be 0)."""
    if durable.shape[0] == 0 and conversation.shape[0] == 0:
        return 1.0, 0.0
    closest = max(_max_cosine(vector, durable), _max_cosine(vector, conversation))
    novelty = _unit((SAME_COSINE - closest) / (SAME_COSINE - UNRELATED_COSINE))
    repeats = (
        np.count_nonzero(np.nan_to_num(conversation @ vector, nan=0.0) >= REPEAT_COSINE) if conversation.shape[0] else 0
    )
    return novelty, _unit(float(repeats) / REPEAT_SATURATION)


def blend(conversational: float, technical: float, density: float) -> float:
    """The convex mix of the two scorers; exactly ``conversational`` when ``density`` is 0."""
    c, t, d = _unit(conversational), _unit(technical), _unit(density)
    if d == 0.0:
        return c
    return _unit((1.0 - d) * c + d * t)


def score_turn(
    text: str,
    vector: npt.NDArray[np.float32],
    durable: npt.NDArray[np.float32],
    conversation: npt.NDArray[np.float32] | None = None,
    known_words: AbstractSet[str] | None = None,
) -> GateScore:
    """The gate's score of turn ``text`` with embedding ``vector`` (float32 (384,)) against the soul file's
    bullets ``durable`` and the conversation's earlier turns ``conversation`` (float32 (n, 384) each; None:
    none), whose content words (``content_words``) are ``known_words`` (None: no lexical novelty). Never
    raises for any text; every field is in [0, 1]."""
    history = durable[:0] if conversation is None else conversation
    semantic, repetition = memory_similarity(vector, durable, history)
    words = content_words(text)
    lexical = 0.0 if known_words is None else _share_new(words, known_words)
    novelty = max(semantic, lexical)
    sub = 0.0 if is_small_talk(text) else _substance(words)
    conversational = _unit(sub * (NOVELTY_WEIGHT * novelty + REPETITION_WEIGHT * repetition))
    signals = technical_signals(text)
    technical = _unit(1.0 - math.exp(-signals.total / TECH_SCALE))
    density = _unit(DENSITY_GAIN * signals.total / max(signals.words, 1))
    return GateScore(
        novelty,
        semantic,
        lexical,
        repetition,
        sub,
        conversational,
        technical,
        density,
        blend(conversational, technical, density),
    )


#: Roles whose directives are the user's own rules (an assistant's "you should" is advice, not a rule; in a
#: chat between named people, role = a name, directives are ordinary talk: "don't worry!"): turns.USER_ROLES.
USER_ROLES = _USER_ROLES
#: A rule meant to last says so; a one-off request ("fix the test") does not become a protected memory. The
#: standing markers are the lexer's (directives/register.py), then words that make a rule last on their own.
_DURABLE = re.compile(
    r"\b(?:"
    + "|".join(r"\s+".join(marker) for marker in STANDING_MARKERS)
    + r"|always|never|every time|whenever|each time|remember|must|mustn'?t|do not|don'?t|ever again"
    r"|stop|avoid|refrain)\b",
    re.IGNORECASE,
)


def is_directive(role: str, text: str) -> bool:
    """True when ``text``, said by ``role``, is a hard directive to keep verbatim: the user's own turn, in
    which the deontic lexer (directives.lexer.lex), reading it as the soul file's partition will (an ordinary
    note), finds an obligation or prohibition whose sentence says it is meant to last ("always", "never",
    "from now on", "must", "don't", "remember")."""
    if role.strip().casefold() not in USER_ROLES:
        return False
    from botbin.directives.lexer import lex

    return any(
        c.modality in ("obligation", "prohibition") and _DURABLE.search(text, c.sentence_start, c.sentence_end)
        for c in lex(text, instructions=False)
    )
