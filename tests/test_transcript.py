"""The Claude Code transcript reader (cli/transcript.py) on a transcript the real Claude Code 2.1.332 wrote
(tests/fixtures/claude-code/compacted-session.jsonl: four turns, a resume, then /compact): the conversation's turns
only, each once across reads, a compaction's summary and command echoes left out, a partial last line left for the
next read, a replaced file read from its start."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from botbin.cli.transcript import MAX_TURN_CHARS, read_new, turn_of
from conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "claude-code" / "compacted-session.jsonl"


def line(obj: dict[str, object]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def user(uuid: str, content: object, **flags: object) -> dict[str, object]:
    return {"type": "user", "uuid": uuid, "sessionId": "s", "message": {"role": "user", "content": content}, **flags}


def assistant(uuid: str, content: object) -> dict[str, object]:
    return {"type": "assistant", "uuid": uuid, "sessionId": "s", "message": {"role": "assistant", "content": content}}


def test_the_real_transcript_gives_its_eight_turns_and_not_the_compaction() -> None:
    read = read_new(FIXTURE, 0)
    assert [(t.role, t.content) for t in read.turns] == [
        (role, text)
        for word in ("one", "two", "three", "four")
        for role, text in (("user", word), ("assistant", "Scripted reply."))
    ]
    assert read.end == FIXTURE.stat().st_size
    assert all(t.session == "97ad2206-c0e5-40c8-a6c6-a2ef14c2636e" and t.timestamp for t in read.turns)
    assert read_new(FIXTURE, read.end).turns == ()  # read on from where it ended: nothing twice


def test_a_resumed_session_appends_and_only_the_new_turns_are_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURE, path)
    end = read_new(path, 0).end
    with path.open("ab") as handle:
        handle.write(line(user("u5", "five")) + line(assistant("a5", [{"type": "text", "text": "Fifth reply."}])))
    read = read_new(path, end)
    assert [t.id for t in read.turns] == ["u5", "a5"] and read.turns[0].start == end


def test_a_partial_last_line_is_left_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    whole = line(user("u1", "The staging database listens on port 5433."))
    path.write_bytes(line(user("u0", "first")) + whole[:20])
    read = read_new(path, 0)
    assert [t.id for t in read.turns] == ["u0"] and read.end == len(line(user("u0", "first")))
    with path.open("ab") as handle:
        handle.write(whole[20:])
    assert [t.content for t in read_new(path, read.end).turns] == ["The staging database listens on port 5433."]


def test_tool_calls_results_thinking_reminders_and_sidechains_are_not_turns(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        line(user("u1", "<system-reminder>\nInjected context\n</system-reminder>\nWhat changed in billing?"))
        + line(
            assistant(
                "a1",
                [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
                ],
            )
        )
        + line(user("u2", [{"type": "tool_result", "tool_use_id": "t1", "content": "file text"}]))
        + line(assistant("a2", [{"type": "text", "text": "Billing moved to Postgres."}]))
        + line(user("u3", "side", isSidechain=True))
        + line(user("u4", "meta", isMeta=True))
        + line(user("u5", "<command-name>/clear</command-name>"))
        + b"not json at all\n"
        + line({"type": "summary", "summary": "x", "leafUuid": "a2"})
    )
    read = read_new(path, 0)
    assert [(t.id, t.content) for t in read.turns] == [
        ("u1", "What changed in billing?"),
        ("a2", "Billing moved to Postgres."),
    ]


def test_a_replaced_file_is_read_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(line(user("u1", "short")))
    read = read_new(path, 10_000)
    assert read.restarted and [t.id for t in read.turns] == ["u1"]


def test_a_huge_turn_is_cut() -> None:
    turn = turn_of(user("u1", "x" * (MAX_TURN_CHARS + 5)), 0)
    assert turn is not None and len(turn.content) == MAX_TURN_CHARS
