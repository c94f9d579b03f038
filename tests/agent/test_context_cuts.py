"""Why agent/context.py left each candidate out (TierResult.cut_reasons), the "what was left out and why" of
Recall Studio's context preview and of get_context's payload: a duplicate, the whole budget, a tier's share, or
after an entry a prefix tier already dropped."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from botbin.agent.context import (
    CUT_AFTER,
    CUT_BUDGET,
    CUT_DUPLICATE,
    CUT_SHARE,
    Candidates,
    Item,
    Policy,
    assemble,
)


def count(s: str) -> int:
    return len(s.split())


def words(n: int, word: str = "otter") -> str:
    return " ".join([word] * n)


def test_a_passage_already_chosen_is_cut_as_a_duplicate() -> None:
    rule = Item("AGENTS.md", 3, 4, "- Never push to main.")
    again = Item("AGENTS.md", 3, 4, "- Never push to main.", 0.9)
    result = assemble(Candidates(hard=[rule], recalled=[again]), 100, count)
    recalled = result.tiers[-1]
    assert recalled.cut == (again,)
    assert recalled.cut_reasons == (CUT_DUPLICATE,)


def test_a_soft_rule_over_its_share_is_cut_for_the_share_and_the_rest_after_it() -> None:
    """Budget 100, soft share 20: the first rule fits (12 tokens with the tier's header); the second (14 more)
    does not fit the share, though the budget has room; the third (7 more, which would fit) is out because soft
    rules are a prefix."""
    soft = [Item("AGENTS.md", i, i + 1, words(n)) for i, n in enumerate((8, 12, 5))]
    result = assemble(Candidates(soft=soft), 100, count, Policy(soft_share=0.2))
    tier = next(t for t in result.tiers if t.name == "soft")
    assert tier.items == (soft[0],)
    assert tier.cut == (soft[1], soft[2])
    assert tier.cut_reasons == (CUT_SHARE, CUT_AFTER)


def test_a_recalled_memory_over_the_whole_budget_is_cut_for_the_budget() -> None:
    big = Item("memory/a.md", 0, 5, words(60), 0.9)
    small = Item("memory/b.md", 0, 1, words(3), 0.5)
    result = assemble(Candidates(recalled=[big, small]), 40, count)
    tier = result.tiers[-1]
    assert tier.items == (small,)
    assert tier.cut == (big,)
    assert tier.cut_reasons == (CUT_BUDGET,)


def test_recent_entries_keep_the_newest_and_name_why_the_older_went() -> None:
    """Recent fills newest first: the newest fits, the one before does not fit the share, the oldest goes after
    it; reasons stay in source order, as the cut entries do."""
    recent = [Item("memory/2026-11-03.md", i, i + 1, words(n)) for i, n in enumerate((2, 40, 5))]
    result = assemble(Candidates(recent=recent), 100, count, Policy(recent_share=0.3))
    tier = next(t for t in result.tiers if t.name == "recent")
    assert tier.items == (recent[2],)
    assert tier.cut == (recent[0], recent[1])
    assert tier.cut_reasons == (CUT_AFTER, CUT_SHARE)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 30), min_size=1, max_size=8),
    budget=st.integers(5, 120),
)
def test_every_cut_has_a_reason(sizes: list[int], budget: int) -> None:
    items = [Item(f"memory/{i}.md", 0, 1, words(n), 1.0 - i / 10) for i, n in enumerate(sizes)]
    result = assemble(Candidates(soft=items[:3], recent=items[3:5], recalled=items), budget, count)
    for tier in result.tiers:
        assert len(tier.cut_reasons) == len(tier.cut)
        assert set(tier.cut_reasons) <= {CUT_DUPLICATE, CUT_BUDGET, CUT_SHARE, CUT_AFTER}
