"""turns.py: JSONL lines -> Turn, and a clear message (file, 1-based line, reason) for every bad line."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from botbin.memory.conversation.turns import (
    DEFAULT_USER,
    LineProblem,
    Turn,
    TurnError,
    parse_timestamp,
    read_turns,
    turn_from_object,
)


def _read(tmp_path: Path, data: bytes, user: str | None = None) -> list[Turn | LineProblem]:
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    return list(read_turns(path, user))


def test_fields_and_defaults(tmp_path: Path) -> None:
    lines = [
        {"role": "user", "content": "hi", "timestamp": "2026-05-08T14:30:00Z", "session": 3, "user": "ana"},
        {"role": " Caroline ", "content": "I moved.", "name": "Caro"},
    ]
    items = _read(tmp_path, "\n\n".join(json.dumps(x) for x in lines).encode())
    first, second = items
    assert isinstance(first, Turn) and isinstance(second, Turn)
    assert (first.role, first.user, first.session, first.line) == ("user", "ana", "3", 1)
    assert first.timestamp == datetime(2026, 5, 8, 14, 30, tzinfo=UTC)
    assert (second.role, second.speaker, second.user, second.line, second.timestamp) == (
        "Caroline",
        "Caro",
        DEFAULT_USER,
        3,
        None,
    )


def test_default_user_applies_only_to_lines_without_one(tmp_path: Path) -> None:
    data = b'{"role": "a", "content": "x", "user": "bob"}\n{"role": "a", "content": "y"}\n'
    assert [t.user for t in _read(tmp_path, data, "ana") if isinstance(t, Turn)] == ["bob", "ana"]


def test_bad_lines_are_named_and_skipped_the_rest_goes_on(tmp_path: Path) -> None:
    data = b"\n".join(
        [
            b'{"role": "user", "content": "one"}',
            b"not json",
            b'{"role": "user", "content": "caf\xe9"}',  # Latin-1, not UTF-8
            b"[1, 2]",
            b'{"content": "no role"}',
            b'{"role": "user"}',
            b'{"role": "user", "content": "   "}',
            b'{"role": "user", "content": 5}',
            b'{"role": "user", "content": "kept", "timestamp": "yesterday"}',
            b'{"role": "user", "content": "last"}',
        ]
    )
    items = _read(tmp_path, data)
    problems = [str(p) for p in items if isinstance(p, LineProblem)]
    path = str(tmp_path / "log.jsonl")
    assert problems == [
        f"{path}:2: not JSON (Expecting value at column 1)",
        f"{path}:3: not UTF-8 (byte 0xe9 at column 33)",
        f"{path}:4: expected a JSON object, got list",
        f"{path}:5: missing 'role'",
        f"{path}:6: missing 'content'",
        f"{path}:7: 'content' is empty",
        f"{path}:8: 'content' must be a string",
        f"{path}:9: timestamp 'yesterday' is not ISO 8601 (e.g. 2026-05-08T14:30:00Z) (turn kept)",
    ]
    kept = [t for t in items if isinstance(t, Turn)]
    assert [(t.content, t.line, t.timestamp) for t in kept] == [("one", 1, None), ("kept", 9, None), ("last", 10, None)]


def test_empty_file_bom_and_content_parts(tmp_path: Path) -> None:
    assert [str(p) for p in _read(tmp_path, b"")] == [f"{tmp_path / 'log.jsonl'}:1: empty file: no turns"]
    assert [str(p) for p in _read(tmp_path, b"\n  \n")] == [f"{tmp_path / 'log.jsonl'}:1: empty file: no turns"]
    parts = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"text": "b"}]}
    (turn,) = _read(tmp_path, b"\xef\xbb\xbf" + json.dumps(parts).encode())
    assert isinstance(turn, Turn) and turn.content == "a\nb"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2023-05-08", datetime(2023, 5, 8)),
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        (1_700_000_000, datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
    ],
)
def test_timestamps(value: object, expected: datetime) -> None:
    assert parse_timestamp(value) == expected


@pytest.mark.parametrize("value", [True, float("nan"), 1e30, "31/31/2023", "1850-01-01", [2023], -1e12])
def test_bad_timestamps_raise(value: object) -> None:
    with pytest.raises(TurnError):
        parse_timestamp(value)


def test_turn_from_object_rejects_nul_and_odd_labels() -> None:
    with pytest.raises(TurnError, match="NUL"):
        turn_from_object({"role": "user", "content": "a\x00b"})
    for field in ("user", "role", "session", "name"):  # each is written into the soul file, which a NUL makes binary
        with pytest.raises(TurnError, match=f"'{field}' holds a NUL"):
            turn_from_object({"role": "user", "content": "a", field: "a\x00b"})
    with pytest.raises(TurnError, match="'session' must be"):
        turn_from_object({"role": "user", "content": "a", "session": {"id": 1}})
