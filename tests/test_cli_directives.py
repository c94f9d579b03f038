"""Directives end to end: sync writes kinds and directives into AIF-BIN; `botbin directives`, `status`, `search --kind`.

The CLI runs as a subprocess, as in test_cli.py, but through a launcher that gives MemoryService the fast
FakeEmbedder (the real model has its own tests), so every command here takes well under a second.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from botbin import aifbin
from botbin.chunking import PARTITION_VERSION, ChunkerParams
from botbin.directives.partition import partition_source
from botbin.embedding import WordPieceCounter, resolve_model
from botbin.service import MemoryService
from botbin.sync.documents import prepare_note
from botbin.sync.state import STATE_FILE
from conftest import FakeEmbedder, run_checker

TESTS = Path(__file__).parent
WORKSPACE = TESTS / "fixtures" / "directives" / "workspace"
_LAUNCHER = f"""import sys
sys.path.insert(0, {str(TESTS)!r})
import botbin.cli
import botbin.cli.common
from botbin.service import MemoryService
from conftest import FakeEmbedder


class FakeService(MemoryService):
    def __init__(self, workspace, overrides=None, embedder=None, env=None, **options):
        super().__init__(workspace, overrides, embedder or FakeEmbedder(), env, **options)


botbin.cli.common.MemoryService = FakeService
sys.exit(botbin.cli.main(sys.argv[1:]))
"""


def botbin(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``botbin ARGS`` in ``cwd``, with the FakeEmbedder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}
    return subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
        timeout=120,
    )


def ok(*args: str, cwd: Path) -> str:
    """stdout of a ``botbin ARGS`` that must succeed with nothing on stderr."""
    done = botbin(*args, cwd=cwd)
    assert done.returncode == 0 and done.stderr == "", (args, done.returncode, done.stderr)
    return done.stdout


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture workspace (AGENTS.md, a daily note, a style note), synced once by the CLI."""
    root = tmp_path_factory.mktemp("directives") / "ws"
    shutil.copytree(WORKSPACE, root)
    report = json.loads(ok("sync", "--json", cwd=root))
    assert sorted(report["added"]) == ["AGENTS.md", "memory/2026-11-03.md", "memory/style.md"]
    return root


def document(ws: Path, rel: str) -> aifbin.AifBinDocument:
    out = ws / "memory" / "aifbin" / (rel[:-3] + ".aif-bin")
    return aifbin.decode(out.read_bytes(), str(out))


def block_kinds(ws: Path, rel: str, start: int, end: int) -> set[str]:
    """Kinds of the blocks of note ``rel`` that overlap lines [start, end)."""
    note, part = partition_source((ws / rel).read_text(encoding="utf-8"), rel)
    return {k for b, k in zip(note.blocks, part.kinds, strict=True) if b.start_line < end and start < b.end_line}


def test_aifbin_chunks_carry_kinds_and_directives(ws: Path) -> None:
    memory = document(ws, "AGENTS.md")
    assert {c.kind for c in memory.chunks} == {"hard", "soft", "lore"}
    assert memory.metadata["instruction"] is True
    assert memory.metadata["chunker"]["partition"] == PARTITION_VERSION
    raw = memory.metadata["directives"]
    assert [(d["kind"], d["start_line"]) for d in raw] == [
        ("hard", 11),
        ("hard", 12),
        ("hard", 13),
        ("soft", 15),
        ("soft", 17),
    ]
    assert raw[0]["cues"] == [
        {"modality": "obligation", "cue": "Always", "line": 11, "positive": True, "action": "use tabs for indentation."}
    ]
    daily = document(ws, "memory/2026-11-03.md")
    assert daily.metadata["instruction"] is False
    # "- Ask Dana before ..." is a bare imperative: a rule only in an instruction note (issue 19)
    assert [(d["kind"], d["start_line"]) for d in daily.metadata["directives"]] == [("soft", 4)]
    checked = run_checker(ws, ws / "memory" / "aifbin")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_instruction_rules_never_share_a_chunk_with_lore(ws: Path) -> None:
    for chunk in document(ws, "AGENTS.md").chunks:
        assert block_kinds(ws, "AGENTS.md", chunk.start_line, chunk.end_line) == {chunk.kind}, chunk
    # an ordinary note merges small blocks of any kind, and the chunk takes the highest kind
    mixed = [
        c
        for c in document(ws, "memory/2026-11-03.md").chunks
        if len(block_kinds(ws, "memory/2026-11-03.md", c.start_line, c.end_line)) > 1
    ]
    assert mixed and all(c.kind == "soft" for c in mixed)


def test_same_text_as_an_ordinary_note_mixes_kinds_in_a_chunk() -> None:
    """The split in AGENTS.md comes from it being an instruction note: the same text elsewhere merges its blocks."""
    data = (WORKSPACE / "AGENTS.md").read_bytes()
    counter = WordPieceCounter(resolve_model(None).path)
    for rel, instruction in (("AGENTS.md", True), ("memory/copy.md", False)):
        prep = prepare_note(rel, data, counter, ChunkerParams())
        assert prep.partition.instruction is instruction
        mixed = [
            c
            for c in prep.chunks
            if len(
                {
                    k
                    for b, k in zip(prep.note.blocks, prep.partition.kinds, strict=True)
                    if b.start_line < c.end_line and c.start_line < b.end_line
                }
            )
            > 1
        ]
        assert bool(mixed) is not instruction, (rel, prep.chunks)


def test_directives_json_lists_rules_with_0_based_lines(ws: Path) -> None:
    out = json.loads(ok("directives", "--json", cwd=ws))
    listed = [(d["path"], d["start_line"], d["end_line"], d["kind"], d["modality"]) for d in out["directives"]]
    assert listed == [
        ("AGENTS.md", 11, 12, "hard", "obligation"),
        ("AGENTS.md", 12, 13, "hard", "prohibition"),
        ("AGENTS.md", 13, 14, "hard", None),
        ("AGENTS.md", 15, 16, "soft", "recommendation"),
        ("AGENTS.md", 17, 18, "soft", "obligation"),
        ("memory/2026-11-03.md", 4, 5, "soft", "prohibition"),
        ("memory/style.md", 4, 5, "soft", "prohibition"),
    ]
    lines = (ws / "AGENTS.md").read_text(encoding="utf-8").split("\n")
    for d in out["directives"]:
        if d["path"] == "AGENTS.md":
            assert d["text"] == "\n".join(lines[d["start_line"] : d["end_line"]])
            assert all(c["cue"] in lines[c["line"]] for c in d["cues"])
    (conflict,) = out["conflicts"]
    assert conflict["action"] == "use tabs for indentation"
    assert (conflict["first"]["path"], conflict["first"]["line"]) == ("AGENTS.md", 11)
    assert (conflict["second"]["path"], conflict["second"]["line"]) == ("memory/style.md", 4)


def test_directives_text_output_is_1_based(ws: Path) -> None:
    out = ok("directives", cwd=ws).splitlines()
    assert out[0] == 'AGENTS.md:12  hard  obligation  "Always"  - Always use tabs for indentation.'
    assert "AGENTS.md:14  hard  rule  -  - Dates are ISO 8601." in out
    assert out[-2:] == [
        "1 conflicts:",
        '  "Always use tabs for indentation" (AGENTS.md:12) conflicts with '
        '"Never use tabs for indentation" (memory/style.md:5)',
    ]


def test_directives_of_a_folder_or_note(ws: Path) -> None:
    folder = json.loads(ok("directives", "memory/", "--json", cwd=ws))
    assert {d["path"] for d in folder["directives"]} == {"memory/2026-11-03.md", "memory/style.md"}
    assert len(folder["conflicts"]) == 1  # it involves memory/style.md
    note = json.loads(ok("directives", "memory/2026-11-03.md", "--json", "--workspace", str(ws), cwd=ws.parent))
    assert {d["path"] for d in note["directives"]} == {"memory/2026-11-03.md"} and note["conflicts"] == []
    from_inside = json.loads(ok("directives", "style.md", "--json", "--workspace", str(ws), cwd=ws / "memory"))
    assert [d["path"] for d in from_inside["directives"]] == ["memory/style.md"]


def test_unsynced_note_is_parsed_on_the_spot(ws: Path) -> None:
    notes = ws / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "AGENTS.md").write_text(
        "# Agents\n\nBackground.\n\n- Use tabs for indentation.\n- Sign commits.\n", encoding="utf-8"
    )
    out = json.loads(ok("directives", "notes/AGENTS.md", "--json", cwd=ws))
    assert [(d["path"], d["kind"], d["start_line"]) for d in out["directives"]] == [
        ("notes/AGENTS.md", "hard", 4),
        ("notes/AGENTS.md", "hard", 5),
    ]
    assert [(c["first"]["path"], c["second"]["path"]) for c in out["conflicts"]] == [
        ("notes/AGENTS.md", "memory/style.md")
    ]
    missing = botbin("directives", "notes/missing.md", cwd=ws)
    assert missing.returncode == 2 and "notes/missing.md" in missing.stderr and "Traceback" not in missing.stderr


def test_status_shows_conflicts(ws: Path) -> None:
    text = ok("status", cwd=ws)
    assert "conflicts:   1\n" in text
    assert (
        '  "Always use tabs for indentation" (AGENTS.md:12) conflicts with "Never use tabs for indentation" '
        "(memory/style.md:5)"
    ) in text
    status = json.loads(ok("status", "--json", cwd=ws))
    assert [c["action"] for c in status["conflicts"]] == ["use tabs for indentation"]


def test_search_kind_returns_only_that_kind(ws: Path) -> None:
    query = (
        "search",
        "tabs indentation push main commits linter billing",
        "--json",
        "-k",
        "30",
        "--per-note",
        "0",
        "--all",
    )
    everything = json.loads(ok(*query, cwd=ws))["hits"]
    for kind in ("hard", "soft", "lore"):
        hits = json.loads(ok(*query, "--kind", kind, cwd=ws))["hits"]
        assert hits and {h["kind"] for h in hits} == {kind}, kind
        where = {(h["path"], h["startLine"]) for h in everything if h["kind"] == kind}
        assert {(h["path"], h["startLine"]) for h in hits} == where  # every chunk of the kind, nothing else


def test_search_kind_rejects_other_values(ws: Path) -> None:
    bad = botbin("search", "tabs", "--kind", "rule", cwd=ws)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_partition_version_change_rechunks_without_reembedding(
    make_service: Callable[..., MemoryService], fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = {p.relative_to(WORKSPACE).as_posix(): p.read_text(encoding="utf-8") for p in WORKSPACE.rglob("*.md")}
    service = make_service(notes)
    first = service.sync()
    state = json.loads((service.output_dir / STATE_FILE).read_text())
    assert state["chunker"]["partition"] == PARTITION_VERSION
    embedded = fake_embedder.embedded
    assert embedded == first.chunks_embedded > 0

    monkeypatch.setattr("botbin.chunking.PARTITION_VERSION", PARTITION_VERSION + 1)
    report = service.sync()
    assert sorted(report.modified) == sorted(notes)
    assert report.chunks_embedded == 0 and fake_embedder.embedded == embedded
    assert report.chunks_reused == first.chunks_embedded
    state = json.loads((service.output_dir / STATE_FILE).read_text())
    assert state["chunker"]["partition"] == PARTITION_VERSION + 1
    assert document(service.root, "AGENTS.md").metadata["chunker"]["partition"] == PARTITION_VERSION + 1
    assert not service.sync().changed


def test_service_directives_report(make_service: Callable[..., MemoryService]) -> None:
    service = make_service(
        {
            "AGENTS.md": "- Always use tabs.\n",
            "memory/a.md": "Never use tabs.\n",
            "memory/b.md": "The weather was fine.\n",
        }
    )
    assert service.status().conflicts == ()  # nothing indexed yet
    service.sync()
    report = service.directives()
    assert [(d.path, d.kind) for d in report.directives] == [("AGENTS.md", "hard"), ("memory/a.md", "soft")]
    assert [c.action for c in report.conflicts] == ["use tabs"]
    assert service.directives("memory/b.md").directives == []
    assert [c.action for c in service.status().conflicts] == ["use tabs"]


def test_directive_lines_show_the_rule_not_markup(capsys: pytest.CaptureFixture[str]) -> None:
    from botbin.agent.rules import DirectiveReport
    from botbin.cli.output import print_directives
    from botbin.directives.partition import Directive

    callout = Directive("AGENTS.md", "soft", "> [!note] Rules\n> Never push to main.", 4, 6, (), ())
    front = Directive("AGENTS.md", "hard", "---\nbotbin: instructions\nlanguage: en\n---", 0, 4, (), ())
    single = Directive("AGENTS.md", "hard", "- Use tabs.", 8, 9, (), ())
    print_directives(DirectiveReport([front, callout, single], []))
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("botbin: instructions") and out[0].startswith("AGENTS.md:1-4 ")
    assert out[1].endswith("> Never push to main.")
    assert out[2].startswith("AGENTS.md:9 ")
