"""Tests for botbin.index.tokenize: the Unicode-aware BM25 tokenizer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botbin.index.tokenize import bm25_terms, tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Hello, World!", ["hello", "world"]),
        ("ＡＢＣ ｄｅｆ １２３", ["abc", "def", "123"]),
        ("ﬁle ﬂow", ["file", "flow"]),
        ("Ⅻ", ["xii"]),
        ("ｶﾀｶﾅ", ["カタ", "タカ", "カナ"]),
        ("e\u0301te\u0301", ["été"]),
    ],
)
def test_nfkc(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Straße STRASSE strasse", ["strasse", "strasse", "strasse"]),
        ("CAFÉ Café café", ["café", "café", "café"]),
        ("ΣΊΣΥΦΟΣ σίσυφος", ["σίσυφοσ", "σίσυφοσ"]),
        ("ısı", ["ısı"]),
    ],
)
def test_casefold(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_turkish_dotted_capital_i_stays_one_word() -> None:
    assert len(tokenize("İstanbul")) == 1


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("中文分词", ["中文", "文分", "分词"]),
        ("中", ["中"]),
        ("语言 模型", ["语言", "模型"]),
        ("ひらがなカタカナ", ["ひら", "らが", "がな", "なカ", "カタ", "タカ", "カナ"]),
        ("東京タワー", ["東京", "京タ", "タワ", "ワー"]),
        ("한국어 텍스트", ["한국", "국어", "텍스", "스트"]),
        ("漢字、かな。", ["漢字", "かな"]),
    ],
)
def test_cjk_bigrams(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Use SQLite 数据库 for 缓存.", ["use", "sqlite", "数据", "据库", "for", "缓存"]),
        ("Привет мир hello", ["привет", "мир", "hello"]),
        ("مرحبا بالعالم", ["مرحبا", "بالعالم"]),
        ("東京タワーは tall", ["東京", "京タ", "タワ", "ワー", "ーは", "tall"]),
        ("한국어text", ["한국", "국어", "text"]),
    ],
)
def test_mixed_scripts(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("Python是一种语言", ["python", "是一", "一种", "种语", "语言"]), ("使用API接口", ["使用", "api", "接口"])],
)
def test_latin_glued_to_cjk(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_scripts_with_combining_marks_keep_whole_words() -> None:
    assert tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]


@pytest.mark.parametrize("text", ["", "   ", "!!! --- ???", "___", "…", "— · —", "\n\t"])
def test_empty_or_symbols_only(text: str) -> None:
    assert tokenize(text) == []


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("snake_case_name", ["snake", "case", "name"]),
        ("__init__", ["init"]),
        ("kebab-case", ["kebab", "case"]),
        ("path/to/file.md", ["path", "to", "file", "md"]),
        ("v2.0 x86_64", ["v2", "0", "x86", "64"]),
        ("don't rock’n’roll", ["don't", "rock’n’roll"]),
        ("#tag [[Link]]", ["tag", "link"]),
    ],
)
def test_word_boundaries(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@settings(max_examples=200, deadline=None, database=None)
@given(st.text(max_size=200))
def test_never_raises_and_tokens_are_normalized(text: str) -> None:
    tokens = tokenize(text)
    for token in tokens:
        assert token
        assert token == token.casefold()
        assert not any(ch.isspace() for ch in token)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Studies studied; a study", ["studi", "studi", "a", "studi"]),
        ("Linking notes and links", ["link", "note", "and", "link"]),
        ("Alzheimer’s and Alzheimer's", ["alzheim", "and", "alzheim"]),
        ("The cats were running", ["the", "cat", "were", "run"]),
        ("使用API接口 数据库", ["使用", "api", "接口", "数据", "据库"]),
        ("Привет мир, σίσυφος", ["привет", "мир", "σίσυφοσ"]),
        ("snake_case v2.0", ["snake", "case", "v2", "0"]),
        ("", []),
        ("!!!", []),
    ],
)
def test_bm25_terms_are_stems(text: str, terms: list[str]) -> None:
    assert bm25_terms(text) == terms


@settings(max_examples=200, deadline=None, database=None)
@given(st.text(max_size=200))
def test_bm25_terms_never_raise_and_are_nonempty(text: str) -> None:
    terms = bm25_terms(text)
    assert all(terms) and len(terms) == len(tokenize(text))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_shortcut_finds_the_words_of_the_unicode_pattern(text: str) -> None:
    # tokenize() takes a plain [a-z0-9] pattern for ASCII text (issue 21: index load): same words as the full one
    from botbin.index.tokenize import _token_pattern

    assert tokenize(text) == _token_pattern().findall(text.casefold())


@pytest.mark.parametrize("text", ["Alzheimer’s and Alzheimer's", "’quoted’ don’t", "x’", "it’s 東京 ’s"])
def test_curly_apostrophe_is_the_ascii_one(text: str) -> None:
    assert bm25_terms(text) == bm25_terms(text.replace("’", "'"))
