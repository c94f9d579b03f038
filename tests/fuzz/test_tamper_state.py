"""Tampering with the state file (``sync-state.json``) and its journal (``sync-state.log``), through real syncs of
a small workspace (issue 36, failures 3 and 11): a hostile ``output`` never makes a sync or ``encrypt`` remove
or write a file outside the output folder, every field read back is checked (type, range, finite), and a bad one
means the state is rebuilt from the AIF-BIN files with one warning naming the file, never a crash, and no note
re-embedded. The canaries outside the workspace are checked after every case."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tamper_cases import (
    ANSWER,
    HOSTILE_NUMBERS,
    NOTES,
    OUTPUT_DIR,
    QUERY,
    Canaries,
    fresh,
    make_canaries,
    output_of,
    state_json,
    synced_workspace,
    with_field,
    write_state_text,
)

from botbin.service import MemoryService
from botbin.sync.documents import output_rel
from botbin.sync.state import STATE_FILE, load_state
from botbin.sync.state_log import log_path
from botbin.wire.requests import SearchRequest, SyncRequest
from conftest import FakeEmbedder

GONE = "memory/gone.md"


@pytest.fixture
def service(tmp_path: Path, fake_embedder: FakeEmbedder) -> MemoryService:
    return synced_workspace(tmp_path, fake_embedder)


@pytest.fixture
def canaries(tmp_path: Path, service: MemoryService) -> Canaries:
    return make_canaries(tmp_path / "outside", output_of(service, ANSWER).read_bytes())


def _hostile_outputs(service: MemoryService, canaries: Canaries) -> dict[str, str]:
    """``output`` values a tampered entry may hold, each naming a file that is not the note's output."""
    root = service.root
    return {
        "absolute": str(canaries.text),
        "absolute-aifbin": str(canaries.aifbin),
        "dot-dot": os.path.relpath(canaries.text, root),
        "dot-dot-inside-prefix": f"{OUTPUT_DIR}/../../{os.path.relpath(canaries.aifbin, root)}",
        "another-note": output_rel(ANSWER, OUTPUT_DIR),
        "the-state-file": f"{OUTPUT_DIR}/{STATE_FILE}",
        "a-note": "MEMORY.md",
    }


def _plant(service: MemoryService, rel: str, output: str) -> None:
    data = state_json(service)
    entry = dict(data["files"][ANSWER])
    entry["output"] = output
    data["files"][rel] = entry
    write_state_text(service, json.dumps(data))


def _one_warning_naming(warnings: tuple[str, ...] | list[str], path: Path) -> str:
    named = [w for w in warnings if str(path) in w]
    assert len(named) == 1, warnings
    return named[0]


def _intact(service: MemoryService, embedder: FakeEmbedder) -> None:
    """Every note still indexed and found, nothing re-embedded since the workspace was synced."""
    before = embedder.embedded
    report = service.sync()
    assert not report.failed and report.changed is False, report
    assert embedder.embedded == before
    assert set(state_json(service)["files"]) == set(NOTES)
    assert [h.path for h in fresh(service, embedder).search(SearchRequest(query=QUERY, k=1, show_all=True)).hits] == [
        ANSWER
    ]


@pytest.mark.parametrize("case", ["absolute", "absolute-aifbin", "dot-dot", "dot-dot-inside-prefix", "another-note"])
def test_a_vanished_notes_hostile_output_is_never_removed(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder, case: str
) -> None:
    """Failure 3: an entry for a note that is gone, whose output names a file elsewhere: the sync used to
    report "1 deleted" and remove that file."""
    output = _hostile_outputs(service, canaries)[case]
    _plant(service, GONE, output)
    answer = output_of(service, ANSWER).read_bytes()
    report = fresh(service, fake_embedder).sync()
    assert report.deleted == () and not report.failed
    warning = _one_warning_naming(report.warnings, service.output_dir / STATE_FILE)
    assert "output" in warning and "rebuilt from 3 AIF-BIN files" in warning
    canaries.untouched()
    assert output_of(service, ANSWER).read_bytes() == answer  # another note's output is left alone too
    _intact(service, fake_embedder)


@pytest.mark.parametrize("case", ["absolute", "dot-dot", "another-note", "the-state-file", "a-note"])
def test_an_existing_notes_hostile_output_is_never_read_written_or_removed(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder, case: str
) -> None:
    _plant(service, "MEMORY.md", _hostile_outputs(service, canaries)[case])
    note = (service.root / "MEMORY.md").read_bytes()
    report = fresh(service, fake_embedder).sync(SyncRequest(full=True))
    _one_warning_naming(report.warnings, service.output_dir / STATE_FILE)
    canaries.untouched()
    assert (service.root / "MEMORY.md").read_bytes() == note
    _intact(service, fake_embedder)


def test_encrypt_never_removes_a_file_a_hostile_entry_names(
    tmp_path: Path, service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder
) -> None:
    """Failure 3: ``botbin encrypt`` removed a non-AIF-BIN file named by an existing note's entry."""
    (service.root / "botbin.toml").write_text("kdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n")
    _plant(service, ANSWER, str(canaries.text))
    locked = MemoryService(service.root, embedder=fake_embedder, env={}, passphrase=lambda: "hunter2 horse")
    report = locked.sync(SyncRequest(encryption="encrypt"))
    assert not report.failed
    _one_warning_naming(report.warnings, service.output_dir / STATE_FILE)
    canaries.untouched()
    assert [h.path for h in locked.search(SearchRequest(query=QUERY, k=1, show_all=True)).hits] == [ANSWER]


def test_a_non_aifbin_file_at_a_vanished_notes_output_is_left_with_a_warning(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder
) -> None:
    """botbin removes only what it can prove it wrote: a file at the mirrored path without the AIF-BIN magic
    (a user's own file in the output folder) stays."""
    mine = service.output_dir / "memory" / "gone.aif-bin"
    mine.write_text("my own notes, not botbin's\n")
    data = state_json(service)
    data["files"][GONE] = {**data["files"][ANSWER], "output": output_rel(GONE, OUTPUT_DIR)}
    write_state_text(service, json.dumps(data))
    report = fresh(service, fake_embedder).sync()
    assert report.deleted == (GONE,)
    assert mine.read_text() == "my own notes, not botbin's\n"
    assert any(str(mine) in w and "not an AIF-BIN file" in w for w in report.warnings), report.warnings
    canaries.untouched()


#: The fields whose legal range includes any negative number (a file dated before 1970): "-5" is legal there.
TIME_FIELDS = ("mtime_ns", "ctime_ns", "output_ctime_ns")


@pytest.mark.parametrize("field", ["chunks", "size", "mtime_ns", "output_bytes", "ino", "ctime_ns", "output_ctime_ns"])
@pytest.mark.parametrize("number", sorted(HOSTILE_NUMBERS))
def test_every_hostile_number_in_every_entry_field_is_refused(service: MemoryService, field: str, number: str) -> None:
    path = service.output_dir / STATE_FILE
    path.write_text(with_field(path.read_text(), ANSWER, field, HOSTILE_NUMBERS[number]))
    state, warnings = load_state(path, OUTPUT_DIR)
    assert set(state.files) == set(NOTES)
    if number == "negative" and field in TIME_FIELDS:
        assert warnings == [] and getattr(state.files[ANSWER], field) == -5
        return
    warning = _one_warning_naming(warnings, path)
    assert "rebuilt from 3 AIF-BIN files" in warning and ("bad value" in warning or "unreadable" in warning)


@pytest.mark.parametrize("number", ["infinity", "1e999", "4301-digit", "nan", "2**64"])
def test_sync_status_and_search_survive_a_hostile_number(
    service: MemoryService, fake_embedder: FakeEmbedder, number: str
) -> None:
    """Failure 11: Infinity, 1e999 or a 4,300-digit integer crashed sync, status and search; the README promises
    a damaged state file is rebuilt."""
    path = service.output_dir / STATE_FILE
    text = with_field(path.read_text(), ANSWER, "chunks", HOSTILE_NUMBERS[number])
    for action in ("status", "search", "sync"):
        path.write_text(text)
        reader = fresh(service, fake_embedder)
        if action == "status":
            _one_warning_naming(reader.status().warnings, path)
        elif action == "search":
            assert [h.path for h in reader.search(SearchRequest(query=QUERY, k=1, show_all=True)).hits] == [ANSWER]
        else:
            report = reader.sync()
            assert report.deleted == () and not report.failed
            _one_warning_naming(report.warnings, path)
    _intact(service, fake_embedder)


@pytest.mark.parametrize(
    "header",
    [
        {"chunker": {"target_tokens": "Infinity"}},
        {"chunker": {"target_tokens": 2**40}},
        {"chunker": [1, 2]},
        {"model": ["a"]},
        {"version": 1.5},
        {"encrypted": "yes"},
        {"last_sync": 5},
        {"log_id": "../../etc"},
    ],
)
def test_a_hostile_header_means_a_rebuild(service: MemoryService, fake_embedder: FakeEmbedder, header: dict) -> None:
    data = state_json(service)
    data.update(header)
    path = write_state_text(service, json.dumps(data))
    state, warnings = load_state(path, OUTPUT_DIR)
    assert set(state.files) == set(NOTES)
    _one_warning_naming(warnings, path)
    _intact(service, fake_embedder)


@pytest.mark.parametrize(
    "text",
    [
        '{"version": 2, "files": {"MEMORY.md": ' + "[" * 100_000 + "]" * 100_000 + "}}",  # RecursionError
        '{"version": 2, "files": {"../../../etc/passwd.md": {}}}',
        '{"version": 2, "files": {"/etc/passwd.md": {"hash": "0"}}}',
        '{"version": 2, "files": {"MEMORY.md": "not an entry"}}',
        '{"version": 2, "files": []}',
        "[]",
        "\xff\xfe not utf-8",
        "",
    ],
    ids=["deep", "dot-dot-key", "absolute-key", "string-entry", "files-list", "list", "not-utf8", "empty"],
)
def test_a_malformed_state_file_is_rebuilt(service: MemoryService, fake_embedder: FakeEmbedder, text: str) -> None:
    path = service.output_dir / STATE_FILE
    path.write_bytes(text.encode("utf-8", "surrogateescape") if text != "\xff\xfe not utf-8" else b"\xff\xfe x")
    state, warnings = load_state(path, OUTPUT_DIR)
    assert set(state.files) == set(NOTES)
    _one_warning_naming(warnings, path)
    _intact(service, fake_embedder)


# -- the journal ----------------------------------------------------------------------------------------------
def _journaled(service: MemoryService) -> Path:
    """The workspace after a note-level sync, whose entry went to the journal."""
    (service.root / ANSWER).write_text(NOTES[ANSWER] + "\nA second fact about the pool.\n")
    assert service.sync(SyncRequest(only=frozenset([ANSWER]))).modified == (ANSWER,)
    journal = log_path(service.output_dir / STATE_FILE)
    assert journal.is_file()
    return journal


@pytest.mark.parametrize(
    "mutate",
    [
        lambda line: {**line, "files": {GONE: {**line["files"][ANSWER], "output": "/etc/passwd"}}},
        lambda line: {**line, "files": {"../../x.md": None}},
        lambda line: {**line, "files": {ANSWER: {**line["files"][ANSWER], "chunks": "@@"}}},
        lambda line: {**line, "files": [1]},
        lambda line: {**line, "header": {"encrypted": 1}},
        lambda line: [line["base"]],
    ],
    ids=["hostile-output", "dot-dot-removal", "infinite-chunks", "files-list", "bad-header", "not-an-object"],
)
def test_a_hostile_journal_line_means_a_rebuild(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder, mutate
) -> None:
    journal = _journaled(service)
    line = json.loads(journal.read_text().splitlines()[-1])
    text = json.dumps(mutate(line)).replace('"@@"', "Infinity")
    journal.write_text(journal.read_text() + text + "\n")
    state, warnings = load_state(service.output_dir / STATE_FILE, OUTPUT_DIR)
    assert set(state.files) == set(NOTES)
    warning = _one_warning_naming(warnings, journal)
    assert "bad value" in warning
    report = fresh(service, fake_embedder).sync()
    assert report.deleted == () and not report.failed
    canaries.untouched()


def test_a_torn_last_journal_line_is_skipped_quietly(service: MemoryService, fake_embedder: FakeEmbedder) -> None:
    """A kill mid-append leaves a line cut short: not tampering, so no rebuild and no warning."""
    journal = _journaled(service)
    journal.write_text(journal.read_text() + '{"base": "ab", "files": {"MEMO')
    state, warnings = load_state(service.output_dir / STATE_FILE, OUTPUT_DIR)
    assert warnings == [] and set(state.files) == set(NOTES)


def test_a_journal_planted_as_a_link_is_never_written_through(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder
) -> None:
    journal = _journaled(service)
    journal.unlink()
    journal.symlink_to(canaries.text)
    (service.root / ANSWER).write_text(NOTES[ANSWER] + "\nA third fact.\n")
    writer = fresh(service, fake_embedder)
    assert writer.sync(SyncRequest(only=frozenset([ANSWER]))).modified == (ANSWER,)
    canaries.untouched()
    assert not journal.is_symlink()  # the state file was written whole instead, and the link dropped
    assert [
        h.path for h in fresh(service, fake_embedder).search(SearchRequest(query="third fact", k=1, show_all=True)).hits
    ] == [ANSWER]


def test_a_state_file_planted_as_a_link_out_is_not_read_and_not_written_through(
    service: MemoryService, canaries: Canaries, fake_embedder: FakeEmbedder
) -> None:
    path = service.output_dir / STATE_FILE
    path.unlink()
    path.symlink_to(canaries.text)
    state, warnings = load_state(path, OUTPUT_DIR)
    assert set(state.files) == set(NOTES)
    assert "symbolic link" in _one_warning_naming(warnings, path)
    report = fresh(service, fake_embedder).sync()
    assert not report.failed and not path.is_symlink()
    canaries.untouched()


# -- fuzz: any JSON value anywhere ------------------------------------------------------------------------------
JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["/etc/passwd", "../../x", "memory/aifbin/../../../x", "MEMORY.md", "\x00", "a" * 5000]),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
FUZZ = settings(max_examples=200, deadline=None, database=None, derandomize=True)


@pytest.fixture(scope="module")
def fuzz_state(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(state file, its text) of a workspace synced once for the fuzz loop."""
    service = synced_workspace(tmp_path_factory.mktemp("fuzz-state"), FakeEmbedder())
    path = service.output_dir / STATE_FILE
    return path, path.read_text()


@FUZZ
@given(data=st.data())
def test_fuzz_any_value_anywhere_in_the_state_file(fuzz_state: tuple[Path, str], data: st.DataObject) -> None:
    """One field of the state file (an entry's, the header's, a note path, the files map) replaced by any JSON
    value: the reader never raises, warns at most once naming the file, and what it returns is safe: every
    entry's output is its note's mirrored path, every number an integer."""
    path, text = fuzz_state
    raw = json.loads(text)
    where = data.draw(st.sampled_from(["entry", "header", "key", "files"]))
    if where == "entry":
        rel = data.draw(st.sampled_from(sorted(raw["files"])))
        raw["files"][rel][data.draw(st.sampled_from([*raw["files"][rel], "unknown"]))] = data.draw(JSON_VALUES)
    elif where == "header":
        raw[data.draw(st.sampled_from(["version", "model", "chunker", "last_sync", "encrypted", "log_id"]))] = (
            data.draw(JSON_VALUES)
        )
    elif where == "key":
        key = data.draw(st.sampled_from(["/abs.md", "../up.md", "a//b.md", "./a.md", "x/../y.md", "\x00.md", "a.md"]))
        raw["files"][key] = raw["files"].pop(ANSWER)
    else:
        raw["files"] = data.draw(JSON_VALUES)
    path.write_text(json.dumps(raw))
    state, warnings = load_state(path, OUTPUT_DIR)
    assert len(warnings) <= 1 and all(str(path) in w for w in warnings)
    for rel, entry in state.files.items():
        assert entry.output == output_rel(rel, OUTPUT_DIR) and ".." not in rel.split("/")
        assert all(type(getattr(entry, f)) is int for f in ("chunks", "size", "mtime_ns", "ino", "output_bytes"))
