"""The degradation table in the real Claude Code (2.1.332): botbin not installed, the server killed mid-session, an
encrypted store without its passphrase, a server too slow to answer. In every row the host completes each turn and
exits 0, one clear line on the hook's stderr says what happened, and nothing the user said or wrote is lost from the
store. Skipped without Claude Code, like tests/hosts/test_claude_code_real.py. About 1.5 minutes."""

from __future__ import annotations

import os
import signal
import time

from botbin.embedding import SentenceTransformerEmbedder
from botbin.service import MemoryService
from conftest import write_notes
from hosts.claude_code import Host
from hosts.scenario import RENDERED, requires_claude_code, session
from hosts.scripted_model import ScriptedModel

pytestmark = requires_claude_code

RELEASE = "The release train leaves every second Thursday at noon."
RUNNERS = "Our CI runners have sixteen gigabytes of memory each."


def soul(host: Host) -> str:
    path = host.workspace / "memory" / "soul" / "user.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_without_botbin_every_turn_completes_and_each_hook_says_why_once(host: Host, model: ScriptedModel) -> None:
    talk = session(host, botbin=False)
    assert talk.say(RELEASE)["subtype"] == "success" and talk.say("Thanks.")["subtype"] == "success"
    assert talk.close() == 0
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        lines = talk.hook_lines(event)
        assert lines and all("botbin is not installed" in line for line in lines), (event, lines)
        assert len(lines) == sum(1 for h in talk.hooks if h.get("hook_event") == event)  # one line per hook run
    assert not (host.workspace / "memory").exists()  # nothing written, nothing touched
    assert not any(rule in r.text for r in model.main_requests for rule in RENDERED)  # the tests' control
    assert all(h.get("exit_code") == 0 for h in talk.hooks)


def test_a_server_killed_mid_session_loses_nothing_and_comes_back(host: Host, model: ScriptedModel) -> None:
    talk = session(host)
    talk.say(RELEASE)
    pid = host.server_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # the turn above may still be buffered there: it is in the journal
    assert talk.say(RUNNERS)["subtype"] == "success"
    (line,) = talk.hook_lines("UserPromptSubmit")
    assert "no server" in line and "started one" in line and "no memories for this prompt" in line
    assert talk.say("That's all, thanks.")["subtype"] == "success"
    assert talk.close() == 0
    assert host.server_pid() not in (None, pid)  # a new server answers
    text = soul(host)
    assert text.count(RELEASE) == 1 and text.count(RUNNERS) == 1
    assert all(rule in r.text for r in model.main_requests for rule in RENDERED)  # every turn had the rules


def test_an_encrypted_store_without_its_passphrase_gives_the_rules_and_keeps_the_turns(
    host: Host, model: ScriptedModel, real_embedder: SentenceTransformerEmbedder
) -> None:
    fast_kdf = "kdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"
    write_notes(host.workspace, {"botbin.toml": "encryption = true\n" + fast_kdf, "memory/deploys.md": "# Deploys\n\n"
                "Deploys go out on Tuesdays through the blue-green pipeline.\n"})  # fmt: skip
    store = MemoryService(host.workspace, {}, embedder=real_embedder, env={}, passphrase=lambda: "hunter2 horse")
    assert not store.sync().failed
    output = host.workspace / "memory" / "aifbin"
    before = {p: p.read_bytes() for p in output.rglob("*.aif-bin")}
    talk = session(host)  # no BOTBIN_PASSPHRASE
    assert talk.say("When do deploys go out?")["subtype"] == "success"
    assert talk.say(RELEASE)["subtype"] == "success"
    assert talk.close() == 0
    lines = talk.hook_lines("UserPromptSubmit")
    assert len(lines) == 2 and all("locked" in line and "no memories for this prompt" in line for line in lines)
    assert all(rule in r.text for r in model.main_requests for rule in RENDERED)  # read from the notes themselves
    assert {p: p.read_bytes() for p in output.rglob("*.aif-bin")} == before  # the store is untouched
    assert RELEASE in soul(host)  # what was said is kept, in the soul file, for the next sync with the passphrase


def test_a_server_too_slow_to_answer_costs_the_turn_its_memory_not_its_answer(host: Host, model: ScriptedModel) -> None:
    talk = session(host, BOTBIN_HOOK_PROMPT_TIMEOUT_S="1", BOTBIN_HOOK_CAPTURE_TIMEOUT_S="2", BOTBIN_HOOK_START_S="2")
    talk.say(RELEASE)
    pid = host.server_pid()
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # it accepts connections and answers nothing
    try:
        started = time.monotonic()
        assert talk.say(RUNNERS)["subtype"] == "success"
        took = time.monotonic() - started
    finally:
        os.kill(pid, signal.SIGCONT)
    assert took < 20, f"the turn waited {took:.1f} s for a server that does not answer"
    (prompt_line,) = talk.hook_lines("UserPromptSubmit")
    assert "no answer within 1 s" in prompt_line and "no memories for this prompt" in prompt_line
    (stop_line,) = talk.hook_lines("Stop")
    assert "no answer within 2 s" in stop_line and "left for the next hook" in stop_line
    talk.say("That's all, thanks.")  # the server answers again: the turns left behind go now
    assert talk.close() == 0
    text = soul(host)
    assert text.count(RELEASE) == 1 and text.count(RUNNERS) == 1
