"""Sync progress counts chunks embedded out of chunks to embed (issue 22): the total is known before the
first chunk is embedded, the count moves per embedding step, and chunks found in the cache are not counted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import botbin.sync.progress as progress_mod
from botbin.service import MemoryService
from botbin.wire.requests import SyncRequest
from conftest import FakeEmbedder

#: Three notes of several paragraphs each: well over one embedding step once EMBED_STEP is 4.
NOTES = {
    f"memory/n{i}.md": f"# Note {i}\n\n"
    + "\n\n".join(f"Paragraph {j} of note {i} talks about topic {i * 10 + j}." for j in range(6))
    for i in range(3)
}


def record(service: MemoryService, full: bool = False) -> tuple[list[tuple[int, int]], int]:
    """The (chunks_embedded, chunks_to_embed) reports of one sync, and the chunks it embedded."""
    calls: list[tuple[int, int]] = []
    report = service.sync(SyncRequest(full=full), progress=lambda done, total: calls.append((done, total)))
    return calls, report.chunks_embedded


def test_progress_counts_chunks_and_moves_per_step(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress_mod, "MIN_STEP", 4)
    monkeypatch.setattr(progress_mod, "MAX_STEP", 4)
    calls, embedded = record(make_service(NOTES, target_tokens=24, overlap_tokens=0, min_tokens=4))
    assert embedded == fake_embedder.embedded > 8
    assert calls[-1] == (embedded, embedded)
    first_embedded = next(i for i, (done, _) in enumerate(calls) if done > 0)
    assert {total for _, total in calls[first_embedded - 1 :]} == {embedded}  # counted before embedding began
    moves = [done for done, _ in calls[first_embedded:]]
    assert moves == sorted(moves) and len(set(moves)) >= embedded // 4  # one report per step of 4 chunks
    assert all(len(batch) <= 4 for batch in fake_embedder.calls)


def test_only_chunks_to_embed_are_counted(make_service: Callable[..., MemoryService], tmp_path: Path) -> None:
    service = make_service(NOTES, target_tokens=24, overlap_tokens=0, min_tokens=4)
    service.sync()
    assert record(service) == ([], 0)  # nothing changed: no report at all
    note = tmp_path / "ws" / "memory/n1.md"
    note.write_text(note.read_text() + "\n\nOne new paragraph about herons.\n")
    calls, embedded = record(service)
    assert embedded >= 1 and calls[-1] == (embedded, embedded)  # the unchanged paragraphs came from the cache
    calls, embedded = record(service, full=True)  # re-chunked, every vector reused
    assert embedded == 0 and all(total == 0 for _, total in calls)


def test_steps_are_sized_to_take_a_few_seconds() -> None:
    step = progress_mod.ChunkProgress(None)
    assert step.step == progress_mod.MIN_STEP  # the first step is small: the pace is not known yet
    step.paced(32, 0.1)  # 320 chunks/s: ~640 in STEP_S, capped
    assert step.step == progress_mod.MAX_STEP
    step.paced(512, 20.0)  # a loaded machine: 25.6 chunks/s, ~51 in STEP_S, in whole MIN_STEPs
    assert step.step == 48
    step.paced(48, 60.0)  # a machine under heavy load: the smallest step
    assert step.step == progress_mod.MIN_STEP
    step.paced(64, 1.0)  # 64 chunks/s: 128 in STEP_S
    assert step.step == 128


def test_steps_embed_the_shortest_texts_first_and_return_rows_in_order() -> None:
    """Sorted by token count so that a step's batches pad to similar lengths (a quarter of a cold sync's time on
    the help vault); each row still belongs to its text."""
    import numpy as np

    seen: list[list[str]] = []

    class Recorder:
        def embed(self, texts: list[str]) -> np.ndarray:
            seen.append(list(texts))
            return np.array([[float(len(t)), float(t.count("x"))] for t in texts], dtype=np.float32)

    texts = ["x" * n for n in (9, 2, 7, 1, 5, 3, 8)]
    recorder: Any = Recorder()
    steps = progress_mod.ChunkProgress(None)
    steps.step = 3
    rows = progress_mod.embed_in_steps(recorder, texts, steps, sizes=[len(t) for t in texts])
    assert [len(t) for part in seen for t in part] == [1, 2, 3, 5, 7, 8, 9]
    assert rows[:, 0].tolist() == [9, 2, 7, 1, 5, 3, 8]
    unsorted = progress_mod.embed_in_steps(recorder, texts, progress_mod.ChunkProgress(None))
    assert unsorted[:, 0].tolist() == [9, 2, 7, 1, 5, 3, 8]
