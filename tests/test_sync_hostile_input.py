"""Issue 36: hostile or odd notes and names never stop a sync: an alias bomb in frontmatter, a file name that is
not UTF-8, a UTF-16 note, a folder named like an output; each odd note is named, every other note syncs."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable

from botbin import aifbin
from botbin.notes_io import extract_source
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest, SyncRequest
from conftest import FakeEmbedder, run_checker

GOOD = "# Good\n\nThe webhook retries use exponential backoff with jitter.\n"
Factory = Callable[..., MemoryService]


def laughs(levels: int, width: int = 9) -> str:
    """ "Billion laughs": each list holds ``width`` aliases of the one before; width ** (levels + 1) strings."""
    lines = ["a: &a [" + ", ".join(["lol"] * width) + "]"]
    for prev, name in itertools.pairwise("abcdefghijklmnop"[: levels + 1]):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * width) + "]")
    return "\n".join(lines) + "\n"


def _doc(service: MemoryService, out_rel: str) -> aifbin.AifBinDocument:
    path = service.output_dir / out_rel
    return aifbin.decode(path.read_bytes(), str(path))


def test_an_alias_bomb_keeps_its_body_and_the_rest_syncs(make_service: Factory) -> None:
    bomb = f"---\n{laughs(8)}---\n# Bomb\n\nThe body about zebrafish telemetry is still indexed.\n"
    service = make_service({"memory/bomb.md": bomb, "memory/good.md": GOOD})
    started = time.perf_counter()
    report = service.sync()
    # Before: a 374-byte bomb ran out of memory after two minutes and no note synced (a 339-byte one: a 200 MB file).
    assert time.perf_counter() - started < 20
    assert sorted(report.added) == ["memory/bomb.md", "memory/good.md"] and not report.failed
    assert [w for w in report.warnings if "bomb" in w] == [
        "memory/bomb.md:1: YAML frontmatter not loaded (over 100,000 values once its aliases are expanded); "
        "metadata ignored, body indexed"
    ]
    assert (service.output_dir / "memory/bomb.aif-bin").stat().st_size < 20_000
    assert _doc(service, "memory/bomb.aif-bin").metadata["frontmatter"] == {}
    assert (
        service.search(SearchRequest(query="zebrafish telemetry", k=1, show_all=True)).hits[0].path == "memory/bomb.md"
    )
    assert extract_source(service.output_dir / "memory/bomb.aif-bin") == bomb.encode()


def test_a_file_name_that_is_not_utf8_fails_alone(make_service: Factory) -> None:
    service = make_service({"memory/good.md": GOOD})
    with open(bytes(service.root / "memory") + b"/bad\xff\xfename.md", "wb") as note:
        note.write(b"# Bad\n\nbananas\n")
    report = service.sync()  # before: a TypeError from the tokenizer, and no note indexed
    assert report.added == ("memory/good.md",)
    assert [(f.path, f.reason) for f in report.failed] == [
        (
            "memory/bad\\xff\\xfename.md",
            "the file name is not valid UTF-8 (shown with its bytes escaped); rename it to index it",
        )
    ]
    json.dumps(report.to_dict(), ensure_ascii=False).encode()  # valid UTF-8 all through
    status = service.status()
    assert status.files == 1 and status.tracked == 1 and status.stale == ()
    assert any(w.startswith("memory/bad\\xff\\xfename.md: the file name is not valid UTF-8") for w in status.warnings)
    assert service.search(SearchRequest(query="webhook backoff", k=1, show_all=True)).hits[0].path == "memory/good.md"
    again = service.sync(
        SyncRequest(only=frozenset({"memory/good.md", "memory/bad\udcff\udcfename.md"}))
    )  # a watcher's names
    assert [f.path for f in again.failed] == ["memory/bad\\xff\\xfename.md"] and again.deleted == ()


def test_utf16_and_utf8_bom_notes_are_text_and_extract_exactly(make_service: Factory) -> None:
    text = "# Windows\r\n\r\nThe kiln schedule is on Fridays.\r\n\r\n## Glaze\r\n\r\nCeladon needs reduction.\r\n"
    notes = {
        "memory/le.md": "\ufeff".encode("utf-16-le") + text.encode("utf-16-le"),
        "memory/be.md": "\ufeff".encode("utf-16-be") + text.replace("kiln", "forge").encode("utf-16-be"),
        "memory/bom8.md": b"\xef\xbb\xbf" + text.replace("kiln", "oven").encode(),
    }
    service = make_service(notes)
    report = service.sync()  # before: UTF-16 notes were failed as binary files
    assert sorted(report.added) == sorted(notes) and not report.failed and not report.warnings
    for rel, data in notes.items():
        out = service.output_dir / (rel[:-3] + ".aif-bin")
        assert extract_source(out) == data
        chunks = _doc(service, rel[:-3] + ".aif-bin").chunks
        assert [(c.start_line, c.end_line) for c in chunks] == [(2, 3), (6, 7)]
    assert service.search(SearchRequest(query="forge schedule", k=1, show_all=True)).hits[0].path == "memory/be.md"
    assert service.search(SearchRequest(query="kiln schedule", k=1, show_all=True)).hits[0].path == "memory/le.md"
    assert run_checker(service.root, service.output_dir).returncode == 0


def test_a_note_beside_a_folder_named_like_its_output_is_indexed(make_service: Factory) -> None:
    service = make_service(
        {"memory/x.md": "# x\n\nElderberry wine.\n", "memory/x.aif-bin/y.md": "# y\n\nGrape must.\n"}
    )
    report = service.sync()  # before: "cannot write memory/aifbin/memory/x.aif-bin (Is a directory)"
    assert sorted(report.added) == ["memory/x.aif-bin/y.md", "memory/x.md"] and not report.failed
    assert (service.output_dir / "memory/x.aif-bin").is_file()
    assert (service.output_dir / "memory/x.aif-bin.d/y.aif-bin").is_file()
    assert service.search(SearchRequest(query="elderberry wine", k=1, show_all=True)).hits[0].path == "memory/x.md"
    assert service.search(SearchRequest(query="grape must", k=1, show_all=True)).hits[0].path == "memory/x.aif-bin/y.md"
    service.ws.state_path.unlink()  # a lost state file is rebuilt from the outputs, escaped folders included
    assert service.sync().deleted == () and service.status().stale == ()
    assert run_checker(service.root, service.output_dir).returncode == 0


def test_escaped_folders_are_told_apart(make_service: Factory) -> None:
    notes = {
        f"memory/{d}/n.md": f"# {d}\n\nnote {i}\n" for i, d in enumerate(["a.aif-bin", "a.aif-bin.d", "A.AIF-BIN"])
    }
    service = make_service({**notes, "memory/a.md": "# a\n\nplain\n", "memory/a.aif-bin.md": "# b\n\nplain too\n"})
    report = service.sync()
    assert len(report.added) == 5 and not report.failed
    outputs = {e.output for e in service.ws.state()[0].files.values()}
    assert len(outputs) == 5 and all((service.root / o).is_file() for o in outputs)


def test_a_store_written_before_the_escape_moves_and_the_blocked_note_syncs(
    make_service: Factory, fake_embedder: FakeEmbedder
) -> None:
    service = make_service({"memory/x.aif-bin/y.md": "# y\n\nGrape must.\n"})
    service.sync()
    # The layout the previous version wrote: the output folder memory/x.aif-bin/ as the note's folder is named.
    new, old = service.output_dir / "memory/x.aif-bin.d", service.output_dir / "memory/x.aif-bin"
    new.rename(old)
    state = json.loads(service.ws.state_path.read_text(encoding="utf-8"))
    state["files"]["memory/x.aif-bin/y.md"]["output"] = "memory/aifbin/memory/x.aif-bin/y.aif-bin"
    service.ws.state_path.write_text(json.dumps(state), encoding="utf-8")
    (service.root / "memory/x.md").write_text("# x\n\nElderberry wine.\n", encoding="utf-8")
    report = MemoryService(service.root, {}, embedder=fake_embedder, env={}).sync()
    assert report.added == ("memory/x.md",) and report.rechunked == ("memory/x.aif-bin/y.md",) and not report.failed
    assert report.chunks_embedded == 1  # x.md only: y.md's vectors came from its old output
    assert (service.output_dir / "memory/x.aif-bin").is_file() and (new / "y.aif-bin").is_file()
