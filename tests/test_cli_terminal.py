"""Issue 36: escape sequences in notes and file names are shown, never obeyed, in every human line the CLI prints
(stdout and stderr; answered in-process or by a warm server); JSON output stays exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from botbin.cli.answers import answer
from botbin.cli.terminal import shown
from botbin.cli.warm import request
from botbin.service import MemoryService
from conftest import FakeEmbedder, write_notes

#: What a terminal obeys: CSI (clear the screen, colours), OSC (window title), BEL, 8-bit CSI, a bidi override.
OBEYED = ("\x1b", "\x07", "\x9b", "\u202e", "\r")
ESC_NOTE = "# Evil \x1b]0;PWNED\x07title\n\n- Never \x1b[2J run the cherry \x9b31m deploy on Fridays \u202etxt.exe.\n"
NOTES: dict[str, str | bytes] = {
    "MEMORY.md": ESC_NOTE,
    "memory/e\x1b[31mvil.md": "# Name\n\nFigs ripen in August.\n",
    "memory/bin\x1b]0;x\x07.md": b"\x00\x01binary",
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\x1b[2Jb", "a\\x1b[2Jb"),
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("csi \x9b31m", "csi \\x9b31m"),
        ("abc\u202etxt.exe", "abc\\u202etxt.exe"),
        ("line\r\x7f\x00", "line\\x0d\\x7f\\x00"),
        ("bad\udcff\udcfe.md", "bad\\xff\\xfe.md"),  # a file name's undecodable bytes, as os.fsdecode gives them
        ("tabs\tand\nnewlines stay", "tabs\tand\nnewlines stay"),
        ("Grüße 世界 👩‍💻 é", "Grüße 世界 👩‍💻 é"),  # a joiner (U+200D) in an emoji is text, not a control
    ],
)
def test_shown(text: str, expected: str) -> None:
    assert shown(text) == expected


def _botbin(*args: str, cwd: Path) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")} | {"BOTBIN_NO_SERVER": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "botbin", *args], capture_output=True, cwd=cwd, env=env, check=False, timeout=600
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.decode("utf-8", "surrogateescape"), done.stderr.decode("utf-8", "surrogateescape")


def _obeyed(text: str) -> list[str]:
    return [c for c in OBEYED if c in text]


@pytest.mark.model
def test_human_output_escapes_and_json_is_exact(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "ws", NOTES)
    runs = {
        "sync": _botbin("sync", cwd=root),
        "search": _botbin("search", "cherry deploy on Fridays", cwd=root),
        "search figs": _botbin("search", "figs ripen", cwd=root),
        "status": _botbin("status", cwd=root),
        "directives": _botbin("directives", cwd=root),
        "info": _botbin("info", "memory/aifbin/MEMORY.aif-bin", cwd=root),
        "context": _botbin("context", "cherry deploy", cwd=root),
    }
    for name, (out, err) in runs.items():  # before: every one of these printed the escapes raw
        assert _obeyed(out) == [] and _obeyed(err) == [], name
    assert "botbin: failed: memory/bin\\x1b]0;x\\x07.md: looks like a binary file" in runs["sync"][1]
    assert "Evil \\x1b]0;PWNED\\x07title" in runs["search"][0]
    assert "\\x1b[2J run the cherry \\x9b31m deploy on Fridays \\u202etxt.exe." in runs["search"][0]
    assert "memory/e\\x1b[31mvil.md:3-3" in runs["search figs"][0]
    assert "\\x1b[2J" in runs["directives"][0] and "Evil \\x1b]0;PWNED\\x07title" in runs["info"][0]
    out, _ = _botbin("search", "--json", "cherry deploy on Fridays", cwd=root)
    hit = json.loads(out)["hits"][0]
    assert hit["headingPath"] == ["Evil \x1b]0;PWNED\x07title"] and "\u202etxt.exe." in hit["snippet"]
    paths = {h["path"] for h in json.loads(_botbin("search", "--json", "figs ripen", cwd=root)[0])["hits"]}
    assert "memory/e\x1b[31mvil.md" in paths


def test_a_warm_answer_is_escaped_as_the_command_would_print_it(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "ws", NOTES)
    memory = MemoryService(root, {}, embedder=FakeEmbedder(), env={})
    memory.sync()

    def ask(*argv: str) -> dict[str, object]:
        asked = request(list(argv), env={}, cwd=root)
        assert asked is not None
        reply = answer(memory, dict(asked))
        assert reply["served"] is True, reply
        return reply

    human = ask("search", "cherry deploy on Fridays")
    assert _obeyed(str(human["stdout"])) == [] and "Evil \\x1b]0;PWNED\\x07title" in str(human["stdout"])
    exact = ask("search", "--json", "cherry deploy on Fridays")
    assert json.loads(str(exact["stdout"]))["hits"][0]["headingPath"] == ["Evil \x1b]0;PWNED\x07title"]
