"""Agent memory over a workspace (agent/gather.py, agent/remember.py, the service's recall, context and
remember), with the fast FakeEmbedder: remember's entry format and byte-exact appends, recency-ranked recall,
tiered context."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from botbin.agent.context import HEADERS, ContextBudgetError, Item
from botbin.agent.gather import gather, recent_entries
from botbin.agent.remember import Remembered, entry_text, remember
from botbin.errors import BotbinError
from botbin.parsing import decode_note
from botbin.service import MemoryService
from botbin.wire.requests import ContextRequest, SearchRequest
from conftest import write_notes

NOW = datetime(2026, 11, 3, 9, 5).astimezone()
REL = "memory/2026-11-03.md"
ServiceFactory = Callable[..., MemoryService]


def lines_of(path: Path) -> list[str]:
    """The note's lines as botbin numbers them (any newline convention; undecodable bytes as U+FFFD)."""
    return decode_note(path.read_bytes(), path.name).text.split("\n")


# -- entry_text ------------------------------------------------------------------------------------------------


def test_entry_text_format() -> None:
    assert entry_text("Picked the otter logo.", [], NOW) == "- 09:05 Picked the otter logo."
    assert (
        entry_text("  Picked the otter logo.  ", ["decision", "branding"], NOW)
        == "- 09:05 Picked the otter logo. #decision #branding"
    )


def test_entry_text_strips_hashes_and_skips_empty_tags() -> None:
    assert entry_text("x", ["#decision", "##v2", " ops ", "", "  "], NOW) == "- 09:05 x #decision #v2 #ops"


def test_entry_text_indents_further_lines() -> None:
    text = "First line\nsecond line\n\nthird, after a blank\r\nfourth (CRLF)\rfifth (CR)"
    assert entry_text(text, ["t"], NOW) == (
        "- 09:05 First line #t\n  second line\n\n  third, after a blank\n  fourth (CRLF)\n  fifth (CR)"
    )


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_entry_text_refuses_empty_text(text: str) -> None:
    with pytest.raises(BotbinError, match="empty"):
        entry_text(text, [], NOW)


@pytest.mark.parametrize("tag", ["two words", "a\tb", "a\nb", "#", "#two words"])
def test_entry_text_refuses_a_tag_with_spaces(tag: str) -> None:
    with pytest.raises(BotbinError, match="tag"):
        entry_text("x", [tag], NOW)


# -- remember on disk ------------------------------------------------------------------------------------------


def check_range(root: Path, written: Remembered) -> None:
    """The returned 0-based range holds exactly the entry, and parses as one block of the note."""
    assert written.path == REL
    lines = lines_of(root / REL)
    assert lines[written.start_line : written.end_line] == written.text.split("\n")
    blocks = recent_entries(root, REL)
    assert blocks[-1] == Item(REL, written.start_line, written.end_line, written.text)


def test_remember_creates_todays_note_with_a_heading(tmp_path: Path) -> None:
    written = remember(tmp_path, "Picked the otter logo.", ["decision"], NOW)
    assert (tmp_path / REL).read_bytes() == b"# 2026-11-03\n\n- 09:05 Picked the otter logo. #decision\n"
    assert (written.start_line, written.end_line) == (2, 3)
    assert written.text == "- 09:05 Picked the otter logo. #decision"
    check_range(tmp_path, written)
    assert stat.S_IMODE((tmp_path / REL).stat().st_mode) == 0o600  # private, like everything botbin creates
    assert stat.S_IMODE((tmp_path / "memory").stat().st_mode) == 0o700
    left = sorted(p.name for p in (tmp_path / "memory").iterdir())
    assert left == [REL.split("/")[1], "aifbin"]  # no temp file left; the output folder holds the note's lock


def test_remember_appends_entries_in_order(tmp_path: Path) -> None:
    first = remember(tmp_path, "one", [], NOW)
    second = remember(tmp_path, "two\nand more", ["x"], NOW + timedelta(minutes=10))
    assert (tmp_path / REL).read_text(encoding="utf-8") == "# 2026-11-03\n\n- 09:05 one\n- 09:15 two #x\n  and more\n"
    assert (first.start_line, first.end_line) == (2, 3) and (second.start_line, second.end_line) == (3, 5)
    check_range(tmp_path, second)


@pytest.mark.parametrize(
    "old",
    [
        pytest.param(b"# 2026-11-03\n\n- 08:00 coffee\n", id="lf"),
        pytest.param(b"# 2026-11-03\n\n- 08:00 coffee", id="no-final-newline"),
        pytest.param(b"# 2026-11-03\r\n\r\n- 08:00 coffee\r\n", id="crlf"),
        pytest.param(b"# 2026-11-03\r\n\r\n- 08:00 coffee", id="crlf-no-final-newline"),
        pytest.param(b"# 2026-11-03\n\n- 08:00 caf\xe9 \xff\xfe\n", id="not-utf8"),
        pytest.param(b"\xef\xbb\xbf# 2026-11-03\n\n- 08:00 coffee\n", id="bom"),
        pytest.param(b"---\ntags: [daily]\n---\n# 2026-11-03\n\nSome paragraph\n\n\n", id="frontmatter-blank-lines"),
        pytest.param(b"", id="empty"),
    ],
)
def test_remember_keeps_the_existing_bytes(tmp_path: Path, old: bytes) -> None:
    write_notes(tmp_path, {REL: old})
    written = remember(tmp_path, "tea at ten", ["drink"], NOW)
    data = (tmp_path / REL).read_bytes()
    assert data.startswith(old)
    added = data[len(old) :]
    assert added in (b"- 09:05 tea at ten #drink\n", b"\n- 09:05 tea at ten #drink\n")
    assert added.startswith(b"\n") == (old != b"" and not old.endswith(b"\n"))
    check_range(tmp_path, written)


def test_remember_line_range_in_a_cr_only_note(tmp_path: Path) -> None:
    write_notes(tmp_path, {REL: b"# 2026-11-03\r\r- 08:00 coffee\r"})
    written = remember(tmp_path, "tea", [], NOW)
    assert (tmp_path / REL).read_bytes().startswith(b"# 2026-11-03\r\r- 08:00 coffee\r")
    check_range(tmp_path, written)


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664, 0o755])
def test_remember_keeps_the_permission_bits(tmp_path: Path, mode: int) -> None:
    note = write_notes(tmp_path, {REL: "# 2026-11-03\n"}) / REL
    note.chmod(mode)
    remember(tmp_path, "x", [], NOW)
    assert stat.S_IMODE(note.stat().st_mode) == mode
    assert note.read_text(encoding="utf-8") == "# 2026-11-03\n- 09:05 x\n"


@pytest.mark.parametrize("absolute", [False, True])
def test_remember_writes_through_a_symlinked_note(tmp_path: Path, absolute: bool) -> None:
    target = write_notes(tmp_path, {"journal/today.md": "# Today\n"}) / "journal" / "today.md"
    link = tmp_path / REL
    link.parent.mkdir(parents=True)
    link.symlink_to(target if absolute else Path("..") / "journal" / "today.md")
    written = remember(tmp_path, "through the link", [], NOW)
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_text(encoding="utf-8") == "# Today\n- 09:05 through the link\n"
    assert (written.path, written.start_line, written.end_line) == (REL, 1, 2)
    assert sorted(p.name for p in target.parent.iterdir()) == ["today.md"]  # no temp file left


def test_remember_refuses_bad_input_without_touching_the_note(tmp_path: Path) -> None:
    write_notes(tmp_path, {REL: "# 2026-11-03\n"})
    for text, tags in (("  ", []), ("ok", ["two words"])):
        with pytest.raises(BotbinError):
            remember(tmp_path, text, tags, NOW)
    assert (tmp_path / REL).read_text(encoding="utf-8") == "# 2026-11-03\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_remember_into_a_read_only_folder_raises(tmp_path: Path) -> None:
    folder = write_notes(tmp_path, {REL: "# 2026-11-03\n"}) / "memory"
    folder.chmod(0o500)
    try:
        with pytest.raises(BotbinError, match="cannot write"):
            remember(tmp_path, "x", [], NOW)
    finally:
        folder.chmod(0o700)
    assert (tmp_path / REL).read_text(encoding="utf-8") == "# 2026-11-03\n"


# -- the service: remember, recall, context --------------------------------------------------------------------


def today() -> str:
    return datetime.now().astimezone().strftime("%Y-%m-%d")


def test_service_remember_then_search_finds_the_entry(make_service: ServiceFactory) -> None:
    service = make_service({"MEMORY.md": "# Memory\n\nThe team likes pasta.\n"})
    service.sync()
    written, report = service.remember("We picked the otter logo for v2.", ["decision"])
    assert written.path == f"memory/{today()}.md" and not report.failed
    assert written.path in report.added
    hit = service.search(SearchRequest(query="otter logo", k=1, show_all=True)).hits[0]
    assert hit.path == written.path
    assert hit.start_line <= written.start_line and written.end_line <= hit.end_line
    assert "We picked the otter logo for v2. #decision" in hit.text


def test_service_remember_rejects_empty_text(make_service: ServiceFactory) -> None:
    with pytest.raises(BotbinError, match="empty"):
        make_service({}).remember("   ")


def test_service_remember_keeps_the_daily_note_indexable(make_service: ServiceFactory) -> None:
    service = make_service({})
    _, first = service.remember("The otter logo won.")
    assert not first.failed
    try:
        _, report = service.remember("bad\x00entry")
    except BotbinError:
        return  # refusing the text is fine too
    assert not report.failed, report.failed


def test_service_recall_ranks_a_recent_daily_note_above_an_old_one(make_service: ServiceFactory) -> None:
    entry = "- 09:00 The otter logo was approved by the board.\n"
    old, new = "memory/2020-01-01.md", f"memory/{today()}.md"
    service = make_service(
        {old: entry, new: entry, "memory/cooking.md": "Pasta needs salted water.\n"}, decay_weight=0.0
    )  # memo decay (memory/) would also lower the old note
    service.sync()
    plain = {h.path: h.score for h in service.search(SearchRequest(query="otter logo approved", show_all=True)).hits}
    # The same text: about the same similarity (0.03: issue 18's note and neighbour terms weigh the cosine
    # more, so the fake vectors of the two titles, part of the embedded text, differ a little more; was 0.02).
    assert plain[old] == pytest.approx(plain[new], abs=0.03)
    hits = service.recall(SearchRequest(query="otter logo approved", k=3)).hits
    assert [h.path for h in hits[:2]] == [new, old]
    assert hits[0].score > hits[1].score
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert hits == sorted(hits, key=lambda h: h.score, reverse=True)
    assert len(service.recall(SearchRequest(query="otter", k=1)).hits) == 1


RULES = {
    "AGENTS.md": "# Rules for the assistant\n\n- Never answer in prose.\n",
    "memory/cooking.md": "# Cooking\n\nPasta needs salted water and ten minutes.\n",
    "memory/garden.md": "# Garden\n\nThe tomatoes grow by the shed.\n",
}


def test_context_always_holds_the_rule(make_service: ServiceFactory) -> None:
    service = make_service(RULES)
    service.sync()
    # with the fake embedder the note is found by its words: "how long do I boil pasta" shares only "pasta",
    # one word of six, under the relevance floor since issue 18/19 (the old floor let the best such chunk through)
    result = service.context(ContextRequest(query="how long does pasta need in salted water", budget_tokens=400))
    hard = result.tiers[0]
    assert hard.name == "hard" and [(i.path, i.start_line, i.text) for i in hard.items] == [
        ("AGENTS.md", 2, "- Never answer in prose.")
    ]
    assert result.text.startswith(f"{HEADERS['hard']}\n- Never answer in prose. (AGENTS.md:3)")
    assert "Pasta needs salted water" in result.text  # the relevant note is recalled
    assert result.used_tokens == service.ws.models.counter.count(result.text) <= 400
    # an empty query still gets the rules, and nothing recalled
    bare = service.context(ContextRequest(query="", budget_tokens=400))
    assert [i.text for i in bare.tiers[0].items] == ["- Never answer in prose."] and not bare.tiers[-1].items


def test_context_recent_tier_is_the_end_of_the_latest_daily_note(make_service: ServiceFactory) -> None:
    latest = "memory/2026-11-03.md"
    entries = "".join(f"- 1{n}:00 entry number {n} about the garden shed\n" for n in range(10))
    service = make_service(
        {
            **RULES,
            "memory/2026-11-01.md": "# 2026-11-01\n\n- 09:00 an older day\n",
            latest: "# 2026-11-03\n\n" + entries,
        }
    )
    service.sync()
    result = service.context(ContextRequest(query="pasta", budget_tokens=200))
    recent = {t.name: t for t in result.tiers}["recent"]
    everything = recent_entries(service.root, latest)
    assert len(everything) == 10
    assert 1 <= len(recent.items) < 10
    assert list(recent.items) == everything[-len(recent.items) :]
    assert recent.items[-1].text == "- 19:00 entry number 9 about the garden shed"
    lines = (service.root / latest).read_text(encoding="utf-8").split("\n")
    for item in recent.items:
        assert item.text == "\n".join(lines[item.start_line : item.end_line])  # verbatim
    assert recent.tokens <= int(200 * 0.3)
    assert "an older day" not in "".join(i.text for i in recent.items)


def test_gather_without_a_daily_note_has_no_recent_tier(make_service: ServiceFactory) -> None:
    service = make_service(RULES)
    service.sync()
    assert gather(service.searcher, "pasta").recent == []


def test_context_budget_error_names_the_token_count(make_service: ServiceFactory) -> None:
    service = make_service({**RULES, "CLAUDE.md": "# Memory\n\n- Always sign commits.\n- Never push to main.\n"})
    service.sync()
    hard = gather(service.searcher, "pasta").hard
    assert len(hard) == 3
    need = service.ws.models.counter.count(HEADERS["hard"] + "\n" + "\n".join(i.render() for i in hard))
    with pytest.raises(ContextBudgetError) as info:
        service.context(ContextRequest(query="pasta", budget_tokens=5))
    assert f"the hard rules (3) need {need} tokens, over the budget of 5" in str(info.value)
    assert (
        service.context(ContextRequest(query="pasta", budget_tokens=need)).used_tokens == need
    )  # exactly enough: only the rules


def test_context_instruction_notes_order(make_service: ServiceFactory) -> None:
    service = make_service(
        {
            "CLAUDE.md": "- Always use spaces in YAML.\n",
            "memory/team/AGENTS.md": "- Always write tests first.\n",
            "AGENTS.md": "# Agents\n\n- Never push to main.\n",
            "memory/rules.md": "---\nbotbin: instructions\n---\n- Never force push.\n",
            "MEMORY.md": "# Memory\n\n- Always sign commits.\n- Never commit secrets.\n",
        }
    )
    service.sync()
    result = service.context(ContextRequest(query="commits", budget_tokens=1000))
    assert [(i.path, i.start_line) for i in result.tiers[0].items] == [  # MEMORY.md is memory (issue 19)
        ("AGENTS.md", 2),
        ("CLAUDE.md", 0),
        ("memory/rules.md", 3),
        ("memory/team/AGENTS.md", 0),
    ]
    rules = result.text.split("\n\n")[0].split("\n")[1:]
    assert rules == [i.render() for i in result.tiers[0].items]


def test_context_with_a_long_note(make_service: ServiceFactory) -> None:
    paragraphs = "\n\n".join(f"Paragraph {n}: the otter database migration step {n} ran smoothly." for n in range(40))
    service = make_service({"memory/project.md": "# Project\n\n" + paragraphs + "\n"})
    service.sync()
    assert len(service.search(SearchRequest(query="otter database migration", show_all=True)).hits) > 1
    result = service.context(ContextRequest(query="otter database migration", budget_tokens=2000))
    assert result.tiers[-1].items


def test_context_with_a_long_soft_directive(make_service: ServiceFactory) -> None:
    rule = "You must always use tabs for indentation. " + " ".join(  # "should": advice, no rule in a note (issue 19)
        f"Tabs keep indentation width {n} consistent." for n in range(60)
    )
    service = make_service({"memory/style.md": "# Style\n\n" + rule + "\n"})
    service.sync()
    result = service.context(ContextRequest(query="tabs indentation", budget_tokens=4000))  # raises ContextLawError
    assert [(i.path, i.start_line) for i in result.tiers[1].items] == [("memory/style.md", 2)]
    assert len(gather(service.searcher, "tabs indentation").guidance) == 1


def test_remember_leaves_a_read_only_note_alone(tmp_path: Path) -> None:
    now = datetime(2026, 11, 29, 9, 30).astimezone()
    note = tmp_path / "memory" / "2026-11-29.md"
    note.parent.mkdir(parents=True)
    note.write_bytes(b"# 2026-11-29\n\n- locked\n")
    note.chmod(0o444)
    with pytest.raises(BotbinError, match="read-only"):
        remember(tmp_path, "new entry", [], now)
    assert note.read_bytes() == b"# 2026-11-29\n\n- locked\n"
