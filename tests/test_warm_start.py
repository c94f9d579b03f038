"""Issue 21: a server's first answer after start waits neither for the catch-up scan nor for the model. The
index (and with it the first search's assembly) loads on its own thread while a sync holds the workspace."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "workspace"


def test_the_index_loads_and_answers_while_a_sync_holds_the_workspace(tmp_path: Path, fake_embedder: Any) -> None:
    root = tmp_path / "ws"
    shutil.copytree(EXAMPLES, root)
    MemoryService(root, embedder=fake_embedder, env={}).sync()
    embedded = len(fake_embedder.calls)
    fresh = MemoryService(root, embedder=fake_embedder, env={})  # a server process just started
    with fresh.ws.syncer.lock, fresh.ws.index.syncing():  # its catch-up scan runs (and would run for minutes)
        threads = fresh.warm_in_background(model=False)
        assert [t.name for t in threads] == ["botbin-warm-index"]
        for thread in threads:
            thread.join(timeout=60)
            assert not thread.is_alive(), "the index load waited for the sync"
        assert len(fake_embedder.calls) == embedded  # its warm-up search needed no model
        answer: list[Any] = []
        asker = threading.Thread(
            target=lambda: answer.append(fresh.search(SearchRequest(query="decision", k=3, show_all=True)))
        )
        asker.start()
        asker.join(timeout=60)
        assert not asker.is_alive(), "the first search waited for the sync"
    assert answer and answer[0].hits


def test_cli_search_marks_its_index_one_shot(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    from botbin.cli import main
    from botbin.workspace.handle import IndexHandle

    seen: list[bool] = []
    load = IndexHandle._load

    def spy(self: IndexHandle) -> Any:
        seen.append(self.one_shot)
        return load(self)

    monkeypatch.setattr(IndexHandle, "_load", spy)
    root = tmp_path / "ws"
    shutil.copytree(EXAMPLES, root)
    main(["--workspace", str(root), "search", "decision", "--alpha", "0"])  # words only: no model needed
    assert seen and all(seen)


def test_wait_warm_returns_once_the_first_search_builds_are_done(
    tmp_path: Path, fake_embedder: Any, caplog: Any
) -> None:
    """The language server's catch-up scan waits for this (lsp/folders.py): it would compete with the warm-up."""
    import logging

    root = tmp_path / "ws"
    shutil.copytree(EXAMPLES, root)
    MemoryService(root, embedder=fake_embedder, env={}).sync()
    fresh = MemoryService(root, embedder=fake_embedder, env={})
    fresh.wait_warm(0.0)  # none started: returns at once
    with caplog.at_level(logging.INFO, logger="botbin.search.pipeline"):
        threads = fresh.warm_in_background(model=False)
        fresh.wait_warm(60.0)
        assert any("index warmed" in r.getMessage() for r in caplog.records)
    for thread in threads:
        thread.join(timeout=60)
