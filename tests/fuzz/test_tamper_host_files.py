"""Tampering with the host files read back from the output folder (issue 36, the host ops): the turn journal
(``pending-turns.jsonl``) and the captured-turn ledger (``captured-turns.jsonl``). A damaged, mistyped, too deep or
planted line is skipped with a warning naming the file, and the capture goes on: the next turn is captured (before,
one bad line failed every later ingest of the workspace, for good). A link or a FIFO put at their names is replaced,
never written through nor waited on; ``expand`` reads no turn from a source that is no ``.jsonl`` transcript, a
device or a FIFO. What a host sends is mended, never refused: a NUL or a lone surrogate no longer stops a capture."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tamper_cases import Canaries, make_canaries

from botbin.agent.journal import JOURNAL_FILE
from botbin.agent.ledger import LEDGER_FILE
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from conftest import FakeEmbedder, write_notes

FAST_S = 30.0
"""A call that takes longer hangs (on a FIFO, a device)."""


@dataclass(frozen=True)
class Said:
    role: str
    content: str
    id: str | None = None
    timestamp: str | None = None
    session: str | None = "s1"
    name: str | None = None


FACT = Said("user", "The copper kettle in the staff kitchen whistles in F sharp.", "fact-1")
LATER = Said("user", "The heronpike migrates north every April, past the old weir.", "later-1")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "ws", {"MEMORY.md": "# Memory\n\n- The build server is called hammerhead.\n"})


@pytest.fixture
def canaries(tmp_path: Path) -> Canaries:
    return make_canaries(tmp_path / "outside", b"AIFB\x02\x00\x00\x00")


def service(root: Path, embedder: FakeEmbedder) -> MemoryService:
    memory = MemoryService(root, {}, embedder=embedder, env={})
    memory.sync()
    return memory


def in_time(call: Callable[[], object]) -> object:
    """``call()``'s result; fails the test when it takes over FAST_S seconds (it would hang the host's turn)."""
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(call()), daemon=True)
    worker.start()
    worker.join(FAST_S)
    assert not worker.is_alive(), "the call hangs"
    assert done, "the call raised"
    return done[0]


def soul(root: Path) -> str:
    return (root / "memory" / "soul" / "user.md").read_text(encoding="utf-8")


JOURNAL_LINES = {
    "content-number": b'{"id":"x1","role":"user","content":123,"user":"user"}',
    "user-list": b'{"id":"x2","role":"user","content":"hi there","user":["a"]}',
    "deep": b"[" * 50_000 + b"]" * 50_000,
    "role-empty": b'{"id":"x3","role":"","content":"hello","user":"user"}',
    "nul-content": b'{"id":"x4","role":"user","content":"the \\u0000 kiln","user":"user"}',
    "surrogate-content": b'{"id":"x5","role":"user","content":"the \\ud800 kiln","user":"user"}',
    "extra-field": b'{"id":"x6","role":"user","content":"hello","user":"user","evil":1}',
    "sealed-garbage": b"sealed:v1:AAAA",
    "not-an-object": b'"just a string"',
    "huge-line": b'{"id":"x7","role":"user","content":"' + b"a" * (5 << 20) + b'","user":"user"}',
}


@pytest.mark.parametrize("line", JOURNAL_LINES.values(), ids=JOURNAL_LINES.keys())
def test_a_bad_journal_line_is_skipped_and_the_capture_goes_on(
    root: Path, fake_embedder: FakeEmbedder, line: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    memory = service(root, fake_embedder)
    (memory.output_dir / JOURNAL_FILE).write_bytes(line + b"\n")
    report = memory.hosts.capture.ingest([FACT], flush=True)
    assert report.accepted == 1 and "copper kettle" in soul(root)
    assert "\x00" not in soul(root)  # a mended line stays a note a sync indexes
    assert not memory.sync().failed


LEDGER_LINES = {
    "deep": b"[" * 50_000 + b"]" * 50_000,
    "turn-huge": b'{"id":"y1","soul":"memory/soul/user.md","turn":' + b"9" * 5000 + b',"source":null}',
    "turn-float": b'{"id":"y2","soul":"memory/soul/user.md","turn":1.5,"source":null}',
    "soul-outside": b'{"id":"y3","soul":"../../etc/passwd.md","turn":1,"source":null}',
    "source-number": b'{"id":"y4","soul":"memory/soul/user.md","turn":1,"source":5}',
    "id-empty": b'{"id":"","soul":"memory/soul/user.md","turn":1,"source":null}',
}


@pytest.mark.parametrize("line", LEDGER_LINES.values(), ids=LEDGER_LINES.keys())
def test_a_bad_ledger_line_is_skipped_and_the_capture_goes_on(
    root: Path, fake_embedder: FakeEmbedder, line: bytes
) -> None:
    memory = service(root, fake_embedder)
    (memory.output_dir / LEDGER_FILE).write_bytes(line + b"\n")
    report = memory.hosts.capture.ingest([FACT], flush=True)
    assert report.accepted == 1 and "copper kettle" in soul(root)
    assert memory.hosts.capture.ingest([FACT], flush=True).duplicates == 1  # and the ledger still works


@pytest.mark.parametrize("name", [JOURNAL_FILE, LEDGER_FILE])
@pytest.mark.parametrize("planted", ["link-out", "fifo"])
def test_a_link_or_fifo_at_a_host_file_is_replaced_never_written_through_nor_waited_on(
    root: Path, fake_embedder: FakeEmbedder, canaries: Canaries, name: str, planted: str
) -> None:
    memory = service(root, fake_embedder)
    path = memory.output_dir / name
    if planted == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(canaries.text)
    capture = memory.hosts.capture
    in_time(lambda: capture.ingest([FACT]))
    in_time(lambda: capture.ingest([LATER], flush=True))
    assert "copper kettle" in soul(root) and "heronpike" in soul(root)
    assert path.is_file() and not path.is_symlink()
    canaries.untouched()


@pytest.mark.parametrize("source", ["secret", "fifo", "/dev/zero", "relative.jsonl"])
def test_expand_reads_no_turn_from_a_planted_source(
    root: Path, tmp_path: Path, fake_embedder: FakeEmbedder, source: str
) -> None:
    memory = service(root, fake_embedder)
    hosts = memory.hosts
    hosts.capture.ingest([FACT], flush=True)
    item = hosts.recall("copper kettle whistles", 300).items[0]
    secret = tmp_path / "secret.txt"
    secret.write_text(json.dumps({"uuid": "fact-1", "message": {"role": "user", "content": "SECRET"}}) + "\n")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    path = {"secret": str(secret), "fifo": str(fifo)}.get(source, source)
    line = {"id": "fact-1", "soul": "memory/soul/user.md", "turn": 1, "source": path}
    (memory.output_dir / LEDGER_FILE).write_text(json.dumps(line) + "\n")
    fresh = MemoryService(root, {}, embedder=fake_embedder, env={}).hosts  # reads the planted ledger
    found = in_time(lambda: fresh.expand(item.id))
    assert found.path == "memory/soul/user.md" and found.turns == ()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "said",
    [
        Said("user", "The \x00 boiler room key hangs by the door.", "m1"),
        Said("user", "The \ud800 boiler room key hangs by the door.", "m2"),
        Said("user\x00", "The boiler room key hangs by the door.", "m3", session="s\x00", name="E\x00ve"),
        Said("user", "The boiler room key hangs by the door.", "m4\ud800", timestamp="\ud800"),
    ],
    ids=["nul-content", "surrogate-content", "nul-labels", "surrogate-id"],
)
def test_a_host_turn_that_is_not_text_is_mended_and_blocks_no_later_turn(
    root: Path, fake_embedder: FakeEmbedder, said: Said
) -> None:
    memory = service(root, fake_embedder)
    capture = memory.hosts.capture
    assert capture.ingest([said], flush=True).accepted == 1
    assert capture.ingest([LATER], flush=True).accepted == 1
    text = soul(root)
    assert "boiler room key" in text and "heronpike" in text and "\x00" not in text
    assert not memory.sync().failed
    assert "boiler room" in memory.search(SearchRequest(query="boiler room key", k=1, show_all=True)).hits[0].text


@pytest.mark.parametrize("user", ["a\x00b", "\x00", "x\ud800y"])
def test_a_user_name_that_is_not_text_never_makes_a_soul_file_binary(
    root: Path, fake_embedder: FakeEmbedder, user: str
) -> None:
    memory = service(root, fake_embedder)
    report = memory.hosts.capture.ingest([FACT], user=user, flush=True)
    (written,) = report.written
    assert b"\x00" not in (root / written).read_bytes()
    assert not memory.sync().failed
