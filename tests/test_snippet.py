"""Tests for botbin.index.snippet: the best-matching sentence, markdown removed, cut at word boundaries."""

from __future__ import annotations

import pytest

from botbin.index.snippet import ELLIPSIS, best_snippet, sentences, strip_markdown
from botbin.index.tokenize import bm25_terms


def weights(query: str) -> dict[str, float]:
    return dict.fromkeys(bm25_terms(query), 1.0)


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ("Some **bold** and __strong__ and *em* and _it_ text", "Some bold and strong and em and it text"),
        (
            "See [[Other note|the alias]] and [[Plain link]] and ![[image.png]] here",
            "See the alias and Plain link and here",
        ),
        ("See [[Note#Heading]] too", "See Note > Heading too"),
        ("To embed a block:\n![[Internal links#^b15695]]", "To embed a block: Internal links"),
        ("See [[#^abc]] and [[Note#Part#^id9]]", "See and Note > Part"),
        ("[!tip]- Drag and drop embed", "Drag and drop embed"),
        ("Line&nbsp;height &amp; width", "Line height & width"),
        ("Use `[[^^block]]` to link", "Use [[^^block]] to link"),
        ("Type `&nbsp;` (a space) or `<br>` (a break)", "Type &nbsp; (a space) or <br> (a break)"),
        ("For example, `![[Engelbart.jpg|100]]`: ![[Engelbart.jpg|100]]", "For example, ![[Engelbart.jpg|100]]:"),
        ("Resize: ![250](https://example.com/Engelbart.jpg) and ![A cat](c.png)", "Resize: and A cat"),
        ("Desktop ![[lucide-monitor-check.svg#icon]] then [[Note|100]]", "Desktop then Note"),
        ("To embed a note:\n```md\n![[Internal links]]\n```", "To embed a note: ![[Internal links]]"),
        ("synced (iCloud). **How do I manage", "synced (iCloud). How do I manage"),
        ("A [link](https://example.com/a_(b)) and ![alt](img.png)", "A link and alt"),
        ("> [!note] Callout title", "Callout title"),
        ("> [!warning]- Folded\n> body line", "Folded body line"),
        ("> quoted words", "quoted words"),
        ("- item one", "item one"),
        ("1. first step", "first step"),
        ("- [x] done task", "done task"),
        ("## Heading text", "Heading text"),
        ("Use `git status` now", "Use git status now"),
        ("==marked== and ~~gone~~", "marked and gone"),
        ("| a | b |\n|---|:--:|\n| 1 | 2 |", "a | b 1 | 2"),
        ("Style | Syntax\n- | -\nBold | x", "Style | Syntax Bold | x"),
        ("a\n\n-\n\nb - c", "a - b - c"),
        ("```python\nx = 1\n```", "x = 1"),
        ("snake_case_name and 2*3*4 stay", "snake_case_name and 2*3*4 stay"),
        ("a footnote[^1] here <b>bold</b>", "a footnote here bold"),
        (r"escaped \*stars\* stay", "escaped *stars* stay"),
    ],
)
def test_markdown_is_removed_for_display(markdown: str, plain: str) -> None:
    assert strip_markdown(markdown) == plain


def test_sentences_follow_lines_items_and_punctuation() -> None:
    text = "First one. Second one!\nwrapped third\ncontinues here.\n- item a\n- item b\n\n| r | s |"
    got = [text[s:e] for s, e in sentences(text)]
    assert got == ["First one.", "Second one!", "wrapped third\ncontinues here.", "item a", "item b", "| r | s |"]


def test_the_matching_sentence_is_chosen_with_its_line_range() -> None:
    text = (
        "We talked about the weather for a long time and it rained all day in the city and nobody went out.\n"
        "Later we discussed football results and the league table at great length over dinner with friends.\n"
        "- My blood type is **AB negative**.\n"
        "- The train was late again this morning and everybody complained about it for a long while then."
    )
    snip = best_snippet(text, weights("what is my blood type"), width=60)
    assert snip.text == ELLIPSIS + "My blood type is AB negative." + ELLIPSIS
    assert (snip.start_line, snip.end_line) == (2, 3)


def test_rarer_terms_outweigh_common_ones() -> None:
    text = "What is the plan for today?\nThe locker code is 4471."
    snip = best_snippet(text, {"what": 0.1, "is": 0.05, "locker": 3.0, "code": 2.0}, width=30)
    assert snip.text == ELLIPSIS + "The locker code is 4471."
    assert snip.start_line == 1


def test_short_chunk_is_shown_whole_and_flattened() -> None:
    snip = best_snippet("  one\n\ntwo\tthree  ", weights("two"))
    assert snip.text == "one two three"


def test_neighbours_fill_the_width_and_cut_ends_are_marked() -> None:
    text = (
        " ".join(f"Sentence {i} is filler." for i in range(20))
        + " The needle sits here. "
        + " ".join(f"After {i} more filler." for i in range(20))
    )
    snip = best_snippet(text, weights("needle"), width=80)
    assert "The needle sits here." in snip.text
    assert snip.text.startswith(ELLIPSIS) and snip.text.endswith(ELLIPSIS)
    assert len(snip.text) <= 80
    inner = snip.text.strip(ELLIPSIS)
    assert all(word in text.split() for word in inner.split())  # whole words only


def test_long_sentence_is_cut_at_word_boundaries_around_the_match() -> None:
    sentence = " ".join(f"information{i}" for i in range(60)) + " needle " + " ".join(f"word{i}" for i in range(60))
    snip = best_snippet(sentence, weights("needle"), width=100)
    assert "needle" in snip.text
    assert snip.text.startswith(ELLIPSIS) and snip.text.endswith(ELLIPSIS)
    assert len(snip.text) <= 100
    for word in snip.text.strip(ELLIPSIS).split():
        assert word == "needle" or (
            word.startswith(("information", "word"))
            and word.rstrip("0123456789") in ("information", "word")
            and word in sentence.split()
        )


def test_no_matching_word_shows_the_beginning() -> None:
    snip = best_snippet("Alpha beta gamma. Delta epsilon.", weights("zeta"))
    assert snip.text == "Alpha beta gamma. Delta epsilon."
    assert (snip.start_line, snip.end_line) == (0, 1)


def test_empty_text_gives_an_empty_snippet() -> None:
    assert best_snippet("", weights("x")).text == ""
    assert best_snippet("```\n```", weights("x")).text == ""


def test_a_chunk_with_no_words_shows_its_markup_rather_than_nothing() -> None:
    shown = best_snippet("![250](https://example.com/Engelbart.jpg)", weights("embed an image"))
    assert shown.text == "![250](https://example.com/Engelbart.jpg)"
