"""`botbin ingest` end to end as a subprocess with the FakeEmbedder launcher (test_cli_directives.py), including
SIGTERM and SIGINT mid-buffer: the buffered turns must reach the soul file before the process exits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli_directives import _LAUNCHER, botbin, ok

TURNS = [
    {
        "role": "Ana",
        "content": "My sister's dog is called Pretzel and he loves the beach.",
        "session": 1,
        "timestamp": "2023-05-08T10:00:00",
        "user": "Ana",
    },
    {"role": "Ben", "content": "Pretzel the dog sounds adorable, does your sister walk the dog daily?", "session": 1},
    {"role": "user", "content": "Never share my sister's address with anyone.", "session": 1, "user": "Ana"},
]


def _log(path: Path, rows: list[dict[str, object]], extra: bytes = b"") -> Path:
    path.write_bytes(b"\n".join(json.dumps(r).encode() for r in rows) + b"\n" + extra)
    return path


def test_ingest_search_and_reingest(tmp_path: Path) -> None:
    _log(tmp_path / "chat.jsonl", TURNS)
    out = json.loads(ok("ingest", "chat.jsonl", "--user", "Ana", "--json", cwd=tmp_path))
    assert out["turnsRead"] == 3 and out["linesSkipped"] == 0 and out["protectedRules"] == 1
    assert out["blocksWritten"] == 1 and out["soulFiles"] == ["memory/soul/ana.md"]
    soul = (tmp_path / "memory/soul/ana.md").read_text()
    assert "## [Turns 1-3] session 1 · 2023-05-08" in soul
    assert "- Never share my sister's address with anyone. _(Ana: rule, verbatim)_" in soul  # the user's name
    hits = json.loads(ok("search", "what is the dog called", "--json", "-k", "1", cwd=tmp_path))["hits"]
    assert hits[0]["path"] == "memory/soul/ana.md"
    again = json.loads(ok("ingest", "chat.jsonl", "--user", "Ana", "--json", cwd=tmp_path))
    assert again["blocksWritten"] == 0 and (tmp_path / "memory/soul/ana.md").read_text() == soul


def test_dry_run_and_bad_lines(tmp_path: Path) -> None:
    _log(tmp_path / "chat.jsonl", TURNS, b'{"role": "Ana"}\n\xff\xfe\n')
    done = botbin("ingest", "chat.jsonl", "--dry-run", cwd=tmp_path)
    assert done.returncode == 1
    assert "chat.jsonl:4: missing 'content'" in done.stderr and "chat.jsonl:5: not UTF-8" in done.stderr
    # without --user, Ben's line (no user) goes to the default user's file: two blocks, numbered per user
    assert "## [Turns 1-2] session 1 · 2023-05-08" in done.stdout and "## [Turns 1-1] session 1\n" in done.stdout
    assert "blocks (dry run)    2" in done.stdout
    assert not (tmp_path / "memory").exists()
    missing = botbin("ingest", "nope.jsonl", cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_a_user_name_holding_a_nul_is_a_skipped_line_not_a_soul_file_that_never_syncs(tmp_path: Path) -> None:
    # The title of memory/soul/a-b.md held the NUL: the file was "binary", skipped by every sync from then on.
    _log(tmp_path / "chat.jsonl", [{**TURNS[0], "user": "a\x00b"}, TURNS[1]])
    done = botbin("ingest", "chat.jsonl", cwd=tmp_path)
    assert done.returncode == 1 and "chat.jsonl:1: 'user' holds a NUL character" in done.stderr
    assert not any(b"\x00" in p.read_bytes() for p in (tmp_path / "memory" / "soul").glob("*.md"))
    assert botbin("sync", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_buffer_distils_the_buffer_first(tmp_path: Path, sig: signal.Signals) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, "-v", "ingest", "-", "--user", "Ana"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stderr is not None
    try:
        for row in TURNS[:2]:  # two turns: the buffer (5) is not full, nothing is written yet
            proc.stdin.write(json.dumps(row).encode() + b"\n")
        proc.stdin.flush()
        seen: list[bytes] = []
        while not any(b"turn 2 (Ana) observed; 2 buffered" in line for line in seen):
            line = proc.stderr.readline()
            assert line, b"".join(seen)
            seen.append(line)
        assert not (tmp_path / "memory/soul/ana.md").exists()
        proc.send_signal(sig)  # the process is blocked reading stdin, which stays open
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig, err
    assert f"{sig.name}: distilling the 2 buffered turns" in err.decode()
    soul = (tmp_path / "memory/soul/ana.md").read_text()
    assert "## [Turns 1-2] session 1 · 2023-05-08" in soul and "Pretzel" in soul
    assert b"blocks written      1" in out
    hits = json.loads(ok("search", "Pretzel", "--json", "-k", "1", cwd=tmp_path))["hits"]  # synced before exit
    assert hits[0]["path"] == "memory/soul/ana.md"


def test_ingest_keeps_the_lead_in_rule_and_leaves_the_greeting_out(tmp_path: Path) -> None:
    """Issue 32, as a new user tried it: the greeting became a bullet and the lead-in instruction was missed."""
    rows: list[dict[str, object]] = [
        {"role": "assistant", "content": "Good morning! How can I help today?"},
        {"role": "user", "content": "By the way, from now on, call me Sam."},
        {"role": "assistant", "content": "Of course, Sam. Anything else I can help with?"},
        {"role": "user", "content": "thanks!"},
    ]
    _log(tmp_path / "chat.jsonl", rows)
    out = json.loads(ok("ingest", "chat.jsonl", "--user", "Sam", "--json", cwd=tmp_path))
    assert out["protectedRules"] == 1 and out["soulFiles"] == ["memory/soul/sam.md"]
    soul = (tmp_path / "memory/soul/sam.md").read_text()
    bullets = [line for line in soul.splitlines() if line.startswith("- ")]
    assert bullets == ["- By the way, from now on, call me Sam. _(Sam: rule, verbatim)_"]
