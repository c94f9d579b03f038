"""botbin as Claude Code's memory (extensions/claude-code, issue 32): what its hooks cost a prompt, and what reaches
the model across sessions. ``python -c "import torch"`` is timed in the same run as the baseline.

Run from the repo root with the venv active: ``python bench/bench_hosts.py [--quick] [--skip-host]``.
Prints one JSON object on stdout (progress on stderr); ``--out FILE`` also writes it there.

- ``first_prompt``: a session's first prompt with no server running: the ``SessionStart`` hook (which starts
  ``botbin serve`` detached and waits for the rules) then the first ``UserPromptSubmit`` (the recall, the model
  loading behind the socket), each run as Claude Code runs it (``hooks/botbin-hook.sh EVENT``, JSON on stdin),
  3 times with the server stopped in between (target <= 2 s).
- ``prompt_hook``: 40 ``UserPromptSubmit`` hooks against the warm server, half of them prompts with a relevant
  memory and half without: wall ms p50 / p95 (target p95 <= 150 ms), and per-hook Python start alone.
- ``planted``: the real Claude Code (scripts/claude-code/install.sh) against a scripted model: 5 sessions of 200
  turns of chatter (bench_planted.py's generator), sessions 1-4 planting bench_planted's 10 facts, session 5 asking
  each question; a fact is recalled when the model's request for its question holds the answer (target 10/10).
  ``--quick``: 40 turns per session. ``--skip-host``: leave it out (no Claude Code installed).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_planted import FACTS, chatter
from common import load_average, log, median, percentile, r

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the Claude Code harness and the scripted model of tests/hosts

from hosts.claude_code import VERSION, Host, Session, botbin_on_path, claude_binary  # noqa: E402
from hosts.scripted_model import ModelRequest, Reply, ScriptedModel  # noqa: E402

HOOK = REPO / "extensions" / "claude-code" / "hooks" / "botbin-hook.sh"
NOTES = {
    "AGENTS.md": "# Agents\n\n- Never push to main without a review.\n- Always write dates as YYYY-MM-DD.\n",
    "memory/deploys.md": "# Deploys\n\nDeploys go out on Tuesdays through the blue-green pipeline.\n",
    "memory/billing.md": "# Billing\n\nInvoices are generated on the first of the month by the billing worker.\n",
}
RELEVANT = ("When do deploys go out?", "When are invoices generated?", "How do we deploy?", "Who makes invoices?")
UNRELATED = ("Write a haiku about autumn.", "What is 17 times 23?", "Name three rivers.", "Tell me a joke.")
#: Sessions 1-4 plant FACTS[PLANTED[s]:PLANTED[s + 1]] (3, 3, 2 and 2 facts).
PLANTED = (0, 3, 6, 8, 10)


def write(root: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def hook(host: Host, event: str, payload: dict[str, Any]) -> tuple[float, subprocess.CompletedProcess[str]]:
    """One hook run as Claude Code runs it; (wall seconds, the process)."""
    env = host.env(BOTBIN_COMMAND=str(host.root / "bin" / "botbin"), CLAUDE_PROJECT_DIR=str(host.workspace),
                   BOTBIN_HOOK_PROMPT_TIMEOUT_S="2")  # the default, as a user has it  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run([str(HOOK), event], input=json.dumps(payload), capture_output=True, text=True, env=env)
    return time.perf_counter() - start, done


def seconds_of(command: list[str], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return median(times)


def first_prompts(host: Host, runs: int = 3) -> dict[str, Any]:
    starts, firsts = [], []
    for n in range(runs):
        host.stop_server()
        s1, started = hook(host, "SessionStart", {"session_id": f"first-{n}", "source": "startup"})
        s2, prompt = hook(host, "UserPromptSubmit", {"session_id": f"first-{n}", "prompt": RELEVANT[0]})
        ok = "Never push to main" in started.stdout and "Tuesdays" in prompt.stdout
        log(f"first prompt {n + 1}: SessionStart {s1:.2f} s + UserPromptSubmit {s2:.2f} s, memory given: {ok}")
        starts.append(s1)
        firsts.append(s1 + s2 if ok else float("inf"))
    return {"session_start_s": [r(x, 3) for x in starts], "first_prompt_s": [r(x, 3) for x in firsts],
            "first_prompt_s_median": r(median(firsts), 3), "target_s": 2.0}  # fmt: skip


def warm_prompts(host: Host, runs: int = 40) -> dict[str, Any]:
    hook(host, "SessionStart", {"session_id": "warm"})
    walls, given = [], 0
    for n in range(runs):
        prompt = (RELEVANT if n % 2 == 0 else UNRELATED)[n // 2 % 4]
        wall, done = hook(host, "UserPromptSubmit", {"session_id": f"warm-{n}", "prompt": prompt})
        walls.append(wall * 1000)
        given += bool(done.stdout.strip())
    python_start = seconds_of([sys.executable, "-c", "pass"], 5) * 1000
    return {"runs": runs, "p50_ms": r(median(walls), 1), "p95_ms": r(percentile(walls, 95), 1),
            "with_memories": given, "python_start_ms": r(python_start, 1), "target_p95_ms": 150.0}  # fmt: skip


def planted_script(replies: dict[str, str]) -> Any:
    def answer(request: ModelRequest) -> Reply:
        return Reply(replies.get(request.prompt, "Got it."))

    return answer


def sessions_plan(turns: int) -> list[list[str]]:
    """Five sessions of ``turns`` prompts: chatter, the facts planted in sessions 1-4, the questions in session 5."""
    plan = []
    for s in range(5):
        talk = [text for role, text in chatter(2 * turns, seed=s) if role == "user"][:turns]
        if s < 4:
            for k, (fact, _, _) in enumerate(FACTS[PLANTED[s] : PLANTED[s + 1]]):
                talk[(k + 1) * turns // 4] = fact
        else:
            for k, (_, question, _) in enumerate(FACTS):
                talk[(k + 1) * turns // 11] = question
        plan.append(talk)
    return plan


def planted(root: Path, turns: int) -> dict[str, Any]:
    binary = claude_binary()
    if binary is None:
        return {"skipped": f"Claude Code {VERSION} is not installed (scripts/claude-code/install.sh)"}
    replies = {user: reply for s in range(5) for (_, user), (_, reply) in _pairs(chatter(2 * turns, seed=s))}
    with ScriptedModel(planted_script(replies)) as model:
        host = Host(root, model.url)
        write(host.workspace, {"AGENTS.md": NOTES["AGENTS.md"]})
        turn_s: list[float] = []
        for number, prompts in enumerate(sessions_plan(turns), 1):
            talk = Session(binary, host, host.env())
            for prompt in prompts:
                start = time.perf_counter()
                talk.say(prompt)
                turn_s.append(time.perf_counter() - start)
            code = talk.close()
            log(f"session {number}: {len(prompts)} turns, exit {code}, median turn {median(turn_s):.2f} s")
        recalled = []
        for _, question, word in FACTS:
            asked = [q for q in model.main_requests if q.prompt == question]
            recalled.append(bool(asked) and word in asked[0].text)
        host.stop_server()
    return {"sessions": 5, "turns_per_session": turns, "facts": len(FACTS), "recalled": sum(recalled),
            "missed": [FACTS[i][0] for i, ok in enumerate(recalled) if not ok], "turn_s_p50": r(median(turn_s), 3),
            "target": len(FACTS), "claude_code": VERSION}  # fmt: skip


def _pairs(turns: list[tuple[str, str]]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    return list(zip(turns[0::2], turns[1::2], strict=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="40 turns per Claude Code session")
    parser.add_argument("--skip-host", action="store_true", help="no Claude Code sessions (hooks only)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON result here")
    args = parser.parse_args()
    started = time.perf_counter()
    torch_s = seconds_of([sys.executable, "-c", "import torch"])
    log(f"baseline: python -c 'import torch' {torch_s:.2f} s")
    with tempfile.TemporaryDirectory(prefix="botbin-hosts-") as tmp:
        host = Host(Path(tmp) / "hooks", "http://127.0.0.1:9")
        botbin_on_path(host.root / "bin")
        write(host.workspace, NOTES)
        try:
            first = first_prompts(host)
            warm = warm_prompts(host)
        finally:
            host.stop_server()
        log(f"warm UserPromptSubmit p50 {warm['p50_ms']} ms, p95 {warm['p95_ms']} ms")
        host_run = (
            {"skipped": "--skip-host"} if args.skip_host else planted(Path(tmp) / "host", 40 if args.quick else 200)
        )
    result = {
        "baseline_import_torch_s": r(torch_s, 3),
        "first_prompt": {**first, "ratio_to_import_torch": r(first["first_prompt_s_median"] / torch_s, 3)},
        "prompt_hook": {**warm, "p95_ratio_to_import_torch": r(warm["p95_ms"] / 1000 / torch_s, 4)},
        "planted": host_run,
        "targets_met": first["first_prompt_s_median"] <= 2.0
        and warm["p95_ms"] <= 150.0
        and host_run.get("recalled", len(FACTS)) == len(FACTS),
        "seconds": r(time.perf_counter() - started, 1),
        "load_average": load_average(),
        "cpus": os.cpu_count(),
    }
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    main()
