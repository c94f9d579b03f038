"""After a save, the memo lifecycle reconciles the changed notes only (Lifecycle._ensure_changed): its memos,
hidden chunks and live refs are those a reconcile of every chunk gives. Random edits, new notes, deletions and
an archived memo over a real workspace with the FakeEmbedder; each step syncs the changed notes as a save does,
searches (which reconciles), then checks that a full reconcile changes nothing. ~5 s."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import pytest

from botbin.index.store import MemoryIndex
from botbin.memory.lifecycle import Lifecycle
from botbin.memory.memos import memo_id
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest, SyncRequest

ServiceFactory = Callable[..., MemoryService]
WORDS = "garden tomato kestrel staging database olive pasta river cloud lamp harbor violet".split()  # noqa: SIM905


def paragraph(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=8)).capitalize() + "."


def note_text(rng: random.Random) -> str:
    return "# Note\n\n" + "\n\n".join(paragraph(rng) for _ in range(rng.randint(1, 4))) + "\n"


def state(service: MemoryService) -> tuple[object, ...]:
    life = service.lifecycle
    life.flush()
    memos = sorted(
        (m.id, m.path, m.start_line, m.end_line, m.reinforcement_count, m.archived_at) for m in life.store.all()
    )
    index, _ = service.index()
    refs = sorted((i, r.path, r.start_line, r.row) for i, r in life.ensure().items())
    by_path = {p: sorted(ids) for p, ids in life._by_path.items() if ids}
    return memos, sorted(index.hidden), refs, by_path


def test_a_save_reconciles_the_changed_notes_as_a_full_pass_would(
    make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    notes = {f"memory/n{i}.md": note_text(rng) for i in range(12)}
    service = make_service(notes)
    service.sync()
    service.search(SearchRequest(query="garden tomato", show_all=True))
    patched = 0
    real = Lifecycle._ensure_changed

    def counted(self: Lifecycle, index: MemoryIndex, now: datetime) -> bool:
        nonlocal patched
        done = real(self, index, now)
        patched += done
        return done

    monkeypatch.setattr(Lifecycle, "_ensure_changed", counted)
    for step in range(14):
        rel = rng.choice(sorted(notes))
        path = service.root / rel
        roll = rng.random()
        if roll < 0.15 and len(notes) > 4:
            path.unlink()
            del notes[rel]
        elif roll < 0.3:
            rel = f"memory/new{step}.md"
            notes[rel] = note_text(rng)
            (service.root / rel).write_text(notes[rel])
        else:  # edit: keep some paragraphs, change or add others
            kept = [p for p in notes[rel].split("\n\n")[1:] if rng.random() < 0.6]
            notes[rel] = "# Note\n\n" + "\n\n".join([*kept, paragraph(rng)]) + "\n"
            path.write_text(notes[rel])
        if step == 6:  # archive one live memo: the next reconcile is a full one, then patches resume
            memo = next(m for m in service.lifecycle.store.all() if m.archived_at is None)
            service.lifecycle.store.archive({memo.id: None}, datetime.now(UTC))
            service.lifecycle._seen = None
        service.sync(SyncRequest(only=frozenset([rel])))
        service.search(SearchRequest(query=rng.choice(WORDS), show_all=True))
        after_patch = state(service)
        service.lifecycle._seen = None  # force a reconcile of every chunk
        service.lifecycle._mark = None
        service.search(SearchRequest(query=rng.choice(WORDS), show_all=True), reinforce=False)
        assert state(service) == after_patch, step
    assert patched >= 10  # the saves took the per-note path


def test_a_start_reconciles_what_changed_while_no_process_watched(make_service: ServiceFactory, tmp_path: Path) -> None:
    """A new process's first view (Lifecycle._full_view: memo ids and places, ChunkRefs only for the notes that
    differ) leaves the memo store, the hidden chunks and the live ids a reconcile of every chunk leaves, after
    edits, a move, a deletion and an addition synced by a process that kept no memos."""
    import shutil

    rng = random.Random(11)
    notes = {f"memory/n{i}.md": note_text(rng) for i in range(10)}
    first = make_service(notes)
    first.sync()
    first.search(SearchRequest(query="garden tomato", show_all=True))  # memos seeded; this reinforces the hits
    first.lifecycle.flush()
    memo = next(m for m in first.lifecycle.store.all() if m.archived_at is None)
    first.lifecycle.store.archive({memo.id: None}, datetime.now(UTC))
    root = first.root
    (root / "memory/n1.md").write_text("# Note\n\nA new first paragraph.\n\n" + notes["memory/n1.md"][8:])  # moved
    (root / "memory/n2.md").write_text(notes["memory/n2.md"].replace(".", " again.", 1))  # an edited chunk
    (root / "memory/n3.md").unlink()
    (root / "memory/extra.md").write_text(note_text(rng))
    make_service(root=root).sync()  # another process: it never looked at the memos
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)
    started = make_service(root=root)
    started.search(SearchRequest(query="garden", show_all=True), reinforce=False)  # the new process's first view
    reference = make_service(root=twin)
    index, _ = reference.index()
    life = reference.lifecycle  # the same workspace reconciled chunk by chunk, as every start used to
    refs = {memo_id(r.path, r.text_md5): r for r in index.chunk_refs() if life._is_memo(r)}
    life._reconcile(refs, datetime.now(UTC))
    got, want = state(started), state(reference)
    assert got == want
    memos = cast("list[tuple[str, str]]", got[0])
    assert memo.id in {m[0] for m in memos} and got[1]  # the archived memo stays, hidden
    paths = {m[1] for m in memos}
    assert {"memory/extra.md", "memory/n1.md"} <= paths and "memory/n3.md" not in paths
