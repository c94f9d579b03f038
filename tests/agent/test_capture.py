"""Host turns captured once (agent/capture.py, agent/ledger.py, agent/journal.py) with the real model: a turn sent
again, by this server or the next, is skipped by its id; turns a killed server had only buffered are in its journal
and distilled by the next one; expand reads a soul-file block's turns back from their transcript."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from botbin.agent.journal import JOURNAL_FILE
from botbin.agent.ledger import LEDGER_FILE
from botbin.embedding import SentenceTransformerEmbedder
from botbin.service import MemoryService
from conftest import write_notes


@dataclass(frozen=True)
class Said:
    """A host turn (agent/capture.py HostTurn)."""

    role: str
    content: str
    id: str | None = None
    timestamp: str | None = None
    session: str | None = "s1"
    name: str | None = None


FACTS = [
    Said("user", "Our staging database runs on port 5433 on host db-staging.internal.", "u1"),
    Said("assistant", "Noted: staging Postgres on db-staging.internal, port 5433.", "a1"),
    Said("user", "The release train leaves every second Thursday at noon.", "u2"),
]


def service(root: Path, embedder: SentenceTransformerEmbedder) -> MemoryService:
    return MemoryService(root, {}, embedder=embedder, env={})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "ws", {"AGENTS.md": "# Agents\n\n- Always answer in English.\n"})


def soul(root: Path) -> str:
    return (root / "memory" / "soul" / "user.md").read_text(encoding="utf-8")


def test_a_turn_sent_again_is_captured_once_by_this_server_and_the_next(
    root: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    first = service(root, real_embedder).hosts.capture
    report = first.ingest(FACTS)
    assert (report.accepted, report.duplicates) == (3, 0)
    again = first.ingest([*FACTS, Said("user", "  ", "u9")])
    assert (again.accepted, again.duplicates, again.skipped) == (0, 3, 1)  # buffered ones count too
    assert first.ingest([], flush=True).pending == ()
    text = soul(root)
    assert text.count("port 5433 on host db-staging.internal") == 1
    later = service(root, real_embedder).hosts.capture  # a server started later (a resumed or forked session)
    resent = later.ingest([*FACTS, Said("user", "We deploy with Argo CD from the infra repo.", "u3")], flush=True)
    assert (resent.accepted, resent.duplicates) == (1, 3)
    assert soul(root).count("port 5433 on host db-staging.internal") == 1 and "Argo CD" in soul(root)


def test_turns_only_buffered_by_a_killed_server_are_distilled_by_the_next(
    root: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    killed = service(root, real_embedder).hosts.capture
    report = killed.ingest(FACTS[:2])
    assert set(report.pending) == {"u1", "a1"} and not (root / "memory" / "soul" / "user.md").exists()
    journaled = (killed.journal.path).read_text(encoding="utf-8")
    assert "port 5433" in journaled  # on disk before the answer: a kill -9 now loses nothing
    # the server dies here without a flush; the next one observes the journal again
    after = service(root, real_embedder)
    after.hosts.capture.recover()
    assert after.hosts.capture.ingest([], flush=True).pending == ()
    assert soul(root).count("port 5433 on host db-staging.internal") == 1
    assert (root / "memory" / "aifbin" / JOURNAL_FILE).read_bytes() == b""  # nothing buffered: emptied
    ledger = [json.loads(line) for line in (root / "memory" / "aifbin" / LEDGER_FILE).read_text().splitlines()]
    assert {e["id"] for e in ledger} == {"u1", "a1"}


def test_captured_turns_are_searchable_at_once(root: Path, real_embedder: SentenceTransformerEmbedder) -> None:
    memory = service(root, real_embedder)
    memory.hosts.capture.ingest(FACTS, flush=True)
    hits = memory.hosts.recall("What port does the staging database use?", 300).items
    assert hits and hits[0].item.path == "memory/soul/user.md" and "5433" in hits[0].item.text


def test_expand_reads_a_blocks_turns_back_from_their_transcript(
    root: Path, tmp_path: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    transcript = tmp_path / "session.jsonl"
    lines = [
        {
            "type": "user",
            "uuid": t.id,
            "timestamp": "2026-12-03T10:00:00Z",
            "message": {"role": t.role, "content": t.content},
        }
        for t in FACTS
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    memory = service(root, real_embedder)
    memory.hosts.capture.ingest(FACTS, source=str(transcript), flush=True)
    item = memory.hosts.recall("What port does the staging database use?", 300).items[0]
    found = memory.hosts.expand(item.id)
    assert found.path == "memory/soul/user.md" and found.text.startswith("## [Turns")
    assert [t.id for t in found.turns] and all(t.id in {"u1", "a1", "u2"} for t in found.turns)
    assert any("port 5433" in t.content for t in found.turns)
    transcript.unlink()  # the host deleted its transcript: the section is still there, without its turns
    assert memory.hosts.expand(item.id).turns == ()
