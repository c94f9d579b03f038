"""Bad input gets a clear message naming the file, the rest of the work goes on, nothing is lost."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from botbin import aifbin
from botbin.errors import AifBinFormatError, WorkspaceError
from botbin.notes_io import extract_source
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from conftest import run_checker

GOOD = "# Good\n\nThe webhook retries use exponential backoff with jitter.\n"


def _digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*.md")
        if "aifbin" not in p.parts
    }


def _doc(service: MemoryService, rel: str) -> aifbin.AifBinDocument:
    out = service.output_dir / (rel[:-3] + ".aif-bin")
    return aifbin.decode(out.read_bytes(), str(out))


def test_empty_workspace_syncs_searches_and_reports(make_service: Callable[..., MemoryService]) -> None:
    service = make_service({})
    report = service.sync()
    assert not report.changed and not report.failed
    assert service.search(SearchRequest(query="anything at all", show_all=True)).hits == []
    assert service.status().files == 0


@pytest.mark.parametrize("content", ["", "   \n\t\n  ", "---\ntags: [a, b]\ndate: 2026-11-03\n---\n"])
def test_empty_whitespace_and_frontmatter_only_notes(make_service: Callable[..., MemoryService], content: str) -> None:
    service = make_service({"memory/blank.md": content, "memory/good.md": GOOD})
    report = service.sync()
    assert sorted(report.added) == ["memory/blank.md", "memory/good.md"] and not report.failed
    doc = _doc(service, "memory/blank.md")
    assert doc.chunks == ()
    assert doc.source_text == content.encode()
    assert run_checker(service.root, service.output_dir).returncode == 0
    assert service.search(SearchRequest(query="webhook backoff", show_all=True)).hits[0].path == "memory/good.md"


def test_malformed_yaml_in_one_note_of_many(make_service: Callable[..., MemoryService]) -> None:
    bad = "---\ntitle: [unclosed\ntags: x\n---\n# Body\n\nThe body of the broken note is still indexed.\n"
    notes = {f"memory/n{i}.md": GOOD.replace("Good", f"Good {i}") for i in range(5)}
    service = make_service({**notes, "memory/bad.md": bad})
    report = service.sync()
    assert len(report.added) == 6 and not report.failed
    warning = next(w for w in report.warnings if "memory/bad.md" in w)
    assert "malformed YAML" in warning and "memory/bad.md:" in warning
    assert _doc(service, "memory/bad.md").metadata["frontmatter"] == {}
    assert any(
        h.path == "memory/bad.md"
        for h in service.search(SearchRequest(query="broken note body indexed", show_all=True)).hits
    )


def test_yaml_dates_and_non_string_keys_become_strings(make_service: Callable[..., MemoryService]) -> None:
    yaml = "date: 2026-11-03\nwhen: 2026-11-03 10:30:00\n3: three\ntrue: yes\nnested: {2: [2026-01-01]}\n"
    note = f"---\n{yaml}---\n{GOOD}"
    service = make_service({"memory/dated.md": note})
    service.sync()
    fm = _doc(service, "memory/dated.md").metadata["frontmatter"]
    assert fm["date"] == "2026-11-03" and fm["when"] == "2026-11-03T10:30:00"
    assert fm["3"] == "three" and fm["True"] is True
    assert fm["nested"] == {"2": ["2026-01-01"]}
    assert _doc(service, "memory/dated.md").metadata["note"]["date"] == "2026-11-03"


def test_crlf_and_bom_before_frontmatter(make_service: Callable[..., MemoryService]) -> None:
    raw = "\ufeff---\r\ntags: [ops]\r\n---\r\n# Title\r\n\r\nLine one of the body.\r\nLine two.\r\n".encode()
    service = make_service({"memory/win.md": raw})
    service.sync()
    doc = _doc(service, "memory/win.md")
    assert doc.metadata["note"]["tags"] == ["ops"]
    assert "---" not in doc.chunks[0].text and "tags" not in doc.chunks[0].text
    assert (doc.chunks[0].start_line, doc.chunks[0].end_line) == (5, 7)
    assert extract_source(service.output_dir / "memory/win.aif-bin") == raw
    assert run_checker(service.root, service.output_dir).returncode == 0


def test_invalid_utf8_is_indexed_with_a_warning_and_kept_byte_for_byte(
    make_service: Callable[..., MemoryService],
) -> None:
    raw = b"# Latin-1 note\n\nCaf\xe9 cr\xe8me and the deploy checklist.\n"
    service = make_service({"memory/latin1.md": raw})
    before = _digests(service.root)
    report = service.sync()
    assert report.added == ("memory/latin1.md",)
    assert any("memory/latin1.md" in w and "invalid UTF-8 at byte 19" in w for w in report.warnings)
    assert "\ufffd" in _doc(service, "memory/latin1.md").chunks[0].text
    assert extract_source(service.output_dir / "memory/latin1.aif-bin") == raw
    assert _digests(service.root) == before


def test_huge_note_is_skipped_with_its_size_and_the_rest_syncs(make_service: Callable[..., MemoryService]) -> None:
    huge = ("# Log\n\n" + "A line of a very long log file that nobody will read.\n" * 400_000).encode()
    assert len(huge) > 20_000_000
    service = make_service({"memory/huge.md": huge, "memory/good.md": GOOD})
    before = _digests(service.root)
    report = service.sync()
    assert report.added == ("memory/good.md",)
    (failure,) = report.failed
    assert failure.path == "memory/huge.md" and "max_note_bytes" in failure.reason and "bytes" in failure.reason
    assert _digests(service.root) == before
    assert any(s.path == "memory/huge.md" for s in service.status().stale)


def test_binary_file_named_md(make_service: Callable[..., MemoryService]) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
    service = make_service({"memory/image.md": png, "memory/good.md": GOOD})
    report = service.sync()
    assert report.added == ("memory/good.md",)
    assert report.failed[0].path == "memory/image.md" and "binary" in report.failed[0].reason
    assert (service.root / "memory/image.md").read_bytes() == png


def test_note_deleted_during_sync(make_service: Callable[..., MemoryService]) -> None:
    notes = {f"memory/n{i}.md": GOOD.replace("Good", f"Good {i}") for i in range(4)}
    service = make_service(notes)

    def delete_later_note(done: int, total: int) -> None:  # the first report comes after the first note
        later = service.root / "memory/n3.md"
        if later.exists():
            later.unlink()

    report = service.sync(progress=delete_later_note)
    assert sorted(report.added) == ["memory/n0.md", "memory/n1.md", "memory/n2.md"] and not report.failed
    again = service.sync()
    assert not again.changed
    assert run_checker(service.root, service.output_dir).returncode == 0


def test_note_renamed_during_sync_converges(make_service: Callable[..., MemoryService]) -> None:
    notes = {f"memory/n{i}.md": GOOD.replace("Good", f"Good {i}") for i in range(4)}
    service = make_service(notes)
    service.sync()
    (service.root / "memory/n1.md").write_text(GOOD + "\nmore\n")

    def rename_mid_sync(done: int, total: int) -> None:
        src = service.root / "memory/n1.md"
        if src.exists():
            src.rename(service.root / "memory/renamed.md")

    service.sync(progress=rename_mid_sync)
    service.sync()
    assert not service.sync().changed
    files = sorted(p.relative_to(service.output_dir).as_posix() for p in service.output_dir.rglob("*.aif-bin"))
    assert files == ["memory/n0.aif-bin", "memory/n2.aif-bin", "memory/n3.aif-bin", "memory/renamed.aif-bin"]


@pytest.mark.parametrize("damage", ["truncate", "foreign"])
def test_damaged_output_is_reported_on_load_and_rewritten_by_sync(
    make_service: Callable[..., MemoryService],
    damage: str,
) -> None:
    service = make_service({"memory/a.md": GOOD, "memory/b.md": GOOD.replace("webhook", "deploy")})
    service.sync()
    out = service.output_dir / "memory/a.aif-bin"
    data = out.read_bytes()
    out.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"PK\x03\x04 a zip file, not ours")
    with pytest.raises(AifBinFormatError, match=r"a\.aif-bin"):
        extract_source(out)
    fresh = MemoryService(service.root, {}, embedder=service.ws.models.embedder, env={})
    result = fresh.search(SearchRequest(query="deploy", show_all=True))
    assert any("a.aif-bin" in w for w in result.warnings)
    assert [h.path for h in result.hits] == ["memory/b.md"]
    report = fresh.sync()
    assert report.modified == ("memory/a.md",)
    assert aifbin.decode(out.read_bytes(), str(out)).source_text == GOOD.encode()


@pytest.fixture
def unreadable(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """Make folders unreadable for os.scandir (chmod cannot stop root, which runs CI)."""
    blocked: set[str] = set()
    real = os.scandir

    def fake(path: Any = ".") -> Any:
        if os.fspath(path) in blocked:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", fake)
    yield lambda p: blocked.add(str(p))


def test_unreadable_workspace_root_wipes_nothing(
    make_service: Callable[..., MemoryService], unreadable: Callable[[Path], None]
) -> None:
    service = make_service({"MEMORY.md": GOOD, "memory/a.md": GOOD})
    service.sync()
    outputs = sorted(service.output_dir.rglob("*"))
    state = service.ws.state_path.read_bytes()
    unreadable(service.root)
    with pytest.raises(WorkspaceError, match="cannot be read"):
        service.sync()
    assert sorted(service.output_dir.rglob("*")) == outputs and service.ws.state_path.read_bytes() == state


def test_unreadable_subfolder_keeps_its_notes(
    make_service: Callable[..., MemoryService], unreadable: Callable[[Path], None]
) -> None:
    service = make_service({"MEMORY.md": GOOD, "memory/private/a.md": GOOD, "memory/b.md": GOOD})
    service.sync()
    unreadable(service.root / "memory" / "private")
    report = service.sync()
    assert report.deleted == () and any("cannot be read" in w for w in report.warnings)
    assert (service.output_dir / "memory/private/a.aif-bin").is_file()


def test_missing_workspace_is_a_clear_error(tmp_path: Path) -> None:
    service = MemoryService(tmp_path / "nope", {}, env={})
    with pytest.raises(WorkspaceError, match="does not exist"):
        service.sync()


def test_lost_state_file_then_deleted_note_leaves_no_orphan(make_service: Callable[..., MemoryService]) -> None:
    service = make_service({"memory/a.md": GOOD, "memory/b.md": GOOD.replace("webhook", "deploy")})
    service.sync()
    service.ws.state_path.write_text("garbage", encoding="utf-8")
    (service.root / "memory/b.md").unlink()
    report = service.sync()
    # Issue 20: the lost state is rebuilt from the outputs, so b.md is known, and reported deleted.
    assert report.deleted == ("memory/b.md",) and any("rebuilt from 2 AIF-BIN files" in w for w in report.warnings)
    assert sorted(p.name for p in service.output_dir.rglob("*.aif-bin")) == ["a.aif-bin"]


def test_uppercase_md_is_not_a_note_so_nothing_collides(make_service: Callable[..., MemoryService]) -> None:
    service = make_service({"memory/a.md": GOOD, "memory/a.MD": "# other\n\nsubmarines\n"})
    assert service.sync().added == ("memory/a.md",)


def test_status_names_a_missing_output(make_service: Callable[..., MemoryService]) -> None:
    service = make_service({"memory/a.md": GOOD})
    service.sync()
    (service.output_dir / "memory/a.aif-bin").unlink()
    (stale,) = service.status().stale
    assert stale.path == "memory/a.md" and "missing or damaged" in stale.reason
    assert service.sync().modified == ("memory/a.md",)


def test_output_dir_that_is_a_file_is_a_workspace_error(make_service: Callable[..., MemoryService]) -> None:
    service = make_service({"memory/a.md": GOOD, "out": "a file"}, output_dir="out")
    with pytest.raises(WorkspaceError, match="cannot create the output folder"):
        service.sync()
