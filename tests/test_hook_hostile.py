"""``botbin hook`` (cli/hook.py, cli/transcript.py) against hostile and unlucky input, run as Claude Code runs it:
a transcript path that is a FIFO, a device or a folder; an offsets file (``claude-transcripts.json``, read back
from the runtime folder) that is damaged, planted as a link or a FIFO; a transcript turn holding a NUL or a lone
surrogate; a path with terminal escapes; input nested too deep; a prompt of megabytes; a store that is locked.
Each ends in one line on stderr (escaped) and exit 0, never a wait, and no turn is lost or left blocking the next."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from botbin.embedding import SentenceTransformerEmbedder
from conftest import write_notes
from test_hook import Hooks

TURN = "Our CI runners have sixteen gigabytes of memory each."


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooks]:
    made = Hooks(tmp_path_factory.mktemp("hostile"))
    yield made
    made.stop_server()


def line(uuid: str, content: str, session: str = "h1") -> str:
    return json.dumps({"type": "user", "uuid": uuid, "sessionId": session, "message": {"role": "user",
                       "content": content}}) + "\n"  # fmt: skip


def soul(hooks: Hooks) -> str:
    path = hooks.workspace / "memory" / "soul" / "user.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def offsets_file(hooks: Hooks) -> Path:
    return hooks.runtime / "botbin" / "claude-transcripts.json"


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_transcript_that_is_no_regular_file_is_one_line_and_no_wait(hooks: Hooks, tmp_path: Path, kind: str) -> None:
    path = {"device": Path("/dev/zero"), "folder": tmp_path}.get(kind, tmp_path / "t.jsonl")
    if kind == "fifo":
        os.mkfifo(path)
    started = time.monotonic()
    done = hooks.run("Stop", {"session_id": "h1", "transcript_path": str(path)})
    assert time.monotonic() - started < 30 and done.returncode == 0 and done.stdout == ""
    (said,) = done.stderr.splitlines()
    assert said.startswith(f"botbin hook Stop: cannot read {path} (") and said.endswith("nothing captured")


#: Per damage, two facts unlike every other case's (the soul file keeps a near-duplicate block out).
FACTS = {
    "negative": ("Marta waters the office ferns on Mondays.", "The parking garage closes at ten sharp."),
    "huge": ("Our espresso machine needs descaling monthly.", "Jonas keeps the spare badge in drawer three."),
    "float": ("The staging cluster runs Kubernetes 1.29.", "Invoices go to accounts@ by the fifth."),
    "bool": ("The wiki moved from Confluence to Outline.", "Priya owns the quarterly security audit."),
    "deep": ("The bike shed has room for twelve bicycles.", "Payroll runs on the penultimate Friday."),
    "fifo": ("Our VPN certificates expire every ninety days.", "The rooftop garden grows basil and thyme."),
    "link-out": ("The design review happens in room Orca.", "Backups are copied to a vault in Zurich."),
    "not-an-object": ("The printer on floor two jams on card stock.", "Our mascot is a grumpy pelican named Ed."),
}


@pytest.mark.parametrize("damage", FACTS)
def test_a_damaged_offsets_file_never_stops_a_capture(hooks: Hooks, tmp_path: Path, damage: str) -> None:
    transcript = tmp_path / "t.jsonl"
    first, second = FACTS[damage]
    transcript.write_text(line(f"{damage}-1", first))
    hooks.run("Stop", {"session_id": "h1", "transcript_path": str(transcript)})
    with transcript.open("a") as more:
        more.write(line(f"{damage}-2", second))
    path, key = offsets_file(hooks), f"{hooks.workspace}\0{transcript}"
    canary = tmp_path / "canary.txt"
    canary.write_text("botbin must never touch this\n")
    path.unlink()
    if damage == "fifo":
        os.mkfifo(path)
    elif damage == "link-out":
        path.symlink_to(canary)
    else:
        values = {"negative": "-5", "huge": str(10**30), "float": "1.5e3", "bool": "true"}
        entry = json.dumps({key: "@"}).replace('"@"', values.get(damage, "0"))
        path.write_text({"deep": "[" * 100_000 + "]" * 100_000, "not-an-object": '"x"'}.get(damage, entry))
    started = time.monotonic()
    done = hooks.run("SessionEnd", {"session_id": "h1", "transcript_path": str(transcript)})
    assert time.monotonic() - started < 30 and (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert first in soul(hooks) and second in soul(hooks)
    assert canary.read_text() == "botbin must never touch this\n" and path.is_file() and not path.is_symlink()
    assert json.loads(path.read_text())[key] == transcript.stat().st_size


def test_the_runtime_files_are_private_under_umask_000(hooks: Hooks, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(line("umask-1", "The umask case: our backups run at three in the morning."))
    for name in ("claude-transcripts.json", "claude-transcripts.lock"):
        (hooks.runtime / "botbin" / name).unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "botbin", "hook", "Stop"], input=json.dumps({"transcript_path": str(transcript)}),
        capture_output=True, text=True, env=hooks.env(), timeout=120, preexec_fn=lambda: os.umask(0),
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    modes = {n: stat.S_IMODE((hooks.runtime / "botbin" / n).stat().st_mode) for n in
             ("claude-transcripts.json", "claude-transcripts.lock")}  # fmt: skip
    assert modes == {"claude-transcripts.json": 0o600, "claude-transcripts.lock": 0o600}


def test_a_transcript_turn_that_is_not_text_is_captured_and_blocks_no_later_turn(hooks: Hooks, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    odd = '{"type":"user","uuid":"odd-1","sessionId":"h2","message":{"role":"user","content":"The \\u0000 gate code \\ud800 is 4471."}}\n'  # noqa: E501
    transcript.write_text(odd)
    first = hooks.run("Stop", {"session_id": "h2", "transcript_path": str(transcript)})
    with transcript.open("a") as more:
        more.write(line("odd-2", TURN, "h2"))
    second = hooks.run("SessionEnd", {"session_id": "h2", "transcript_path": str(transcript)})
    assert (first.stderr, second.stderr) == ("", "")
    text = soul(hooks)
    assert "gate code" in text and "4471" in text and "sixteen gigabytes" in text and "\x00" not in text


def test_control_characters_of_a_path_are_escaped_on_stderr(hooks: Hooks) -> None:
    done = hooks.run("Stop", {"transcript_path": "/nonexistent/\x1b]0;PWNED\x07\x1b[2J.jsonl"})
    assert done.returncode == 0 and "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "/nonexistent/\\x1b]0;PWNED\\x07\\x1b[2J.jsonl" in done.stderr


def test_input_nested_too_deep_is_not_json(hooks: Hooks) -> None:
    done = hooks.run("UserPromptSubmit", "[" * 100_000 + "]" * 100_000)
    (said,) = done.stderr.splitlines()
    assert done.returncode == 0 and "the hook's input is not JSON" in said and "internal error" not in said


def test_a_prompt_of_megabytes_still_gets_its_memories(hooks: Hooks) -> None:
    prompt = "When do deploys go out? Here is the whole build log:\n" + "step ok\n" * 300_000
    done = hooks.run("UserPromptSubmit", {"session_id": "h3", "prompt": prompt})
    assert (done.returncode, done.stderr) == (0, "") and "Tuesdays" in done.stdout


def test_a_locked_store_keeps_the_turns_and_says_they_are_not_indexed(
    tmp_path: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    """The store is built with the bundled model, one the hook's own process can load (the index keeps the model it
    was built with): what stops the sync is the missing passphrase."""
    from botbin.service import MemoryService

    locked = Hooks(tmp_path)
    kdf = "encryption = true\nkdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"
    write_notes(locked.workspace, {"botbin.toml": kdf})
    MemoryService(locked.workspace, {}, embedder=real_embedder, env={}, passphrase=lambda: "hunter2 horse").sync()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(line("locked-1", TURN))
    try:
        done = locked.run("Stop", {"session_id": "h1", "transcript_path": str(transcript)})
    finally:
        locked.stop_server()
    (said,) = done.stderr.splitlines()
    assert said.startswith("botbin hook Stop: turns kept in memory/soul/user.md, not indexed: no passphrase")
    assert "sixteen gigabytes" in (locked.workspace / "memory" / "soul" / "user.md").read_text()
