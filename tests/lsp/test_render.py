"""Service results -> LSP payloads (botbin.lsp.render): hit dictionaries, hover markdown, workspace symbols."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from lsprotocol import types
from markdown_it import MarkdownIt

from botbin.directives.partition import Directive, Kind, RuleCue
from botbin.index.hits import Hit
from botbin.lsp.render import directive_line, hover_markdown, symbol
from botbin.wire.convert import lines_range, lsp_hit
from botbin.wire.model import dump

URI = "file:///ws/memory/2026-01-02.md"


def make_hit(**fields: Any) -> Hit:
    base: dict[str, Any] = {
        "path": "memory/2026-01-02.md",
        "start_line": 4,
        "end_line": 9,
        "heading_path": ("Project", "Rules"),
        "kind": "soft",
        "title": "Daily note",
        "snippet": "Always run the linter.",
        "text": "## Rules\n\nAlways run the linter.\n",
        "score": 0.87654321,
        "cosine": 0.9,
        "bm25": 0.5,
        "bm25_share": 0.25,
    }
    return Hit(**{**base, **fields})


def make_directive(cues: tuple[RuleCue, ...] = (), kind: Kind = "hard") -> Directive:
    return Directive(
        path="MEMORY.md",
        kind=kind,
        text="- Never push to main.",
        start_line=3,
        end_line=4,
        heading_path=("Rules",),
        cues=cues,
    )


NEVER = RuleCue(modality="prohibition", cue="Never", line=3, positive=False, action="push to main")


def render(markdown: str) -> str:
    """HTML as a CommonMark client with GFM tables and strikethrough (VS Code) shows the hover; ``file:``
    links allowed, as editors follow them from a hover (markdown-it refuses them by default)."""
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return str(md.render(markdown))


# -- hit payloads ----------------------------------------------------------------------------------


def test_lines_range() -> None:
    assert dump(lines_range(2, 5)) == {"start": {"line": 2, "character": 0}, "end": {"line": 5, "character": 0}}
    assert dump(lines_range(5, 2))["end"] == {"line": 5, "character": 0}


def test_hit_payload_is_camel_case_with_uri_and_whole_line_range() -> None:
    payload = dump(lsp_hit(make_hit(), URI))
    assert payload == {
        "path": "memory/2026-01-02.md",
        "startLine": 4,
        "endLine": 9,
        "headingPath": ["Project", "Rules"],
        "kind": "soft",
        "title": "Daily note",
        "snippet": "Always run the linter.",
        "score": 0.876543,
        "cosine": 0.9,
        "bm25": 0.5,
        "bm25Share": 0.25,  # issues 18/19: the relevance floor's keyword arm
        "uri": URI,
        "snippetStartLine": 0,
        "snippetEndLine": 0,  # issue 18: the snippet sentence's lines (make_hit's defaults)
        "components": {},  # issue 22: the typed hit always carries its ranking stages (none here)
        "namespace": None,  # issue 23: the team database's namespace (null for the embedded index)
        "range": {"start": {"line": 4, "character": 0}, "end": {"line": 9, "character": 0}},
    }
    assert all("_" not in key for key in payload)
    assert "text" not in payload  # the full chunk is not sent


# -- hover -----------------------------------------------------------------------------------------


def test_hover_is_none_when_there_is_nothing_to_show() -> None:
    assert hover_markdown([], None, indexing=False, degraded=False) is None
    assert hover_markdown([], None, indexing=False, degraded=True) is None


def test_hover_of_a_directive_alone() -> None:
    assert hover_markdown([], make_directive((NEVER,)), indexing=False, degraded=False) == (
        "**Directive:** hard \u00b7 prohibition (\u201cNever\u201d)"
    )
    assert hover_markdown([], make_directive(), indexing=False, degraded=False) == "**Directive:** hard \u00b7 rule"


def test_directive_line_escapes_the_cue() -> None:
    cue = replace(NEVER, cue="*never*")
    assert directive_line(make_directive((cue,), kind="soft")) == (
        "**Directive:** soft \u00b7 prohibition (\u201c\\*never\\*\u201d)"
    )


def test_hover_while_indexing_with_no_hits() -> None:
    markdown = hover_markdown([], None, indexing=True, degraded=False)
    assert markdown == "_botbin is indexing; related memories appear when it is done._"
    with_directive = hover_markdown([], make_directive((NEVER,)), indexing=True, degraded=False)
    assert with_directive is not None
    assert with_directive.split("\n\n") == [directive_line(make_directive((NEVER,))), markdown]


def test_hover_lists_hits_with_link_to_first_line() -> None:
    hits = [(make_hit(), URI), (make_hit(start_line=0, heading_path=(), title="Other", score=0.5), "file:///ws/b.md")]
    markdown = hover_markdown(hits, None, indexing=False, degraded=False)
    assert markdown is not None
    header, first, second = markdown.split("\n\n")
    assert header == "**Related memories**"
    assert first == (f"1. [Daily note]({URI}#L5) \u00b7 Project \u203a Rules \u00b7 0.88  \n   Always run the linter.")
    assert second.startswith("2. [Other](file:///ws/b.md#L1) \u00b7 Other \u00b7 0.50  \n")
    html = render(markdown)
    assert re.findall(r'<a href="([^"]+)">', html) == [f"{URI}#L5", "file:///ws/b.md#L1"]


def test_hover_skips_blank_headings() -> None:
    markdown = hover_markdown([(make_hit(heading_path=("  ", "Rules")), URI)], None, False, False)
    assert markdown is not None
    assert "\u00b7 Rules \u00b7" in markdown


def test_hover_notes_indexing_and_degraded() -> None:
    hits = [(make_hit(), URI)]
    assert (hover_markdown(hits, None, indexing=True, degraded=False) or "").startswith(
        "**Related memories** (indexing\u2026)\n\n"
    )
    degraded = hover_markdown(hits, None, indexing=False, degraded=True) or ""
    assert degraded.startswith("**Related memories** (keyword match only: the model is unavailable)\n\n")
    both = hover_markdown(hits, None, indexing=True, degraded=True) or ""
    assert both.startswith("**Related memories** (indexing\u2026) (keyword match only")


def test_hover_with_directive_and_hits() -> None:
    markdown = hover_markdown([(make_hit(), URI)], make_directive((NEVER,)), indexing=False, degraded=False)
    assert markdown is not None
    assert markdown.split("\n\n")[:2] == [directive_line(make_directive((NEVER,))), "**Related memories**"]


NASTY = "a [link](http://x) *b* _c_ `d` <e> |f| #g \\h"
ESCAPED = "a \\[link\\](http://x) \\*b\\* \\_c\\_ \\`d\\` \\<e\\> \\|f\\| \\#g \\\\h"


def test_hover_escapes_markdown_in_titles_headings_and_snippets() -> None:
    hit = make_hit(title=NASTY, heading_path=(NASTY,), snippet=NASTY)
    markdown = hover_markdown([(hit, URI)], None, indexing=False, degraded=False)
    assert markdown is not None
    entry = markdown.split("\n\n")[1]
    assert entry == f"1. [{ESCAPED}]({URI}#L5) \u00b7 {ESCAPED} \u00b7 0.88  \n   {ESCAPED}"
    html = render(markdown)
    assert html.count("<a href") == 1  # only the link botbin made
    for tag in ("<em>", "<code>", "<e>", "<table>", "<h1>"):
        assert tag not in html
    assert html.count("<strong>") == 1  # **Related memories**


def test_hover_flattens_newlines() -> None:
    hit = make_hit(title="two\nlines", heading_path=("Head\r\ning",), snippet="first\n\n# Heading\n\n- item\r\nlast")
    markdown = hover_markdown([(hit, URI)], None, indexing=False, degraded=False)
    assert markdown is not None
    entry = markdown.split("\n\n")[1]
    assert entry.count("\n") == 1  # only the hard break between the link line and the snippet
    assert entry.endswith("   first \\# Heading - item last")
    assert "[two lines]" in entry
    assert "Head ing" in entry
    assert "<h1>" not in render(markdown)


def test_hover_uses_the_text_when_the_snippet_is_empty_and_shortens_it() -> None:
    long_text = "word " * 100
    markdown = hover_markdown([(make_hit(snippet="", text=long_text), URI)], None, False, False)
    assert markdown is not None
    snippet = markdown.split("\n   ", 1)[1]
    assert snippet.endswith("\u2026")
    assert len(snippet) <= 220
    assert snippet.startswith("word word")


@pytest.mark.parametrize(
    "snippet",
    [
        "--- rule ---",
        "***",
        "# not a heading",
        "> not a quote",
        "- Always use tabs. - Never push to main.",
        "+ plus",
        "1. First step",
        "---",
        "===",
    ],
)
def test_hover_snippet_that_starts_like_a_block_stays_text(snippet: str) -> None:
    html = render(hover_markdown([(make_hit(snippet=snippet), URI)], None, False, False) or "")
    assert html.count("<li>") == 1  # the hit itself, no list nested in it
    for tag in ("<hr", "<h1>", "<h2>", "<blockquote>"):
        assert tag not in html


# -- workspace symbols -------------------------------------------------------------------------------


def test_symbol() -> None:
    info = symbol(make_hit(snippet="Always   run\nthe linter."), URI)
    assert isinstance(info, types.SymbolInformation)
    assert info.name == "Project \u203a Rules \u2014 Always run the linter."
    assert info.kind == types.SymbolKind.String
    assert info.location == types.Location(
        uri=URI, range=types.Range(start=types.Position(4, 0), end=types.Position(9, 0))
    )
    assert info.container_name == "memory/2026-01-02.md"


def test_symbol_without_headings_is_named_by_title() -> None:
    info = symbol(make_hit(heading_path=(" ",), snippet=""), URI)
    assert info.name == "Daily note \u2014 ## Rules Always run the linter."
