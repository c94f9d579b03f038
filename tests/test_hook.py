"""``botbin hook EVENT``'s JSON contracts with Claude Code (cli/hook.py), run as Claude Code runs it (a process, the
hook's JSON on stdin): SessionStart and UserPromptSubmit print ``hookSpecificOutput.additionalContext`` (and nothing
when there is nothing to add), the capture events print nothing, the hook imports no heavy module, and every bad input
is one line on stderr with exit status 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from botbin.cli.warm import ask, request, socket_path
from conftest import REPO, write_notes

AGENTS = "# Agents\n\n- Never push to main without a review.\n"
DEPLOYS = "# Deploys\n\nDeploys go out on Tuesdays through the blue-green pipeline.\n"


class Hooks:
    """Runs ``botbin hook`` in a workspace with a private runtime folder."""

    def __init__(self, root: Path) -> None:
        self.workspace = write_notes(root / "ws", {"AGENTS.md": AGENTS, "memory/deploys.md": DEPLOYS})
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.runtime),
            "PYTHONPATH": str(REPO / "server"),
            "XDG_RUNTIME_DIR": str(self.runtime),
            "CLAUDE_PROJECT_DIR": str(self.workspace),
            "BOTBIN_HOOK_IDLE_EXIT_S": "120",
            "BOTBIN_HOOK_PROMPT_TIMEOUT_S": "20",
            **extra,
        }

    def run(self, event: str, payload: object, **env: str) -> subprocess.CompletedProcess[str]:
        stdin = payload if isinstance(payload, str) else json.dumps(payload)
        return subprocess.run(
            [sys.executable, "-m", "botbin", "hook", event], input=stdin, capture_output=True, text=True,
            env=self.env(**env), timeout=120,
        )  # fmt: skip

    def stop_server(self) -> None:
        answer = ask(
            socket_path(self.workspace, {"XDG_RUNTIME_DIR": str(self.runtime)}),
            request(["search", "pid", "-w", str(self.workspace)], env={}),
        )
        pid = answer.get("pid") if answer else None
        if isinstance(pid, int):
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
                time.sleep(0.1)


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooks]:
    made = Hooks(tmp_path_factory.mktemp("hooks"))
    yield made
    made.stop_server()


def test_session_start_starts_the_server_and_prints_the_rules_as_additional_context(hooks: Hooks) -> None:
    done = hooks.run("SessionStart", {"session_id": "s1", "source": "startup", "hook_event_name": "SessionStart"})
    assert done.returncode == 0 and done.stderr == ""
    output = json.loads(done.stdout)
    assert set(output) == {"hookSpecificOutput"} and output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Never push to main without a review." in output["hookSpecificOutput"]["additionalContext"]


def test_a_prompt_gets_its_memories_or_nothing(hooks: Hooks) -> None:
    hooks.run("SessionStart", {"session_id": "s2"})
    done = hooks.run("UserPromptSubmit", {"session_id": "s2", "prompt": "When do deploys go out?"})
    assert done.returncode == 0 and done.stderr == ""
    context = json.loads(done.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit" and "Tuesdays" in context["additionalContext"]
    unrelated = hooks.run("UserPromptSubmit", {"session_id": "s2", "prompt": "Write a haiku about autumn leaves."})
    assert (unrelated.returncode, unrelated.stdout, unrelated.stderr) == (0, "", "")


def test_the_capture_events_print_nothing_and_move_past_what_they_sent(hooks: Hooks, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    line = {"type": "user", "uuid": "u1", "sessionId": "s3", "message": {"role": "user", "content":
            "Our CI runners have sixteen gigabytes of memory each."}}  # fmt: skip
    transcript.write_text(json.dumps(line) + "\n", encoding="utf-8")
    for event in ("Stop", "PreCompact", "SessionEnd"):
        done = hooks.run(event, {"session_id": "s3", "transcript_path": str(transcript)})
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    offsets = json.loads((hooks.runtime / "botbin" / "claude-transcripts.json").read_text())
    assert offsets == {f"{hooks.workspace}\0{transcript}": transcript.stat().st_size}
    soul = (hooks.workspace / "memory" / "soul" / "user.md").read_text(encoding="utf-8")
    assert soul.count("sixteen gigabytes") == 1


@pytest.mark.parametrize(
    ("event", "stdin", "said"),
    [
        ("UserPromptSubmit", "{not json", "not JSON"),
        ("Stop", {"session_id": "s"}, "no transcript_path"),
        ("Stop", {"transcript_path": "/nonexistent/t.jsonl"}, "cannot read /nonexistent/t.jsonl"),
        ("Teleport", {}, "unknown event"),
    ],
)
def test_bad_input_is_one_line_and_exit_0(hooks: Hooks, event: str, stdin: object, said: str) -> None:
    done = hooks.run(event, stdin)
    assert done.returncode == 0 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"botbin hook {event}: ") and said in line


def test_a_bad_setting_keeps_its_default_and_says_so(hooks: Hooks) -> None:
    done = hooks.run("UserPromptSubmit", {"prompt": "When do deploys go out?"}, BOTBIN_HOOK_RECALL_BUDGET="lots")
    assert done.returncode == 0 and "Tuesdays" in done.stdout
    assert done.stderr.splitlines() == [
        "botbin hook settings: BOTBIN_HOOK_RECALL_BUDGET='lots' is not a positive number; using the default"
    ]


def test_the_prompt_hook_imports_no_model_runtime_nor_pydantic(hooks: Hooks) -> None:
    probe = (
        "import io, sys; sys.stdin = io.StringIO(sys.argv[1]); import botbin.cli as c; c.main(['hook', "
        "'UserPromptSubmit']); heavy = ('numpy', 'pydantic', 'torch', 'onnxruntime', 'botbin.service'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m == 'botbin.service'), file=sys.stderr)"
    )
    payload = json.dumps({"prompt": "When do deploys go out?"})
    done = subprocess.run(
        [sys.executable, "-c", probe, payload], capture_output=True, text=True, env=hooks.env(), timeout=60
    )
    assert done.returncode == 0 and "Tuesdays" in done.stdout
    assert done.stderr.strip() == "[]"
