"""``remember`` (agent/remember.py): a retried call writes nothing twice."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from botbin.agent.remember import RETRY_WINDOW_MIN, remember
from botbin.errors import BotbinError
from botbin.wire.requests import SearchRequest


def _note(root: Path) -> str:
    return (root / "memory" / "2026-12-01.md").read_text(encoding="utf-8")


def test_a_retry_within_the_window_returns_the_entry_already_written(tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, 10, 5).astimezone()
    first = remember(tmp_path, "Deploys go out from the blue cluster.", ["ops"], now)
    again = remember(tmp_path, "Deploys go out from the blue cluster.", ["ops"], now + timedelta(minutes=3))
    assert again == first
    assert _note(tmp_path).count("blue cluster") == 1


def test_the_same_text_later_or_with_other_tags_is_a_new_entry(tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, 10, 5).astimezone()
    remember(tmp_path, "Standup moved to 9:30.", [], now)
    later = remember(tmp_path, "Standup moved to 9:30.", [], now + timedelta(minutes=RETRY_WINDOW_MIN + 1))
    tagged = remember(tmp_path, "Standup moved to 9:30.", ["team"], now + timedelta(minutes=RETRY_WINDOW_MIN + 1))
    assert later.start_line == 3 and tagged.start_line == 4
    assert _note(tmp_path).count("Standup moved") == 3


def test_a_retried_multi_line_entry_is_matched_whole(tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, 22, 0).astimezone()
    first = remember(tmp_path, "Release checklist:\nrun the migrations\ntag the build", [], now)
    other = remember(tmp_path, "Release checklist:\nrun the migrations", [], now)
    again = remember(tmp_path, "Release checklist:\nrun the migrations\ntag the build", [], now)
    assert again == first and other.start_line == first.end_line


def test_remember_waits_for_the_servers_own_sync_and_is_then_searchable(tmp_path: Path) -> None:
    """Issue 20 item 4: a sync of this process is running (an MCP server's start-up sync); remember queues behind
    it instead of failing on the workspace lock, returns once its text is indexed, and a retry adds nothing."""
    import threading
    import time

    from botbin.service import MemoryService
    from conftest import FakeEmbedder, write_notes

    class SlowEmbedder(FakeEmbedder):
        def embed(self, texts: list[str]) -> Any:
            time.sleep(0.5)  # the start-up sync is still embedding when remember is called
            return super().embed(texts)

    root = write_notes(
        tmp_path / "ws", {f"memory/n{i}.md": f"# N{i}\n\nNote number {i} about herons.\n" for i in range(6)}
    )
    service = MemoryService(root, {"lock_timeout_s": 0.2}, embedder=SlowEmbedder(), env={})
    startup = threading.Thread(target=service.sync)
    startup.start()
    time.sleep(0.2)
    written, report = service.remember("The staging database moved to kestrel-db-3.", ["ops"])
    startup.join()
    assert not report.failed and written.path in report.added + report.modified
    assert (
        service.search(SearchRequest(query="staging database kestrel", k=1, show_all=True)).hits[0].path == written.path
    )
    again, _ = service.remember("The staging database moved to kestrel-db-3.", ["ops"])
    assert again == written
    assert (root / written.path).read_text(encoding="utf-8").count("kestrel-db-3") == 1


def test_a_text_too_large_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """Issue 36 failure 6: a 5.2 MB remember was accepted and pushed today's note over max_note_bytes."""
    import pytest

    from botbin.errors import BotbinError

    now = datetime(2026, 12, 1, 10, 5).astimezone()
    with pytest.raises(BotbinError, match=r"5,200,000 bytes; remember takes at most 65,536"):
        remember(tmp_path, "x" * 5_200_000, [], now)
    assert not (tmp_path / "memory" / "2026-12-01.md").exists()
    from botbin.agent.remember import MAX_TEXT_BYTES

    remember(tmp_path, "é" * (MAX_TEXT_BYTES // 2), [], now)  # the bound is in UTF-8 bytes: exactly at it is fine
    with pytest.raises(BotbinError, match="at most 2,500"):
        remember(tmp_path, "y" * 2_501, [], now, max_note_bytes=10_000)  # never more than a quarter of the note


def test_a_full_daily_note_goes_on_in_a_searchable_continuation(make_service: Any) -> None:
    """Past max_note_bytes a note is skipped by the sync: the entry opens memory/YYYY-MM-DD-2.md instead, which
    is indexed, searched and read as the day's latest note; nothing of the full note is touched."""
    from botbin.agent.gather import gather

    today = datetime.now().astimezone().strftime("%Y-%m-%d")
    full = f"# {today}\n\n" + "".join(
        f"- 09:{i % 60:02d} filler entry number {i} about the weather\n" for i in range(75)
    )
    service = make_service({f"memory/{today}.md": full}, max_note_bytes=4_000)
    assert len(full.encode()) < 4_000
    first, _ = service.remember("The quarterly budget review moved to Thursday.")  # still fits: same note
    assert first.path == f"memory/{today}.md"
    written, report = service.remember("The heron nest cam password is in the blue vault " + "z" * 600)
    assert written.path == f"memory/{today}-2.md" and written.start_line == 2
    assert not report.failed
    assert (service.root / f"memory/{today}.md").read_text(encoding="utf-8").startswith(full)
    hit = service.search(SearchRequest(query="heron nest cam password", k=1, show_all=True)).hits[0]
    assert hit.path == written.path
    again, report = service.remember("Ana's flight lands at 17:40.")
    assert again.path == written.path and not report.failed
    recent = gather(service.searcher, "flight").recent
    assert any("17:40" in item.text for item in recent)


def test_remember_into_an_encrypted_store_without_its_passphrase_writes_nothing(tmp_path: Path) -> None:
    """Issue 36: remember wrote the entry, then the sync exited 6 as if nothing had happened."""
    import pytest

    from botbin.errors import PassphraseError
    from botbin.memory.conversation.turns import Turn
    from botbin.service import MemoryService
    from conftest import FakeEmbedder, write_notes

    root = write_notes(tmp_path / "ws", {"memory/notes.md": "# Notes\n\nThe zebracorn codename is Bluefin.\n"})
    (root / "botbin.toml").write_text(
        "encryption = true\nkdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"
    )
    MemoryService(root, {}, embedder=FakeEmbedder(), env={}, passphrase=lambda: "hunter2 horse").sync()
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    locked = MemoryService(root, {}, embedder=FakeEmbedder(), env={}, passphrase=lambda: None)
    with pytest.raises(PassphraseError, match="nothing was written"):
        locked.remember("The staging database moved to kestrel-db-3.")
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")) == before
    observer = locked.observer()
    with pytest.raises(PassphraseError):
        for n in range(5):
            observer.observe(Turn("user", f"Never deploy the kestrel cluster on Fridays, ever (note {n}).", "ana"))
        observer.flush()
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")) == before
    unencrypted = write_notes(tmp_path / "new", {"memory/a.md": "# A\n\nalpha\n"})
    (unencrypted / "botbin.toml").write_text("encryption = true\n")  # a store to be encrypted, no passphrase yet
    with pytest.raises(PassphraseError, match="nothing was written"):
        MemoryService(unencrypted, {}, embedder=FakeEmbedder(), env={}, passphrase=lambda: None).remember("beta")
    assert not (unencrypted / "memory" / datetime.now().astimezone().strftime("%Y-%m-%d.md")).exists()


def test_remember_while_another_process_holds_the_sync_lock_is_written_not_indexed(make_service: Any) -> None:
    """The entry is on disk once remember returns; when the sync after it cannot get the workspace lock, the call
    says so (and why) instead of failing as if nothing had been written."""
    from filelock import FileLock

    from botbin.sync.lock import LOCK_FILE

    service = make_service({"memory/a.md": "# A\n\nalpha\n"}, lock_timeout_s=0.2)
    service.sync()
    other = FileLock(str(service.ws.output_dir / LOCK_FILE))
    with other:
        written, report = service.remember("The heron cam is live.")
    assert "The heron cam is live." in (service.root / written.path).read_text(encoding="utf-8")
    (failure,) = report.failed
    assert failure.path == written.path and failure.reason.startswith("written, not indexed yet")
    assert "another botbin process is syncing" in failure.reason


def test_a_lone_surrogate_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    # a JSON "\ud83d" (a string cut inside an emoji) or an undecodable command-line byte: no text a note can hold
    for text, tags in (("broker \ud83d", []), ("broker", ["tag\udcff"])):
        with pytest.raises(BotbinError, match="surrogate"):
            remember(tmp_path, text, tags)
    assert not (tmp_path / "memory").exists()
