"""LSP settings (settings_from in botbin.lsp.features.session) and workspace folders with their sync worker
(botbin.lsp.folders.Folders) on real temporary folders, with the fake embedder: no model, no subprocess."""

from __future__ import annotations

import os
import threading
from collections import namedtuple
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from botbin.errors import ModelError, PassphraseError, WorkspaceError
from botbin.lsp.features.session import settings_from
from botbin.lsp.folders import Folder, Folders, path_to_uri, uri_to_path
from botbin.service import MemoryService
from botbin.sync.engine import SyncReport
from botbin.wire.requests import EVERY_CHANGE, SearchRequest, SyncRequest
from conftest import FakeEmbedder, write_notes

WAIT_S = 10.0


# -- settings_from -------------------------------------------------------------------------------


def test_settings_from_none_is_empty() -> None:
    assert settings_from(None) == ({}, [])


def test_settings_from_plain_mapping() -> None:
    assert settings_from({"top_k": 3, "alpha": 0.5}) == ({"top_k": 3, "alpha": 0.5}, [])


def test_settings_from_camel_case_keys() -> None:
    options, problems = settings_from(
        {"topK": 3, "outputDir": "out", "lockTimeoutS": 2.5, "vault": True, "maxNoteBytes": 10, "batch_size": 8}
    )
    assert options == {
        "top_k": 3,
        "output_dir": "out",
        "lock_timeout_s": 2.5,
        "vault": True,
        "max_note_bytes": 10,
        "batch_size": 8,
    }
    assert problems == []


def test_settings_from_unwraps_a_botbin_section() -> None:
    options, problems = settings_from({"botbin": {"topK": 4, "include": ["notes/*.md"]}, "other": {"x": 1}})
    assert options == {"top_k": 4, "include": ["notes/*.md"]}
    assert problems == []


def test_settings_from_keeps_a_botbin_key_that_is_not_a_section() -> None:
    assert settings_from({"botbin": 1, "topK": 2}) == ({"botbin": 1, "top_k": 2}, [])


def test_settings_from_namedtuple() -> None:
    Options = namedtuple("Options", ["topK", "outputDir"])  # what pygls makes of JSON objects
    assert settings_from(Options(5, "out")) == ({"top_k": 5, "output_dir": "out"}, [])


def test_settings_from_namedtuple_with_botbin_section() -> None:
    Section = namedtuple("Section", ["topK"])
    Options = namedtuple("Options", ["botbin"])
    assert settings_from(Options(Section(5))) == ({"top_k": 5}, [])


@pytest.mark.parametrize(("raw", "kind"), [(["topK", 3], "list"), ("topK=3", "str"), (3, "int")])
def test_settings_from_rejects_what_is_not_an_object(raw: object, kind: str) -> None:
    options, problems = settings_from(raw)
    assert options == {}
    assert problems == [f"LSP settings: expected an object, got {kind}; using defaults"]


# -- Folders: folders and settings -------------------------------------------------------------------


class Recorder:
    """on_progress and on_done callbacks that remember their calls and can hold the worker."""

    def __init__(self) -> None:
        self.progress: list[tuple[Folder, int, int]] = []
        self.done: list[tuple[Folder, SyncReport | None, str | None]] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self.lock = threading.Condition()

    def on_progress(self, folder: Folder, done: int, total: int) -> None:
        with self.lock:
            self.progress.append((folder, done, total))
        self.started.set()
        assert self.release.wait(WAIT_S)

    def on_done(self, folder: Folder, report: SyncReport | None, error: str | None) -> None:
        with self.lock:
            self.done.append((folder, report, error))
            self.lock.notify_all()

    def wait_done(self, count: int) -> None:
        """Wait for ``count`` on_done calls (wait_idle may return just before the last callback runs)."""
        with self.lock:
            if not self.lock.wait_for(lambda: len(self.done) >= count, WAIT_S):
                raise AssertionError(f"on_done called {len(self.done)} times, expected {count}")


@pytest.fixture(autouse=True)
def _no_botbin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folders reads BOTBIN_* variables; the caller's environment must not change these tests."""
    for name in list(os.environ):
        if name.startswith("BOTBIN_") and name != "BOTBIN_EMBED_BACKEND":  # tests/conftest.py says why it stays
            monkeypatch.delenv(name)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def folders(recorder: Recorder) -> Iterator[Folders]:
    made = Folders(recorder.on_progress, recorder.on_done)
    yield made
    recorder.release.set()
    made.stop()


def uri(path: Path) -> str:
    return path_to_uri(path.resolve())


def test_uri_to_path_and_back(tmp_path: Path) -> None:
    folder = tmp_path / "my notes" / "caf\u00e9"
    folder.mkdir(parents=True)
    folder_uri = uri(folder)
    assert folder_uri.startswith("file:///")
    assert " " not in folder_uri
    assert uri_to_path(folder_uri) == folder.resolve()
    assert uri_to_path("untitled:Untitled-1") is None
    assert uri_to_path("https://example.com/a.md") is None


def test_set_folders_warns_about_a_non_file_uri(folders: Folders, tmp_path: Path) -> None:
    warnings = folders.set_folders(["untitled:Untitled-1", uri(tmp_path)], {})
    assert warnings == ["untitled:Untitled-1: not a file: URI, ignored"]
    assert list(folders.folders) == [uri(tmp_path)]


def test_set_folders_warns_about_bad_options(folders: Folders, tmp_path: Path) -> None:
    warnings = folders.set_folders([uri(tmp_path)], {"alpha": 5, "top_k": "many", "colour": "red"})
    assert len(warnings) == 3
    assert all(w.startswith("LSP settings: ") for w in warnings)
    assert any("'alpha' = 5" in w and "between 0 and 1" in w for w in warnings)
    assert any("'top_k' = 'many'" in w for w in warnings)
    assert any("unknown setting 'colour'" in w for w in warnings)
    settings = folders.folders[uri(tmp_path)].service.settings
    assert settings.alpha == 0.7
    assert settings.top_k == 10


def test_passphrase_option_opens_an_encrypted_store_and_is_no_setting(folders: Folders, tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Memory\n\nThe vault code word is heron.\n")
    (tmp_path / "botbin.toml").write_text("encryption = true\nkdf_time_cost = 1\nkdf_memory_kib = 8192\n")
    assert folders.set_folders([uri(tmp_path)], {"passphrase": "s3cret words"}) == []
    service = folders.folders[uri(tmp_path)].service
    keys = service.ws.keys()
    assert keys is None  # no store yet; the first sync creates it with this passphrase
    service.sync()
    assert service.ws.keys() is not None
    assert folders.set_folders([uri(tmp_path)], {}) == []
    with pytest.raises(PassphraseError):  # without the option (and no BOTBIN_PASSPHRASE) it stays closed
        folders.folders[uri(tmp_path)].service.ws.keys()


def test_set_folders_reports_a_warning_shared_by_two_folders_once(folders: Folders, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    warnings = folders.set_folders([uri(tmp_path / "a"), uri(tmp_path / "b")], {"alpha": 5})
    assert len(warnings) == 1
    assert "LSP settings" in warnings[0]
    assert len(folders.folders) == 2


def test_folder_of_picks_the_innermost_folder(folders: Folders, tmp_path: Path) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "sub dir"
    inner.mkdir(parents=True)
    for order in ([outer, inner], [inner, outer]):
        folders.set_folders([uri(p) for p in order], {})
        found = folders.folder_of(uri(inner / "memory" / "2026-01-02.md"))
        assert found is not None
        assert found[0].root == inner.resolve()
        assert found[1] == "memory/2026-01-02.md"
        found = folders.folder_of(uri(outer / "memory" / "a.md"))
        assert found is not None
        assert (found[0].root, found[1]) == (outer.resolve(), "memory/a.md")
        found = folders.folder_of(uri(outer / "sub dirx" / "a.md"))  # a sibling whose name starts alike
        assert found is not None
        assert (found[0].root, found[1]) == (outer.resolve(), "sub dirx/a.md")
    assert folders.folder_of(uri(tmp_path / "elsewhere.md")) is None
    assert folders.folder_of("untitled:Untitled-1") is None


def test_folder_rel_path_and_uri_of_round_trip(folders: Folders, tmp_path: Path) -> None:
    root = tmp_path / "ws \u00e9"
    root.mkdir()
    folders.set_folders([uri(root)], {})
    folder = folders.folders[uri(root)]
    note_uri = folder.uri_of("memory/deep/n\u00f6te #1.md")
    assert folder.rel_path(note_uri) == "memory/deep/n\u00f6te #1.md"
    assert folder.rel_path(uri(tmp_path / "other.md")) is None


def test_tracks_default_globs(folders: Folders, tmp_path: Path) -> None:
    folders.set_folders([uri(tmp_path)], {})
    tracked = ["MEMORY.md", "memory/a.md", "memory/2026/01/b.md"]
    untracked = [
        "README.md",
        "notes/a.md",
        "memory/a.txt",
        "memory/a.MD",
        "sub/MEMORY.md",
        "memory/aifbin/x.md",
        "memory/.git/x.md",
        "memory/node_modules/x.md",
    ]
    for rel in tracked:
        assert folders.tracks(uri(tmp_path / rel)), rel
    for rel in untracked:
        assert not folders.tracks(uri(tmp_path / rel)), rel
    assert not folders.tracks("untitled:Untitled-1")
    assert not folders.tracks(uri(tmp_path.parent / "MEMORY.md"))


def test_tracks_honours_include_and_exclude(folders: Folders, tmp_path: Path) -> None:
    folders.set_folders([uri(tmp_path)], {"include": ["notes/**/*.md", "MEMORY.md"], "exclude": ["notes/private/**"]})
    assert folders.tracks(uri(tmp_path / "notes" / "a.md"))
    assert folders.tracks(uri(tmp_path / "notes" / "x" / "y.md"))
    assert folders.tracks(uri(tmp_path / "MEMORY.md"))
    assert not folders.tracks(uri(tmp_path / "notes" / "private" / "secret.md"))
    assert not folders.tracks(uri(tmp_path / "memory" / "a.md"))


def test_tracks_in_vault_mode(folders: Folders, tmp_path: Path) -> None:
    folders.set_folders([uri(tmp_path)], {"vault": True})
    assert folders.tracks(uri(tmp_path / "anything" / "at all.md"))
    assert not folders.tracks(uri(tmp_path / "memory" / "aifbin" / "x.md"))
    assert not folders.tracks(uri(tmp_path / ".obsidian" / "x.md"))


def test_set_folders_keeps_a_folder_while_options_are_unchanged(folders: Folders, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    folders.set_folders([uri(a)], {"top_k": 3})
    first = folders.folders[uri(a)]
    service = first.service
    folders.set_folders([uri(a), uri(b)], {"top_k": 3})
    assert folders.folders[uri(a)] is first
    assert first.service is service
    assert set(folders.folders) == {uri(a), uri(b)}
    folders.set_folders([uri(b)], {"top_k": 3})  # a folder removed
    assert list(folders.folders) == [uri(b)]
    kept_b = folders.folders[uri(b)]
    folders.set_folders([uri(b)], {"top_k": 4})  # options changed: a new service with them
    assert folders.folders[uri(b)] is not kept_b
    assert folders.folders[uri(b)].service.settings.top_k == 4
    assert folders.options == {"top_k": 4}


# -- Folders: the sync worker ------------------------------------------------------------------------


def open_workspace(folders: Folders, root: Path, notes: dict[str, str | bytes]) -> Folder:
    write_notes(root, notes)
    folders.set_folders([uri(root)], {})
    folder = folders.folders[uri(root)]
    folder.service = MemoryService(folder.root, embedder=FakeEmbedder(), env={})
    return folder


NOTES: dict[str, str | bytes] = {
    "MEMORY.md": "# Memory\n\nAlways use tabs.\n",
    "memory/2026-01-02.md": "# Daily\n\nWe chose SQLite for the cache.\n",
}


def test_request_sync_runs_a_sync_and_reports_it(folders: Folders, recorder: Recorder, tmp_path: Path) -> None:
    folder = open_workspace(folders, tmp_path / "ws", NOTES)
    assert not folders.indexing
    folders.request_sync()
    assert folders.wait_idle(WAIT_S)
    recorder.wait_done(1)
    assert not folders.indexing
    assert folders.pending() == 0
    [(done_folder, report, error)] = recorder.done
    assert done_folder is folder
    assert error is None
    assert isinstance(report, SyncReport)
    assert sorted(report.added) == ["MEMORY.md", "memory/2026-01-02.md"]
    assert folder.last_report is report
    assert folder.last_error is None
    assert recorder.progress
    assert all(f is folder for f, _, _ in recorder.progress)
    *_, (_, embedded, to_embed) = recorder.progress  # chunks, not notes (issue 22)
    assert embedded == to_embed == report.chunks_embedded > 0
    # the index the worker loaded was patched live
    hits = folder.service.search(SearchRequest(query="SQLite cache", show_all=True)).hits
    assert hits and hits[0].path == "memory/2026-01-02.md"


def test_requests_made_while_a_sync_runs_are_merged(
    folders: Folders, recorder: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = open_workspace(folders, tmp_path / "ws", NOTES)
    calls: list[bool] = []
    real_sync = folder.service.sync

    def counting_sync(request: SyncRequest = EVERY_CHANGE, progress: Any = None) -> SyncReport:
        calls.append(request.full)
        return real_sync(request, progress)

    monkeypatch.setattr(folder.service, "sync", counting_sync)
    recorder.release.clear()  # the first sync stops at its first progress report
    folders.request_sync()
    assert recorder.started.wait(WAIT_S)
    assert folders.indexing
    folders.request_sync([folder.uri])
    folders.request_sync(full=True)
    assert folders.pending() == 2  # one running, one queued
    assert not folders.wait_idle(0.05)
    recorder.release.set()
    assert folders.wait_idle(WAIT_S)
    recorder.wait_done(2)
    assert calls == [False, True]  # the two requests became one sync, and it kept full=True
    assert [error for _, _, error in recorder.done] == [None, None]
    first, second = (report for _, report, _ in recorder.done)
    assert first is not None and second is not None
    assert len(first.added) == 2
    assert second.added == ()


def test_request_sync_ignores_an_unknown_folder(folders: Folders, recorder: Recorder, tmp_path: Path) -> None:
    open_workspace(folders, tmp_path / "ws", NOTES)
    folders.request_sync(["file:///nowhere"])
    assert folders.wait_idle(WAIT_S)
    assert recorder.done == []


class FailingService:
    """Stands in for a MemoryService whose sync raises."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def index(self) -> None:
        return None

    def wait_warm(self, timeout_s: float) -> None:
        return None

    def sync(self, progress: Any = None, full: bool = False) -> SyncReport:
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "error", "model_error"),
    [
        (ModelError("no model here"), "no model here", "no model here"),
        (WorkspaceError("cannot be read", Path("ws")), None, None),
        (RuntimeError("boom"), "internal error: boom", None),
    ],
)
def test_a_failing_sync_is_reported_and_the_worker_goes_on(
    folders: Folders, recorder: Recorder, tmp_path: Path, exc: Exception, error: str | None, model_error: str | None
) -> None:
    good = open_workspace(folders, tmp_path / "good", NOTES)
    bad_root = tmp_path / "bad"
    bad_root.mkdir()
    folders.set_folders([good.uri, uri(bad_root)], {})
    bad = folders.folders[uri(bad_root)]
    bad.service = FailingService(exc)  # type: ignore[assignment]
    folders.request_sync([bad.uri, good.uri])
    assert folders.wait_idle(WAIT_S)
    recorder.wait_done(2)
    by_folder = {f.uri: (report, err) for f, report, err in recorder.done}
    report, err = by_folder[bad.uri]
    assert report is None
    assert err == (error or str(exc))
    assert bad.last_error == err
    assert bad.model_error == model_error
    good_report, good_error = by_folder[good.uri]
    assert good_error is None
    assert isinstance(good_report, SyncReport)


def test_stop_drops_queued_syncs(folders: Folders, recorder: Recorder, tmp_path: Path) -> None:
    folder = open_workspace(folders, tmp_path / "ws", NOTES)
    recorder.release.clear()
    folders.request_sync()
    assert recorder.started.wait(WAIT_S)
    folders.request_sync([folder.uri])
    folders.stop()
    recorder.release.set()
    assert folders.wait_idle(WAIT_S)
    recorder.wait_done(1)
    assert len(recorder.done) == 1
