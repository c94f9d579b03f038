"""Fuzzing the markdown pipeline: decode_note, parse_note, lex, partition_note, chunk_note and prepare_note.

The promises checked (``markdown_cases.check_*``) for random markdown-ish text and random bytes: only the
documented errors (ParseError from decode_note and prepare_note for a binary file, none from the others),
results that keep their docstrings' invariants, each call under 1 CPU second (and each example under 1 s of
wall-clock time: hypothesis' deadline). Examples are derandomized so a failure reproduces on every run;
``bench/fuzz_run.py`` drives the same strategies for longer, at random. Inputs the fuzzers found that broke a
promise are regression tests at the end.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from markdown_cases import (
    any_text,
    check_chunk_note,
    check_decode_note,
    check_lex,
    check_parse,
    check_partition,
    check_prepare,
    counter,
    lf_texts,
    markdown_texts,
    note_bytes,
    note_paths,
    params,
)

from botbin.chunking import ChunkerParams

FUZZ = settings(
    max_examples=100,
    deadline=1000,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module", autouse=True)
def _load_counter() -> None:
    counter()  # load the tokenizer outside the timed examples


@FUZZ
@given(data=note_bytes())
def test_fuzz_decode_note(data: bytes) -> None:
    check_decode_note(data)


@FUZZ
@given(text=lf_texts(), path=note_paths)
def test_fuzz_parse_note(text: str, path: str) -> None:
    check_parse(text, path)


@FUZZ
@given(text=any_text())
def test_fuzz_lex(text: str) -> None:
    check_lex(text)


@FUZZ
@given(text=lf_texts(), path=note_paths)
def test_fuzz_partition_note(text: str, path: str) -> None:
    check_partition(check_parse(text, path), text)


@FUZZ
@given(text=markdown_texts(), p=params, path=note_paths)
def test_fuzz_chunk_note(text: str, p: ChunkerParams, path: str) -> None:
    check_chunk_note(text, p, path)


@FUZZ
@given(data=note_bytes(), p=params, path=note_paths)
def test_fuzz_prepare_note(data: bytes, p: ChunkerParams, path: str) -> None:
    check_prepare(path, data, p)


# --- regressions: inputs the fuzzers found ------------------------------------------------------------------------

#: Each took over 1 s before its fix (CPU seconds then -> now): the backtick regexes rescanned the text from every
#: backtick ("a" + 20,000 backticks: parse_note > 5 s, cubic -> 0.001 s; lex 2.2 s -> 0.004 s); the lexer's link
#: and comment patterns rescanned up to 2,000 characters from every unclosed opener (64 KB of "[a](": 1.5-2 s ->
#: 0.06 s; 256 KB of "<!--": 1.3 s -> 0.05 s; wikilinks and autolinks were 4-6x slower than now, too).
SLOW_BEFORE = ["a" + "`" * 20_000, "a" + "`" * 64_000, "[a](" * 16_000, "<!--" * 64_000]


@pytest.mark.parametrize("text", SLOW_BEFORE, ids=lambda t: f"{t[:5]!r}x{len(t)}")
def test_long_lines_of_openers_are_fast(text: str) -> None:
    check_partition(check_parse(text, "MEMORY.md"), text)
    check_lex(text)


@pytest.mark.parametrize("yaml", ["!!timestamp x", "a: !!timestamp 2026-99", "when: !!timestamp [1]"])
def test_yaml_constructor_errors_are_warnings(yaml: str) -> None:
    """PyYAML raises AttributeError (not YAMLError) for a bad !!timestamp; it was let through parse_note."""
    note = check_parse(f"---\n{yaml}\n---\nbody\n")
    assert note.frontmatter.data == {} and "malformed YAML" in note.warnings[0]


def test_yaml_escaped_surrogates_do_not_break_the_file() -> None:
    """A YAML escape "\\ud800" gave a lone surrogate in the metadata: MessagePack (and so sync) failed on it."""
    data = b'---\ntitle: "\\ud800 x"\ntags: ["\\udfff", "\\ud83d\\ude00"]\n"\\ud800": 1\n---\nNever push to main.\n'
    prep = check_prepare("MEMORY.md", data, ChunkerParams())
    assert prep is not None and prep.note.title == "\ufffd x" and prep.note.frontmatter.tags == ("\ufffd", "😀")
