"""Tier laws of agent/context.py: property tests over generated candidates and budgets, and check_laws itself.

Tokens are counted as whitespace-separated words, which is additive over the whitespace that joins the parts
of a context (as WordPiece is), so every figure here can be recomputed from the rendered text.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botbin.agent.context import (
    HEADERS,
    TIER_NUMBERS,
    TIERS,
    Candidates,
    ContextBudgetError,
    ContextLawError,
    ContextResult,
    Item,
    Policy,
    TierResult,
    assemble,
    check_laws,
    with_scores,
)


def count(s: str) -> int:
    return len(s.split())


PATHS = ("MEMORY.md", "AGENTS.md", "memory/notes.md", "memory/2026-11-03.md")
DAILY = "memory/2026-11-03.md"
WORDS = st.sampled_from(
    ["alpha", "beta", "gamma", "tabs", "never", "always", "prose", "otter", "main", "push", "café", "東京"]
)
MARKERS = st.sampled_from(["", "- ", "* ", "+ ", "1. ", "2) "])


@st.composite
def lines_of_words(draw: st.DrawFn, n: int) -> str:
    """1-8 words over at most ``n`` lines (continuation lines indented), maybe behind a list marker."""
    words = draw(st.lists(WORDS, min_size=1, max_size=8))
    breaks = sorted(set(draw(st.lists(st.integers(1, len(words)), max_size=n - 1)))) if n > 1 else []
    cuts = [0, *(b for b in breaks if b < len(words)), len(words)]
    return draw(MARKERS) + "\n  ".join(" ".join(words[a:b]) for a, b in itertools.pairwise(cuts))


@st.composite
def items(draw: st.DrawFn, paths: Sequence[str] = PATHS) -> Item:
    path = draw(st.sampled_from(paths))
    start = draw(st.integers(0, 16))
    length = draw(st.integers(1, 3))
    return Item(path, start, start + length, draw(lines_of_words(length)), draw(SCORES))


SCORES = st.floats(0, 1)


def within_tier_distinct(pool: Sequence[Item]) -> list[Item]:
    """``pool`` without items that overlap an earlier one of the same list (the index never yields those for
    one tier; see test_overlapping_candidates_of_one_tier for what happens when it does)."""
    kept: list[Item] = []
    for item in pool:
        if not any(item.overlaps(k) for k in kept):
            kept.append(item)
    return kept


@st.composite
def tier_list(draw: st.DrawFn, higher: Sequence[Item], paths: Sequence[str] = PATHS, max_size: int = 6) -> list[Item]:
    """Fresh items, and copies of a few items of higher tiers (duplicates across tiers) at random places."""
    pool = draw(st.lists(items(paths), max_size=max_size))
    if higher:
        for _ in range(draw(st.integers(0, 2))):
            copy = higher[draw(st.integers(0, len(higher) - 1))]
            pool.insert(draw(st.integers(0, len(pool))), copy)
    return within_tier_distinct(pool)


@st.composite
def candidates(draw: st.DrawFn) -> Candidates:
    hard = within_tier_distinct(draw(st.lists(items(("MEMORY.md", "AGENTS.md")), max_size=4)))
    guidance = draw(tier_list(hard, ("memory/notes.md", DAILY)))
    soft = draw(tier_list([*hard, *guidance], ("MEMORY.md", "AGENTS.md")))
    # recent: consecutive blocks of the daily note, in source order (a blank line between some of them)
    recent: list[Item] = []
    line = draw(st.integers(0, 4))
    for _ in range(draw(st.integers(0, 6))):
        length = draw(st.integers(1, 2))
        recent.append(Item(DAILY, line, line + length, draw(lines_of_words(length))))
        line += length + draw(st.integers(0, 1))
    recalled = draw(tier_list([*hard, *guidance, *soft, *recent], max_size=8))
    recalled.sort(key=lambda i: i.score, reverse=True)  # best first
    return Candidates(hard, guidance, soft, recent, recalled)


policies = st.one_of(st.just(Policy()), st.builds(Policy, soft_share=st.floats(0, 1), recent_share=st.floats(0, 1)))


def tier_cost(name: str, tier_items: Sequence[Item]) -> int:
    """Tokens of one tier rendered on its own (header included), 0 when it is empty."""
    if not tier_items:
        return 0
    return count(HEADERS[name] + "\n" + "\n".join(i.render() for i in tier_items))


def is_subsequence(part: Sequence[Item], whole: Sequence[Item]) -> bool:
    """``part`` appears in ``whole`` in order, each item the very object of the candidates."""
    it = iter(whole)
    return all(any(p is w for w in it) for p in part)


def verify(cands: Candidates, budget: int, policy: Policy) -> ContextResult | None:
    """Assemble and check every law independently of check_laws; None when ContextBudgetError was raised."""
    hard_cost = tier_cost("hard", cands.hard)
    if hard_cost > budget:
        with pytest.raises(ContextBudgetError, match=f"need {hard_cost} tokens, over the budget of {budget}"):
            assemble(cands, budget, count, policy)
        return None
    result = assemble(cands, budget, count, policy)  # no ContextBudgetError when the hard tier fits
    assert result.budget_tokens == budget
    assert result.used_tokens <= budget
    assert result.used_tokens == count(result.text)
    assert tuple(t.name for t in result.tiers) == TIERS
    by_name = {t.name: t for t in result.tiers}
    assert by_name["hard"].items == tuple(cands.hard) and by_name["hard"].cut == ()
    assert sum(t.tokens for t in result.tiers) == result.used_tokens
    above: list[Item] = []
    used = 0
    for tier in result.tiers:
        pool = list(getattr(cands, tier.name))
        assert tier.tokens == tier_cost(tier.name, tier.items), tier.name
        assert is_subsequence(tier.items, pool), tier.name  # verbatim, in the candidates' order
        assert Counter(tier.items) + Counter(tier.cut) == Counter(pool), tier.name  # every candidate accounted for
        fresh = [i for i in pool if not any(i.overlaps(a) for a in above)]
        header = count(HEADERS[tier.name])
        if tier.name == "soft":
            cap = int(budget * policy.soft_share)
            assert tier.tokens <= cap
            assert list(tier.items) == fresh[: len(tier.items)]  # a prefix of the non-duplicates
            if len(tier.items) < len(fresh):  # ... and the longest one that fits
                need = count(fresh[len(tier.items)].render()) + (0 if tier.items else header)
                assert used + tier.tokens + need > budget or tier.tokens + need > cap
        elif tier.name == "recent":
            cap = int(budget * policy.recent_share)
            assert tier.tokens <= cap
            kept = len(tier.items)
            assert list(tier.items) == fresh[len(fresh) - kept :]  # the newest non-duplicates, in source order
            if kept < len(fresh):
                need = count(fresh[len(fresh) - kept - 1].render()) + (0 if kept else header)
                assert used + tier.tokens + need > budget or tier.tokens + need > cap
        elif tier.name in ("guidance", "recalled"):
            # best effort: a fresh candidate left out did not fit when it was considered
            for item in tier.cut:
                if item in fresh:
                    assert count(item.render()) + header > budget - used - tier.tokens
        for item in tier.items:
            original = next(c for c in pool if c is item)
            assert item.text == original.text
        above.extend(tier.items)
        used += tier.tokens
    everything = [i for t in result.tiers for i in t.items]
    for k, a in enumerate(everything):
        assert not any(a.overlaps(b) for b in everything[k + 1 :]), a
    return result


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(candidates(), st.integers(1, 160), policies)
def test_tier_laws_hold_for_any_candidates_and_budget(cands: Candidates, budget: int, policy: Policy) -> None:
    verify(cands, budget, policy)


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(candidates(), st.integers(60, 400), policies)
def test_tier_laws_hold_with_roomy_budgets(cands: Candidates, budget: int, policy: Policy) -> None:
    """Larger budgets, where the lower tiers fill (and the shares, not the budget, bind)."""
    verify(cands, budget, policy)


# -- examples --------------------------------------------------------------------------------------------------


def item(path: str, line: int, text: str, score: float = 0.0) -> Item:
    return Item(path, line, line + 1, text, score)


def test_hard_rules_alone_over_budget_raise_and_name_the_count() -> None:
    hard = [item("MEMORY.md", 3, "- Never push to main."), item("AGENTS.md", 1, "- Always sign commits.")]
    cost = tier_cost("hard", hard)  # header 4 + rules 6 and 5 (the marker and the source count)
    assert cost == 15
    with pytest.raises(ContextBudgetError) as info:
        assemble(Candidates(hard=hard), cost - 1, count)
    assert "the hard rules (2) need 15 tokens, over the budget of 14" in str(info.value)
    result = assemble(Candidates(hard=hard), cost, count)
    assert result.used_tokens == cost and result.tiers[0].items == tuple(hard)


@pytest.mark.parametrize("budget", [0, -5])
def test_non_positive_budget_is_refused(budget: int) -> None:
    with pytest.raises(ContextBudgetError, match="must be positive"):
        assemble(Candidates(), budget, count)


def test_soft_tier_stops_at_the_first_rule_that_does_not_fit() -> None:
    soft = [
        item("MEMORY.md", 1, "- Prefer short answers."),
        item("MEMORY.md", 2, " ".join(["word"] * 30)),
        item("MEMORY.md", 3, "- Prefer tabs."),
    ]
    result = assemble(Candidates(soft=soft), 100, count, Policy(soft_share=0.2))
    tier = result.tiers[2]
    assert tier.name == "soft" and tier.items == (soft[0],)  # the short third rule is not taken out of order
    assert tier.cut == (soft[1], soft[2]) and tier.tokens <= 20


def test_recent_tier_keeps_the_newest_entries_in_source_order() -> None:
    recent = [item(DAILY, n, f"- 0{n}:00 entry {n}") for n in range(2, 9)]
    result = assemble(Candidates(recent=recent), 100, count, Policy(recent_share=0.2))
    tier = result.tiers[3]
    assert tier.name == "recent" and tier.items == tuple(recent[-3:])  # header 3 + 3 * 5 = 18 <= 20
    assert tier.cut == tuple(recent[:-3])
    assert result.text.splitlines()[1:] == [i.render() for i in recent[-3:]]


def test_duplicates_of_a_higher_tier_are_cut_and_do_not_end_a_prefix() -> None:
    rule = item("MEMORY.md", 4, "- Never push to main.")
    entries = [item(DAILY, 2, "- 09:00 a"), item(DAILY, 3, "- 10:00 b")]
    guidance = [item(DAILY, 3, "- 10:00 b", 0.9)]  # the newest entry, already in tier 1.5
    recalled = [replace(rule, score=0.8), item("memory/notes.md", 0, "otter", 0.5)]
    result = assemble(Candidates(hard=[rule], guidance=guidance, recent=entries, recalled=recalled), 200, count)
    by_name = {t.name: t for t in result.tiers}
    assert by_name["recent"].items == (entries[0],) and by_name["recent"].cut == (entries[1],)
    assert by_name["recalled"].items == (recalled[1],) and by_name["recalled"].cut == (recalled[0],)


def test_recalled_tier_is_best_effort() -> None:
    recalled = [item("memory/a.md", 0, " ".join(["big"] * 50), 0.9), item("memory/b.md", 0, "small", 0.5)]
    result = assemble(Candidates(recalled=recalled), 20, count)
    assert result.tiers[-1].items == (recalled[1],) and result.tiers[-1].cut == (recalled[0],)


def test_empty_candidates_give_an_empty_context() -> None:
    result = assemble(Candidates(), 10, count)
    assert result.text == "" and result.used_tokens == 0 and all(not t.items for t in result.tiers)


def test_overlapping_candidates_of_one_tier() -> None:
    recalled = [
        Item("memory/project.md", 2, 35, "first chunk", 0.9),
        Item("memory/project.md", 32, 65, "second chunk", 0.8),
    ]
    result = assemble(Candidates(recalled=recalled), 100, count)
    assert result.tiers[-1].items == (recalled[0],)


# -- check_laws on broken results ------------------------------------------------------------------------------

RULES = [item("MEMORY.md", 1, "- Never push to main."), item("MEMORY.md", 2, "- Always sign commits.")]


def rebuilt(tiers: Sequence[TierResult], budget: int) -> ContextResult:
    """A ContextResult whose text and token figures agree with ``tiers`` (so only the broken law fails)."""
    fixed = tuple(replace(t, tokens=tier_cost(t.name, t.items)) for t in tiers)
    text = "\n\n".join(HEADERS[t.name] + "\n" + "\n".join(i.render() for i in t.items) for t in fixed if t.items)
    return ContextResult(text, fixed, count(text), budget)


def test_check_laws_accepts_an_assembled_result() -> None:
    cands = Candidates(hard=RULES, recalled=[item("memory/a.md", 0, "otter", 0.4)])
    check_laws(assemble(cands, 100, count), cands, count)


def test_check_laws_rejects_a_result_over_budget() -> None:
    cands = Candidates(hard=RULES)
    good = assemble(cands, 100, count)
    with pytest.raises(ContextLawError, match="over the budget of 5"):
        check_laws(replace(good, budget_tokens=5), cands, count)


def test_check_laws_rejects_wrong_token_accounting() -> None:
    cands = Candidates(hard=RULES)
    good = assemble(cands, 100, count)
    with pytest.raises(ContextLawError, match="token accounting differs"):
        check_laws(replace(good, used_tokens=good.used_tokens - 1), cands, count)


def test_check_laws_rejects_a_missing_hard_rule() -> None:
    cands = Candidates(hard=RULES)
    tiers = list(assemble(cands, 100, count).tiers)
    tiers[0] = replace(tiers[0], items=(RULES[1],))
    with pytest.raises(ContextLawError, match="hard rule is missing") as info:
        check_laws(rebuilt(tiers, 100), cands, count)
    assert "token accounting" not in str(info.value) and "over the budget" not in str(info.value)


def test_check_laws_rejects_a_duplicate() -> None:
    copy = replace(RULES[0], score=0.7)
    cands = Candidates(hard=RULES, recalled=[copy])
    tiers = list(assemble(cands, 100, count).tiers)
    assert tiers[-1].items == () and tiers[-1].cut == (copy,)
    tiers[-1] = replace(tiers[-1], items=(copy,), cut=())
    with pytest.raises(ContextLawError, match="appears twice"):
        check_laws(rebuilt(tiers, 100), cands, count)


def test_check_laws_rejects_an_item_not_from_its_candidates() -> None:
    cands = Candidates(hard=RULES)
    tiers = list(assemble(cands, 100, count).tiers)
    tiers[-1] = replace(tiers[-1], items=(item("memory/x.md", 0, "invented"),))
    with pytest.raises(ContextLawError, match="not verbatim from its candidates"):
        check_laws(rebuilt(tiers, 100), cands, count)


def test_check_laws_rejects_a_soft_tier_that_skips_a_rule() -> None:
    soft = [item("MEMORY.md", 5, "- Prefer tabs."), item("MEMORY.md", 6, "- Prefer short answers.")]
    cands = Candidates(soft=soft)
    tiers = list(assemble(cands, 100, count).tiers)
    tiers[2] = replace(tiers[2], items=(soft[1],), cut=(soft[0],))
    with pytest.raises(ContextLawError, match="tier soft is not a prefix"):
        check_laws(rebuilt(tiers, 100), cands, count)


def test_check_laws_rejects_a_recent_tier_without_the_newest_entry() -> None:
    recent = [item(DAILY, 2, "- 09:00 a"), item(DAILY, 3, "- 10:00 b")]
    cands = Candidates(recent=recent)
    tiers = list(assemble(cands, 100, count).tiers)
    tiers[3] = replace(tiers[3], items=(recent[0],), cut=(recent[1],))
    with pytest.raises(ContextLawError, match="tier recent is not a prefix"):
        check_laws(rebuilt(tiers, 100), cands, count)


# -- Item.render, to_dict, with_scores -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("- Never push to main.", "- Never push to main. (MEMORY.md:12)"),
        ("* Never push to main.", "- Never push to main. (MEMORY.md:12)"),
        ("+ Never push to main.", "- Never push to main. (MEMORY.md:12)"),
        ("3. Never push to main.", "- Never push to main. (MEMORY.md:12)"),
        ("3) Never push to main.", "- Never push to main. (MEMORY.md:12)"),
        ("  -\tNever push to main.  \n", "- Never push to main. (MEMORY.md:12)"),
        ("Never push to main.", "- Never push to main. (MEMORY.md:12)"),
        ("*Never* push to main.", "- *Never* push to main. (MEMORY.md:12)"),  # emphasis, not a marker
        ("-1 is not a marker", "- -1 is not a marker (MEMORY.md:12)"),
        ("- - nested", "- - nested (MEMORY.md:12)"),  # only the item's own marker goes
        ("- first line   \n  second line", "- first line\n    second line (MEMORY.md:12)"),
    ],
)
def test_item_render(text: str, rendered: str) -> None:
    assert Item("MEMORY.md", 11, 12, text).render() == rendered


def test_item_render_keeps_a_multiline_entry_one_list_item() -> None:
    out = Item("memory/2026-11-03.md", 0, 3, "- 09:00 first\n\n  more").render()
    assert out == "- 09:00 first\n  \n    more (memory/2026-11-03.md:1)"
    assert all(line.startswith("  ") or not line for line in out.split("\n")[1:])


def test_item_overlaps() -> None:
    a = Item("a.md", 2, 5, "x")
    assert a.overlaps(Item("a.md", 4, 6, "y")) and a.overlaps(Item("a.md", 0, 3, "y"))
    assert not a.overlaps(Item("a.md", 5, 6, "y")) and not a.overlaps(Item("a.md", 0, 2, "y"))
    assert not a.overlaps(Item("b.md", 2, 5, "x"))


def test_to_dict_shape() -> None:
    cands = Candidates(
        hard=RULES[:1],
        recent=[item(DAILY, 2, "- 09:00 a"), item(DAILY, 3, "- 10:00 " + "b " * 40)],
        recalled=[item("memory/a.md", 7, "otter", 0.5)],
    )
    result = assemble(cands, 60, count)
    out = result.to_dict()
    assert set(out) == {"text", "usedTokens", "budgetTokens", "tiers", "indexing", "partialTiers"}
    assert out["indexing"] is False and out["partialTiers"] == []
    assert out["text"] == result.text and out["usedTokens"] == result.used_tokens and out["budgetTokens"] == 60
    assert [(t["name"], t["tier"]) for t in out["tiers"]] == [(n, TIER_NUMBERS[n]) for n in TIERS]
    assert [t["tier"] for t in out["tiers"]] == ["1", "1.5", "2", "3", "4"]
    for tier, raw in zip(result.tiers, out["tiers"], strict=True):
        assert set(raw) == {"name", "tier", "tokens", "items", "cut"} and raw["tokens"] == tier.tokens
        assert raw["items"] == [
            {"path": i.path, "startLine": i.start_line, "endLine": i.end_line, "text": i.text} for i in tier.items
        ]
        assert raw["cut"] == [  # a cut item also says why it was left out
            {"path": i.path, "startLine": i.start_line, "endLine": i.end_line, "text": i.text, "reason": why}
            for i, why in zip(tier.cut, tier.cut_reasons, strict=True)
        ]
    assert out["tiers"][0]["items"] == [
        {"path": "MEMORY.md", "startLine": 1, "endLine": 2, "text": "- Never push to main."}
    ]
    # the newest entry does not fit the recent share, and the tier keeps only newest entries: both are cut
    assert out["tiers"][3]["items"] == [] and [c["startLine"] for c in out["tiers"][3]["cut"]] == [2, 3]


def test_with_scores() -> None:
    scored = with_scores(RULES, [0.25, 0.75])
    assert [i.score for i in scored] == [0.25, 0.75] and [i.text for i in scored] == [i.text for i in RULES]
    with pytest.raises(ValueError):
        with_scores(RULES, [0.5])
