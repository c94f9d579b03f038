"""Path safety: symbolic links out of the workspace, link loops, '..' and absolute globs, the LSP's notion of
a tracked note, ``remember`` through links, a note swapped for a link mid-sync, and what ``watch`` watches."""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from botbin.agent.remember import remember
from botbin.config import CONFIG_FILE, DEFAULT_INCLUDE, Settings, load_settings, unsafe_glob_reason
from botbin.errors import BotbinError, WorkspaceError
from botbin.lsp.folders import Folder, Folders, path_to_uri
from botbin.service import MemoryService
from botbin.sync import engine
from botbin.sync.scan import ScanResult, TrackedMatcher, read_note, scan_workspace, walk_roots
from botbin.sync.watch import note_filter, watched_folders
from botbin.wire.requests import SearchRequest
from conftest import write_notes

T = TypeVar("T")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX symbolic links")

SECRET = "# Secret\n\nplatypus launch codes live outside the workspace\n"
PLAIN = Settings()
FOLLOW = Settings(follow_symlinks=True)


def link(path: Path, target: str | Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)
    return path


def within(fn: Callable[[], T], timeout_s: float = 20.0) -> T:
    """Run ``fn`` in a thread; fail (rather than hang) if it has not returned after ``timeout_s``."""
    result: list[T] = []
    thread = threading.Thread(target=lambda: result.append(fn()), daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert not thread.is_alive(), f"still running after {timeout_s} s (a link loop?)"
    return result[0]


def scan(root: Path, settings: Settings = PLAIN) -> ScanResult:
    return within(lambda: scan_workspace(root, settings))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with one real note, and a folder beside it (outside) holding a secret note."""
    write_notes(tmp_path / "outside", {"secret.md": SECRET, "deep/more.md": SECRET})
    return write_notes(tmp_path / "ws", {"MEMORY.md": "# M\n\nrules\n", "memory/real.md": "# Real\n\nkept\n"})


def warned(result: ScanResult, *words: str) -> list[str]:
    return [w for w in result.warnings if all(word in w for word in words)]


# -- links out of the workspace --------------------------------------------------------------------
def test_file_link_out_is_skipped_with_a_warning_unless_followed(ws: Path) -> None:
    link(ws / "memory" / "out.md", ws.parent / "outside" / "secret.md")
    result = scan(ws)
    assert sorted(result.files) == ["MEMORY.md", "memory/real.md"]
    (warning,) = warned(result, "outside the workspace")
    assert str(ws / "memory" / "out.md") in warning and "follow_symlinks" in warning
    assert "memory/out.md" in scan(ws, FOLLOW).files


def test_folder_link_out_is_skipped_unless_followed(ws: Path) -> None:
    link(ws / "memory" / "ext", ws.parent / "outside")
    result = scan(ws)
    assert not any(rel.startswith("memory/ext/") for rel in result.files)
    assert warned(result, str(ws / "memory" / "ext"), "outside the workspace")
    followed = scan(ws, FOLLOW)
    assert {"memory/ext/secret.md", "memory/ext/deep/more.md"} <= set(followed.files)
    assert not followed.warnings and "memory/ext/deep" in followed.folders


def test_walk_root_that_is_a_link_out(tmp_path: Path) -> None:
    write_notes(tmp_path / "elsewhere", {"a.md": SECRET})
    ws = write_notes(tmp_path / "ws", {"MEMORY.md": "# M\n"})
    link(ws / "memory", tmp_path / "elsewhere")
    result = scan(ws, Settings(include=("memory/**/*.md",)))
    assert result.files == {} and warned(result, "outside the workspace")
    assert list(scan(ws, Settings(include=("memory/**/*.md",), follow_symlinks=True)).files) == ["memory/a.md"]


# -- links inside the workspace --------------------------------------------------------------------
def test_links_inside_the_workspace_keep_working(ws: Path) -> None:
    write_notes(ws, {"notes/target.md": "# T\n", "shared/team/t.md": "# Team\n"})
    link(ws / "memory" / "alias.md", "../notes/target.md")
    link(ws / "memory" / "team", "../shared/team")
    for settings in (Settings(), FOLLOW):
        result = scan(ws, settings)
        assert {"memory/alias.md", "memory/team/t.md"} <= set(result.files), settings
        assert not result.warnings


def test_a_folder_reached_twice_is_walked_once_under_its_real_path(ws: Path) -> None:
    link(ws / "notes" / "dup", "../memory")
    result = scan(ws, Settings(vault=True))
    assert "memory/real.md" in result.files and not any("dup" in rel for rel in result.files)


def test_a_link_into_git_or_the_output_folder_is_not_walked(ws: Path) -> None:
    write_notes(ws, {".git/notes.md": "# git\n", "memory/aifbin/x.md": "# out\n"})
    link(ws / "memory" / "g", "../.git")
    link(ws / "memory" / "o", "aifbin")
    assert sorted(scan(ws, FOLLOW).files) == ["MEMORY.md", "memory/real.md"]


# -- loops, self links, dangling links --------------------------------------------------------------
@pytest.mark.parametrize("follow", [False, True])
def test_a_link_loop_ends_the_scan(ws: Path, follow: bool) -> None:
    write_notes(ws, {"memory/a/x.md": "# X\n"})
    link(ws / "memory" / "a" / "b", "..")
    link(ws / "memory" / "up", ws)
    result = scan(ws, Settings(follow_symlinks=follow))
    assert sorted(result.files) == ["MEMORY.md", "memory/a/x.md", "memory/real.md"]
    assert warned(result, "memory/a/b", "loop") and warned(result, "memory/up", "loop")


def test_links_between_outside_folders_end_the_scan(tmp_path: Path, ws: Path) -> None:
    one, two = write_notes(tmp_path / "one", {"1.md": "# 1\n"}), write_notes(tmp_path / "two", {"2.md": "# 2\n"})
    link(one / "to-two", two)
    link(two / "to-one", one)
    link(ws / "memory" / "l", one)
    files = scan(ws, FOLLOW).files
    assert {"memory/l/1.md", "memory/l/to-two/2.md"} <= set(files) and len(files) == 4


@pytest.mark.parametrize("follow", [False, True])
def test_self_and_dangling_links_are_skipped(ws: Path, follow: bool) -> None:
    link(ws / "memory" / "self.md", "self.md")
    link(ws / "memory" / "selfdir", "selfdir")
    link(ws / "memory" / "gone.md", "missing.md")
    link(ws / "memory" / "gone-dir", "missing")
    result = scan(ws, Settings(follow_symlinks=follow))
    assert sorted(result.files) == ["MEMORY.md", "memory/real.md"]
    assert warned(result, "memory/self.md", "cannot be followed")
    assert warned(result, "memory/gone.md", "does not exist")
    assert len(result.warnings) == 2  # links whose names are no notes pass in silence


# -- globs -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("glob", "unsafe"),
    [
        ("memory/**/*.md", False),
        ("a..b/*.md", False),
        ("..notes.md", False),
        ("./memory/*.md", False),
        ("memory/../../etc/*.md", True),
        ("../x.md", True),
        ("a/..", True),
        ("/etc/*.md", True),
        ("C:/notes/*.md", True),
        ("memory\\..\\..\\x.md", True),
        ("\\\\server\\share\\*.md", True),
    ],
)
def test_unsafe_glob_reason(glob: str, unsafe: bool) -> None:
    assert (unsafe_glob_reason(glob) is not None) == unsafe


def test_unsafe_globs_in_settings_are_dropped_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text(
        'include = ["memory/**/*.md", "memory/../../etc/*.md", "/etc/*.md"]\n', encoding="utf-8"
    )
    loaded = load_settings(
        tmp_path,
        env={"BOTBIN_EXCLUDE": "../x/*.md,memory/skip/*.md"},
        overrides={"follow_symlinks": "yes"},
        overrides_source="LSP settings",
    )
    assert loaded.settings.include == ("memory/**/*.md",)
    assert loaded.settings.exclude == ("memory/skip/*.md",) and loaded.settings.follow_symlinks is True
    toml, absolute, env = loaded.warnings
    assert str(tmp_path / CONFIG_FILE) in toml and "'memory/../../etc/*.md'" in toml and "'..'" in toml
    assert "'/etc/*.md'" in absolute and "absolute" in absolute
    assert env.startswith("environment variable BOTBIN_EXCLUDE") and "'../x/*.md'" in env


def test_an_include_of_only_unsafe_globs_falls_back_to_the_default(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, overrides={"include": ["../*.md"]}, env={"BOTBIN_FOLLOW_SYMLINKS": "1"})
    assert loaded.settings.include == DEFAULT_INCLUDE and loaded.settings.follow_symlinks is True
    assert len(loaded.warnings) == 2 and "using the default" in loaded.warnings[1]


def test_unsafe_globs_built_in_code_never_walk_out(ws: Path) -> None:
    settings = Settings(include=("memory/../../outside/*.md", "/etc/*.md", f"{ws.parent}/outside/*.md"))
    assert walk_roots(settings.tracked_globs) == []
    assert scan(ws, settings).files == {}
    assert not TrackedMatcher(settings)("memory/../../outside/secret.md")


# -- syncing ---------------------------------------------------------------------------------------
def test_sync_leaves_outside_notes_unindexed(ws: Path, make_service: Callable[..., MemoryService]) -> None:
    link(ws / "memory" / "out.md", ws.parent / "outside" / "secret.md")
    service = make_service(root=ws)
    report = service.sync()
    assert "memory/out.md" not in report.added and any("outside the workspace" in w for w in report.warnings)
    assert all(
        hit.path != "memory/out.md"
        for hit in service.search(SearchRequest(query="platypus launch codes", show_all=True)).hits
    )
    followed = make_service(root=ws, follow_symlinks=True).sync()
    assert "memory/out.md" in followed.added


def test_a_note_swapped_for_an_outside_link_after_the_scan_is_not_read(
    ws: Path, make_service: Callable[..., MemoryService], monkeypatch: pytest.MonkeyPatch
) -> None:
    service = make_service(root=ws)
    note = ws / "memory" / "real.md"

    def scan_then_swap(root: Path, settings: Settings) -> ScanResult:
        result = scan_workspace(root, settings)
        note.unlink()
        link(note, ws.parent / "outside" / "secret.md")
        return result

    monkeypatch.setattr(engine, "scan_workspace", scan_then_swap)
    report = service.sync()
    (failure,) = report.failed
    assert failure.path == "memory/real.md" and "outside the workspace" in failure.reason
    assert all(
        "platypus" not in hit.text
        for hit in service.search(SearchRequest(query="platypus launch codes", show_all=True)).hits
    )


def test_read_note(ws: Path) -> None:
    link(ws / "memory" / "out.md", ws.parent / "outside" / "secret.md")
    with pytest.raises(OSError) as caught:
        read_note(ws, "memory/out.md", follow_symlinks=False)
    assert caught.value.errno == errno.EXDEV and "outside the workspace" in str(caught.value.strerror)
    assert read_note(ws, "memory/out.md", follow_symlinks=True) == SECRET.encode()
    assert read_note(ws, "memory/real.md", follow_symlinks=False) == b"# Real\n\nkept\n"
    with pytest.raises(FileNotFoundError):
        read_note(ws, "memory/none.md", follow_symlinks=False)


# -- the language server's tracked notes ------------------------------------------------------------
def test_lsp_folder_tracks_what_the_scan_tracks(ws: Path, make_service: Callable[..., MemoryService]) -> None:
    write_notes(ws, {"notes/target.md": "# T\n"})
    link(ws / "memory" / "out.md", ws.parent / "outside" / "secret.md")
    link(ws / "memory" / "alias.md", "../notes/target.md")
    plain = Folder(path_to_uri(ws), ws, make_service(root=ws))
    followed = Folder(path_to_uri(ws), ws, make_service(root=ws, follow_symlinks=True))
    out_uri, alias_uri = path_to_uri(ws / "memory" / "out.md"), path_to_uri(ws / "memory" / "alias.md")
    assert plain.rel_path(out_uri) == "memory/out.md" and plain.rel_path(alias_uri) == "memory/alias.md"
    assert not plain.tracks("memory/out.md") and followed.tracks("memory/out.md")
    assert plain.tracks("memory/alias.md") and plain.tracks("memory/real.md")
    assert not plain.tracks("memory/../../outside/secret.md")
    assert plain.rel_path(path_to_uri(ws.parent / "outside" / "secret.md")) is None

    folders = Folders(lambda *_: None, lambda *_: None)
    folders.set_folders([path_to_uri(ws)], {"follow_symlinks": False})
    assert not folders.tracks(out_uri) and folders.tracks(alias_uri)
    folders.set_folders([path_to_uri(ws)], {"follow_symlinks": True})
    assert folders.tracks(out_uri)


# -- remember --------------------------------------------------------------------------------------
def test_remember_does_not_write_through_a_link_out(tmp_path: Path) -> None:
    outside = write_notes(tmp_path / "outside", {"keep.md": "# Keep\n"})
    ws = tmp_path / "ws"
    link(ws / "memory", outside)
    with pytest.raises(BotbinError, match="outside the workspace"):
        remember(ws, "a fact", [])
    assert sorted(p.name for p in outside.iterdir()) == ["keep.md"]
    written = remember(ws, "a fact", [], follow_symlinks=True)
    assert (outside / Path(written.path).name).read_text(encoding="utf-8").endswith("a fact\n")


def test_remember_does_not_write_through_a_daily_note_linked_out(tmp_path: Path) -> None:
    target = write_notes(tmp_path / "outside", {"today.md": "# Today\n"}) / "today.md"
    ws = tmp_path / "ws"
    rel = remember(write_notes(tmp_path / "probe", {}), "probe", []).path  # today's note name
    link(ws / rel, target)
    with pytest.raises(BotbinError, match="outside the workspace"):
        remember(ws, "a fact", [])
    assert target.read_text(encoding="utf-8") == "# Today\n" and (ws / rel).is_symlink()


# -- watch -----------------------------------------------------------------------------------------
def test_watch_skips_the_folders_the_scan_skips(ws: Path) -> None:
    link(ws / "memory" / "ext", ws.parent / "outside")
    plain = watched_folders(ws, Settings())
    assert ws in plain and ws / "memory" in plain and ws / "memory" / "ext" not in plain
    followed = watched_folders(ws, FOLLOW)
    assert ws / "memory" / "ext" / "deep" in followed
    missing = watched_folders(ws, Settings(include=("notes/deep/**/*.md",)))
    assert missing == [ws]  # notes/ is not there yet: the root sees it appear
    accept = note_filter(ws, "memory/aifbin", plain)
    (ws / "memory" / "new").mkdir()
    from watchfiles import Change

    assert accept(Change.added, str(ws / "memory" / "new")) and accept(Change.added, str(ws / "memory" / "a.md"))
    assert not accept(Change.added, str(ws / "memory" / "aifbin" / "x.md"))
    assert accept(Change.deleted, str(ws / "memory")) and not accept(Change.deleted, str(ws / "gone"))


class _Stop(KeyboardInterrupt):
    """Ends watch_workspace the way Ctrl+C does (it returns 0)."""


def test_watch_sees_notes_in_a_folder_made_after_it_started(make_service: Callable[..., MemoryService]) -> None:
    service = make_service({"memory/a.md": "# A\n\nfirst\n"}, debounce_ms=100)
    seen: list[str] = []
    started = threading.Event()

    def record(report: engine.SyncReport) -> None:
        seen.extend([*report.added, *report.modified])
        started.set()
        if "memory/new/deeper/n.md" in report.modified:
            raise _Stop

    thread = threading.Thread(target=service.watch, args=(record,), daemon=True)
    thread.start()
    assert started.wait(30)
    time.sleep(0.5)  # let the watcher start listening
    write_notes(service.root, {"memory/new/deeper/n.md": "# N\n\nfirst\n"})
    deadline = time.monotonic() + 30
    while "memory/new/deeper/n.md" not in seen and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "memory/new/deeper/n.md" in seen
    time.sleep(1.5)  # the rebuilt watcher now watches memory/new/deeper
    (service.root / "memory" / "new" / "deeper" / "n.md").write_text("# N\n\nsecond\n", encoding="utf-8")
    thread.join(30)
    assert not thread.is_alive()


def test_an_output_dir_linked_outside_is_refused(tmp_path: Path, make_service: Callable[..., MemoryService]) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    ws = tmp_path / "ws"
    write_notes(ws, {"MEMORY.md": "# Memory\n\nA note.\n"})
    (ws / "memory").mkdir()
    (ws / "memory" / "aifbin").symlink_to(outside, target_is_directory=True)
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        make_service(root=ws).sync()
    assert list(outside.iterdir()) == []
    assert make_service(root=ws, follow_symlinks=True).sync().added == ("MEMORY.md",)
