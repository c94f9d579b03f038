"""The host ops of agent/hosts.py with the real model: what a session starts with (rules read from the notes on
disk, the tier law, the budget), recall for a prompt (the relevance floor, short ids, nothing given twice to a
session), assemble within a character limit, compaction (rules verbatim, the budget, its confidence), expand."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from botbin.agent.context import ContextBudgetError
from botbin.agent.expand import ExpandError
from botbin.embedding import SentenceTransformerEmbedder
from botbin.service import MemoryService
from botbin.wire.requests import ContextRequest
from conftest import write_notes

TODAY = datetime.now().astimezone().strftime("%Y-%m-%d")
AGENTS = "# Agents\n\n- Never push to main without a review.\n- Always answer in English.\n"
DAILY = (
    f"# {TODAY}\n\n- 09:00 We picked Postgres 16 for the billing service.\n"
    "- 09:30 The staging database listens on port 5433.\n"
)
PROJECT = (
    "# Project notes\n\n## Deploys\n\nDeploys go out on Tuesdays through the blue-green pipeline.\n\n"
    "A rollback takes four minutes.\n\n## Hiring\n\nWe are hiring two backend engineers in Berlin.\n"
)


@pytest.fixture
def memory(tmp_path: Path, real_embedder: SentenceTransformerEmbedder) -> Iterator[MemoryService]:
    root = write_notes(
        tmp_path / "ws", {"AGENTS.md": AGENTS, f"memory/{TODAY}.md": DAILY, "memory/project.md": PROJECT}
    )
    service = MemoryService(root, {}, embedder=real_embedder, env={})
    service.sync()
    yield service
    service.hosts.close()


def test_a_session_starts_with_every_rule_and_the_recent_tail_within_the_budget(memory: MemoryService) -> None:
    block = memory.hosts.session_context(400, session="s1")
    assert "Never push to main without a review." in block.text and "Always answer in English." in block.text
    assert "port 5433" in block.text  # the latest daily note's tail
    assert block.rules == 2 and 0 < block.used_tokens <= 400
    assert block.used_tokens == memory.ws.models.counter.count(block.text)
    assert {i.tier for i in block.items} == {"hard", "recent"}


def test_a_rule_edited_since_the_last_sync_is_given_as_it_reads_now(memory: MemoryService) -> None:
    (memory.root / "AGENTS.md").write_text(AGENTS + "- Never deploy on Fridays.\n", encoding="utf-8")
    block = memory.hosts.session_context(400)
    assert "Never deploy on Fridays." in block.text and block.rules == 3


def test_rules_over_the_budget_are_refused_not_cut(memory: MemoryService) -> None:
    with pytest.raises(ContextBudgetError, match="over the budget of 5"):
        memory.hosts.session_context(5)


def test_recall_gives_the_relevant_memory_with_its_id_and_nothing_for_an_unrelated_prompt(
    memory: MemoryService,
) -> None:
    hosts = memory.hosts
    block = hosts.recall("When do deploys go out?", 300)
    assert "Tuesdays" in block.text and block.items
    first = block.items[0]
    assert f"[{first.id}]" in block.text and block.used_tokens <= 300
    assert all(i.item.path != "AGENTS.md" for i in block.items)  # rules come with the session, not per prompt
    unrelated = hosts.recall("Write a haiku about autumn leaves falling in a quiet forest", 300)
    assert unrelated.text == "" and unrelated.items == ()


def test_recall_does_not_give_a_session_what_it_has_until_its_next_context(memory: MemoryService) -> None:
    hosts = memory.hosts
    hosts.session_context(400, session="s1")
    again = hosts.recall("Which database did we pick for billing?", 300, session="s1")
    assert "Postgres 16" not in again.text and again.repeated >= 1  # the recent tail gave it already
    first = hosts.recall("When do deploys go out?", 300, session="s1")
    assert "Tuesdays" in first.text
    assert "Tuesdays" not in hosts.recall("When do deploys go out?", 300, session="s1").text
    assert "Tuesdays" in hosts.recall("When do deploys go out?", 300, session="s2").text
    hosts.session_context(400, session="s1")  # a compaction or a resume: a new context window
    assert "Tuesdays" in hosts.recall("When do deploys go out?", 300, session="s1").text


def test_expand_gives_the_whole_section_of_an_item(memory: MemoryService) -> None:
    hosts = memory.hosts
    item = hosts.recall("How long does a rollback take?", 300).items[0]
    found = hosts.expand(item.id[:6])
    assert found.id == item.id and found.path == "memory/project.md"
    assert found.text.startswith("## Deploys") and "Tuesdays" in found.text and "four minutes" in found.text
    assert "Hiring" not in found.text and found.heading_path == ("Project notes", "Deploys")
    with pytest.raises(ExpandError, match="no memory item"):
        hosts.expand("ffffffffff")


def test_assemble_stays_within_the_budget_and_the_character_limit(memory: MemoryService) -> None:
    hosts = memory.hosts
    full = hosts.assemble(ContextRequest(query="When do deploys go out?", budget_tokens=2000))
    assert "Tuesdays" in full.text and full.rules == 2
    limit = len(full.text) - 10
    cut = hosts.assemble(ContextRequest(query="When do deploys go out?", budget_tokens=2000, max_chars=limit))
    assert len(cut.text) <= limit and cut.rules == 2  # whole items left out, every rule kept
    with pytest.raises(ContextBudgetError):
        hosts.assemble(ContextRequest(query="When do deploys go out?", budget_tokens=2000, max_chars=20))


def test_compaction_keeps_rules_verbatim_within_the_budget_and_measures_its_confidence(memory: MemoryService) -> None:
    messages = [
        ("user", "Let's plan the billing migration. We move invoices from MySQL to Postgres 16 next sprint."),
        ("assistant", "Sure! The invoice tables are the largest; we should copy them in batches overnight."),
        ("user", "From now on, never run a migration without a dry run first."),
        ("assistant", "Understood."),
        ("user", "The batch size should be ten thousand rows, and the copy must finish before 6 am."),
    ]
    done = memory.hosts.compact(messages, 60)
    assert "never run a migration without a dry run first" in done.summary and done.rules_kept == 1
    assert done.tokens_after <= 60 and done.tokens_after == memory.ws.models.counter.count(done.summary)
    assert done.tokens_before > done.tokens_after and done.messages == 5
    assert 0.5 < done.confidence <= 1.0 and 0.0 < done.coverage <= 1.0
    tiny = memory.hosts.compact(messages, 12)
    assert tiny.tokens_after <= 12 and tiny.coverage < done.coverage
