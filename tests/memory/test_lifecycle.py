"""The memo lifecycle over a real workspace (service, sidecar store, index) with the fast FakeEmbedder:
reinforcement by search, hover and context; decay in ranking; prune, restore and the archive note."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from botbin.memory.memos import MEMO_FILE
from botbin.service import MemoryService
from botbin.wire.requests import ContextRequest, RelatedRequest, SearchRequest

ServiceFactory = Callable[..., MemoryService]
NOTES = {
    "AGENTS.md": "# Rules\n\n- Never push to main on Fridays.\n",
    "memory/2026-01-05.md": "# 2026-01-05\n\n- The staging database lives on host kestrel-db-2.\n",
    "memory/2026-02-10.md": "# 2026-02-10\n\n- Lunch was a pasta salad with olives.\n",
    "memory/notes.md": "# Garden\n\nThe tomatoes need water every second day in July.\n",
}


def counts(service: MemoryService) -> dict[str, int]:
    service.lifecycle.flush()
    return {m.path: m.reinforcement_count for m in service.lifecycle.store.all()}


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*.md")
        if "aifbin" not in p.parts
    }


def test_memos_cover_every_chunk_outside_instruction_notes(make_service: ServiceFactory) -> None:
    service = make_service(NOTES)
    service.sync()
    service.search(SearchRequest(query="staging database host", show_all=True))
    service.lifecycle.flush()
    memos = service.lifecycle.store.all()
    assert {m.path for m in memos} == {"memory/2026-01-05.md", "memory/2026-02-10.md", "memory/notes.md"}
    assert all(m.decay_score == 1.0 or m.reinforcement_count for m in memos)
    assert (service.output_dir / MEMO_FILE).exists()


def test_search_reinforces_what_it_returns(make_service: ServiceFactory) -> None:
    service = make_service(NOTES)
    service.sync()
    hits = service.search(SearchRequest(query="staging database host", k=1, show_all=True)).hits
    assert hits[0].path == "memory/2026-01-05.md"
    service.search(SearchRequest(query="staging database host", k=1, show_all=True))
    assert counts(service)["memory/2026-01-05.md"] == 2
    assert counts(service)["memory/notes.md"] == 0


def test_related_reinforces_only_the_hits_shown(make_service: ServiceFactory) -> None:
    service = make_service(NOTES)
    service.sync()
    shown = service.related(RelatedRequest(text="where does the staging database live", k=1, show_all=True)).hits
    assert len(shown) == 1
    after = counts(service)
    assert after[shown[0].path] == 1 and sum(after.values()) == 1


def test_recall_and_context_reinforce(make_service: ServiceFactory) -> None:
    service = make_service(NOTES)
    service.sync()
    service.recall(SearchRequest(query="tomatoes water", k=1))
    assert counts(service)["memory/notes.md"] == 1
    service.context(ContextRequest(query="tomatoes water July", budget_tokens=2000))
    assert counts(service)["memory/notes.md"] >= 2


def test_decay_lowers_a_faded_memo_below_a_fresh_twin(make_service: ServiceFactory) -> None:
    twin = "- The release train leaves every second Tuesday.\n"
    service = make_service({"memory/a.md": twin, "memory/b.md": twin})
    service.sync()
    service.search(
        SearchRequest(query="release train Tuesday", show_all=True)
    )  # both memos exist and are retrieved once
    later = datetime.now().astimezone() + timedelta(days=200)
    service.lifecycle.reinforce(
        [
            h
            for h in service.search(SearchRequest(query="release train", show_all=True), reinforce=False).hits
            if h.path == "memory/b.md"
        ],
        now=later,
    )
    service.lifecycle.flush()  # retrievals are written in the background
    hits = service.lifecycle.rank(
        service.search(SearchRequest(query="release train Tuesday", show_all=True), reinforce=False).hits, now=later
    )
    assert [h.path for h in hits] == ["memory/b.md", "memory/a.md"]
    assert hits[1].score == pytest.approx(hits[0].score * 0.9, rel=0.02)  # weight 0.1, a faded to ~0


def test_prune_archives_faded_memos_and_restore_brings_them_back(make_service: ServiceFactory) -> None:
    service = make_service(NOTES)
    service.sync()
    before = digests(service.root)
    service.search(SearchRequest(query="tomatoes water July", k=1, show_all=True))  # retrieved: its half-life doubles
    later = datetime.now().astimezone() + timedelta(days=200)  # 6.7 half-lives: 0.0098 < 0.05 ...
    dry = service.prune(dry_run=True, now=later)
    assert {m.path for m in dry.archived} == {"memory/2026-01-05.md", "memory/2026-02-10.md"}  # ... but 3.3: 0.1
    assert not service.lifecycle.store.archived_ids() and not (service.output_dir / "archive.md").exists()
    report = service.prune(now=later)
    assert len(report.archived) == 2 and report.live == 1
    assert {
        h.path
        for h in service.search(SearchRequest(query="staging database host lunch pasta", k=10, show_all=True)).hits
    } <= {
        "memory/notes.md",
        "AGENTS.md",
    }
    note = (service.output_dir / "archive.md").read_text()
    assert "memory/2026-01-05.md" in note and "> - The staging database lives on host kestrel-db-2." in note
    assert digests(service.root) == before  # the notes are untouched
    restored = service.restore([report.archived[0].id[:8]], now=later)
    assert [m.id for m in restored.restored] == [report.archived[0].id] and not restored.unknown
    assert report.archived[0].path in {
        h.path for h in service.search(SearchRequest(query="staging database lunch pasta", k=10, show_all=True)).hits
    }
    assert len(service.prune(dry_run=True, now=later + timedelta(days=1)).archived) == 0  # just retrieved
    everything = service.restore(everything=True, now=later)
    assert len(everything.restored) == 1
    assert "Nothing is archived." in (service.output_dir / "archive.md").read_text()
    assert service.restore(["ffff"]).unknown == ("ffff",)


def test_rules_are_never_archived(make_service: ServiceFactory) -> None:
    service = make_service(
        {
            "memory/rules.md": "# Rules\n\n- You must always run the tests before a release.\n",
            "memory/lunch.md": "# Lunch\n\n- Lunch was a pasta salad with olives.\n",
        }
    )
    service.sync()
    kinds = {
        h.path: h.kind
        for h in service.search(SearchRequest(query="tests release lunch pasta", k=5, show_all=True)).hits
    }
    assert kinds["memory/rules.md"] != "lore"
    archived = service.prune(dry_run=True, now=datetime.now().astimezone() + timedelta(days=400)).archived
    assert [m.path for m in archived] == ["memory/lunch.md"]


def test_an_edited_chunk_keeps_its_reinforcement(make_service: ServiceFactory) -> None:
    service = make_service({"memory/a.md": "# A\n\n- The staging database lives on host kestrel-db-2.\n"})
    service.sync()
    for _ in range(3):
        service.search(SearchRequest(query="staging database", show_all=True))
    (service.root / "memory/a.md").write_text("# A\n\n- The staging database lives on host kestrel-db-3.\n")
    service.sync()
    service.search(
        SearchRequest(query="nothing matches this zebra", k=1, show_all=True), reinforce=False
    )  # the next search reconciles
    service.lifecycle.flush()
    memos = service.lifecycle.store.all()
    assert len(memos) == 1 and memos[0].reinforcement_count == 3


def test_a_deleted_note_drops_its_memos(make_service: ServiceFactory) -> None:
    service = make_service(NOTES)
    service.sync()
    service.search(SearchRequest(query="tomatoes", show_all=True))
    (service.root / "memory/notes.md").unlink()
    service.sync()
    service.search(SearchRequest(query="tomatoes", show_all=True))
    assert "memory/notes.md" not in {m.path for m in service.lifecycle.store.all()}


def test_an_unwritable_store_never_fails_a_search(
    make_service: ServiceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes read-only files")
    service = make_service(NOTES)
    service.sync()
    os.chmod(service.output_dir, 0o500)
    try:
        assert service.search(SearchRequest(query="staging database", k=1, show_all=True)).hits
    finally:
        os.chmod(service.output_dir, 0o700)
    assert "memo store" in caplog.text


def test_a_locked_sidecar_never_fails_a_search(make_service: ServiceFactory, caplog: pytest.LogCaptureFixture) -> None:
    service = make_service(NOTES)
    service.sync()
    (service.output_dir / MEMO_FILE).mkdir()  # not a file at all: the store cannot open
    hits = service.search(SearchRequest(query="staging database", k=1, show_all=True)).hits
    assert hits and hits[0].path == "memory/2026-01-05.md"
    assert "memo store" in caplog.text


def test_an_encrypted_store_keeps_no_chunk_digest_or_text_in_the_sidecar(tmp_path: Path) -> None:
    from botbin.memory.memos import memo_id
    from botbin.memory.sealing import is_sealed
    from conftest import FakeEmbedder, write_notes

    ws = write_notes(
        tmp_path / "ws",
        {**NOTES, "botbin.toml": "encryption = true\nkdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"},
    )
    service = MemoryService(ws, {}, embedder=FakeEmbedder(), env={}, passphrase=lambda: "correct horse")
    service.sync()
    hit = service.search(SearchRequest(query="staging database host", k=1, show_all=True)).hits[0]
    service.lifecycle.flush()
    memos = service.lifecycle.store.all()
    assert memo_id(hit.path, hit.text_md5) not in {m.id for m in memos}  # keyed: not the plain digest
    report = service.prune(now=datetime.now().astimezone() + timedelta(days=400))
    archived = [m for m in service.lifecycle.store.all() if m.archived_at is not None]
    assert report.archived and all(is_sealed(m.archived_text) for m in archived)  # kept for decrypt, sealed
    raw = (service.output_dir / MEMO_FILE).read_bytes() + (service.output_dir / "archive.md").read_bytes()
    assert b"kestrel-db-2" not in raw and hit.text_md5.encode() not in raw
