"""gate.py: the admission gate's properties (hypothesis) and its technical signals."""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from botbin.memory.conversation.gate import (
    NOVELTY_WEIGHT,
    SAME_COSINE,
    UNRELATED_COSINE,
    blend,
    content_words,
    is_directive,
    lexical_novelty,
    score_turn,
    substance,
    technical_signals,
)

DIM = 384
_finite = st.floats(-1.0, 1.0, allow_nan=False, width=32)
texts = st.text(max_size=300) | st.sampled_from(
    [
        "cargo build fails with E0425 in src/main.rs: cannot find `foo_bar`",
        "We decided to use PostgreSQL; see docs/adr/0003.md",
        "ok thanks!",
        "I moved to Berlin in May.",
        "",
    ]
)


def _unit(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


vectors = arrays(np.float32, DIM, elements=_finite).map(_unit)
memories = st.integers(0, 6).flatmap(lambda n: arrays(np.float32, (n, DIM), elements=_finite))


@settings(max_examples=200, deadline=None)
@given(texts, vectors, memories, memories)
def test_every_field_is_in_the_unit_interval(
    text: str, vector: npt.NDArray[np.float32], memory: npt.NDArray[np.float32], history: npt.NDArray[np.float32]
) -> None:
    score = score_turn(text, vector, memory, history, set(content_words(text)[::2]))
    for name in (
        "novelty",
        "semantic_novelty",
        "lexical_novelty",
        "repetition",
        "substance",
        "conversational",
        "technical",
        "density",
        "score",
    ):
        assert 0.0 <= getattr(score, name) <= 1.0, (name, score)


@settings(max_examples=100, deadline=None)
@given(texts, vectors)
def test_empty_memory_gives_maximal_novelty(text: str, vector: npt.NDArray[np.float32]) -> None:
    score = score_turn(text, vector, np.zeros((0, DIM), dtype=np.float32))
    assert score.novelty == 1.0 and score.repetition == 0.0
    assert score.conversational == substance(text) * NOVELTY_WEIGHT


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(categories=["Ll", "Zs"]), max_size=200), vectors, memories)
def test_purely_conversational_turns_get_the_conversational_score_exactly(
    text: str, vector: npt.NDArray[np.float32], memory: npt.NDArray[np.float32]
) -> None:
    score = score_turn(text, vector, memory)
    if technical_signals(text).total == 0:
        assert score.density == 0.0 and score.score == score.conversational


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_blend_is_convex(c: float, t: float, d: float) -> None:
    assert min(c, t) - 1e-12 <= blend(c, t, d) <= max(c, t) + 1e-12
    assert blend(c, t, 0.0) == c
    assert abs(blend(c, t, 1.0) - t) < 1e-12


@settings(max_examples=100, deadline=None)
@given(texts, vectors)
def test_remembering_the_turn_itself_lowers_novelty_to_zero(text: str, vector: npt.NDArray[np.float32]) -> None:
    if np.linalg.norm(vector) == 0:
        return
    empty = score_turn(text, vector, np.zeros((0, DIM), dtype=np.float32))
    seen = score_turn(text, vector, vector[None, :], vector[None, :])
    assert seen.novelty < 1e-3 and seen.conversational <= empty.conversational


def _at_cosine(c: float) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Two unit vectors whose cosine is ``c``."""
    a = np.zeros(DIM, dtype=np.float32)
    a[0] = 1.0
    b = np.zeros(DIM, dtype=np.float32)
    b[0], b[1] = c, np.sqrt(1.0 - c * c)
    return a, b


def test_semantic_novelty_reads_the_cosine_on_a_band() -> None:
    for cosine, expected in (
        (0.1, 1.0),
        (UNRELATED_COSINE, 1.0),
        ((UNRELATED_COSINE + SAME_COSINE) / 2, 0.5),
        (SAME_COSINE, 0.0),
        (0.99, 0.0),
    ):
        a, b = _at_cosine(cosine)
        score = score_turn("Caroline went to the support group", a, b[None, :])
        assert abs(score.semantic_novelty - expected) < 1e-4, (cosine, score)
        assert score.lexical_novelty == 0.0 and score.novelty == score.semantic_novelty


def test_news_on_a_familiar_subject_is_novel_by_its_words() -> None:
    said = "I have been thinking a lot about adoption and what adoption would mean for me"
    news = "I applied to three adoption agencies in Portland this week"
    a, b = _at_cosine(0.85)  # close in meaning: semantic novelty alone would turn it away
    known = set(content_words(said))
    fresh = score_turn(news, a, b[None, :], b[None, :], known)
    again = score_turn(said, a, b[None, :], b[None, :], known)
    assert fresh.lexical_novelty >= 0.8 and fresh.novelty == fresh.lexical_novelty > fresh.semantic_novelty
    assert fresh.score >= 0.35 > again.score and again.lexical_novelty == 0.0
    assert lexical_novelty("ok thanks!", set()) == 0.0  # no content words, nothing new


@settings(max_examples=100, deadline=None)
@given(texts, vectors, memories, st.lists(st.text(max_size=12), max_size=20), st.lists(st.text(max_size=12)))
def test_more_known_words_never_raise_the_score(
    text: str, vector: npt.NDArray[np.float32], durable: npt.NDArray[np.float32], known: list[str], extra: list[str]
) -> None:
    words = set(known) | set(content_words(" ".join([*extra, text[: len(text) // 2]])))
    before = score_turn(text, vector, durable, None, set(known))
    after = score_turn(text, vector, durable, None, set(known) | words)
    assert after.lexical_novelty <= before.lexical_novelty and after.score <= before.score + 1e-9


def test_repetition_counts_near_repeats_and_saturates() -> None:
    v = np.zeros(DIM, dtype=np.float32)
    v[0] = 1.0
    one = score_turn("my dog is called Pretzel", v, v[None, :], v[None, :])
    many = score_turn("my dog is called Pretzel", v, np.zeros((0, DIM), dtype=np.float32), np.stack([v] * 10))
    durable_only = score_turn("my dog is called Pretzel", v, np.stack([v] * 10))
    assert one.repetition == 1 / 3 and many.repetition == 1.0 and durable_only.repetition == 0.0


@settings(max_examples=100, deadline=None)
@given(texts, vectors, memories, memories, memories)
def test_more_durable_memory_never_raises_the_score(
    text: str,
    vector: npt.NDArray[np.float32],
    durable: npt.NDArray[np.float32],
    extra: npt.NDArray[np.float32],
    history: npt.NDArray[np.float32],
) -> None:
    """Why a second ingestion of a log admits nothing new: its soul file only grew."""
    before = score_turn(text, vector, durable, history)
    after = score_turn(text, vector, np.concatenate([durable, extra]), history)
    assert after.score <= before.score + 1e-6  # float32 cosines: BLAS sums in another order


def test_technical_signals() -> None:
    s = technical_signals("cargo build fails with E0425 in src/main.rs: cannot find `foo_bar` (HTTP 503)")
    assert (s.paths, s.error_codes, s.identifiers, s.decisions) == (1, 2, 1, 0)
    assert technical_signals("We decided to go with ValueError handling in config.toml").total == 3
    assert technical_signals("he/she and/or 24/7, I love my dog").total == 0


@pytest.mark.parametrize("text", ["a." * 50_000, "a-" * 50_000, "-a-" * 33_000, "x.y(" * 25_000])
def test_technical_signals_are_linear_on_pathological_turns(text: str) -> None:
    """Found by review: ``\\w+(?:\\.\\w+)*\\(\\)`` and ``\\w[\\w-]*\\.ext`` retried from every word of a long dotted or
    hyphenated run (16 KB took 1.4 s, so 100 KB about a minute) under the observer's lock. Same bound as the
    markdown fuzzers: under 1 CPU second (here ~0.15 s)."""
    started = time.process_time()
    technical_signals(text)
    assert time.process_time() - started < 1.0


def test_technical_turn_leans_on_the_technical_scorer() -> None:
    v = np.zeros(DIM, dtype=np.float32)
    v[0] = 1.0
    tech = score_turn("ENOENT on ~/.config/botbin/botbin.toml from load_settings()", v, v[None, :])
    assert tech.density == 1.0 and tech.score == tech.technical > 0.7
    chat = score_turn("ok thanks, see you soon!", v, np.zeros((0, DIM), dtype=np.float32))
    assert chat.score < 0.35


def test_directives_of_the_user_only() -> None:
    assert is_directive("user", "Never push to main.")
    assert is_directive("Human", "From now on, call me Sam.")
    assert not is_directive("assistant", "You must never push to main.")
    assert not is_directive("Caroline", "Don't worry, you must feel great!")
    assert not is_directive("user", "Fix the login bug")  # a one-off request, not a lasting rule
    assert not is_directive("user", "Can you always use tabs?")
