"""botbin as OpenClaw's context engine (extensions/openclaw, issue 32): what the engine's ``assemble`` costs a model
call, and what reaches the model across sessions in the real OpenClaw. ``python -c "import torch"`` is timed in the
same run as the baseline.

Run from the repo root with the venv active: ``python bench/bench_openclaw.py [--quick] [--skip-host]``.
Prints one JSON object on stdout (progress on stderr); ``--out FILE`` also writes it there.

- ``assemble``: the engine's own ``assemble`` (its socket client, bundled from extensions/openclaw/src and run in
  OpenClaw's Node) against a warm ``botbin serve``, 40 calls, half with a prompt a note answers and half unrelated:
  wall ms p50 / p95 (the turn waits for it before every model call), and how many of the relevant ones recalled.
- ``cold_start``: ``botbin serve`` spawned, until its first ``assemble`` answers with the index and model loaded
  (what a first turn waits for when the engine starts the server: that turn goes on without memory meanwhile).
- ``planted``: the real OpenClaw 2026.9.6 Gateway (scripts/openclaw-real/install.sh), driven through ``openclaw acp``
  (its IDE bridge: one process per session, a turn per round trip) against a scripted model: 5 sessions of 200
  turns of chatter (bench_planted.py's generator), sessions 1-4 planting bench_planted's 10 facts, session 5 asking
  each question; a fact is recalled when the model's request for its question holds the answer in botbin's
  memory block (target 10/10). ``--quick``: 40 turns per session. ``--skip-host``: leave it out.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_planted import FACTS, chatter
from common import load_average, log, median, percentile, r

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the OpenClaw harness and the scripted model of tests/hosts

from hosts import openclaw_gateway as ogw  # noqa: E402
from hosts import openclaw_real as ocr  # noqa: E402
from hosts.scripted_openai import ModelRequest, scripted_model  # noqa: E402

PLUGIN = REPO / "extensions" / "openclaw"
NOTES = {
    "AGENTS.md": "# Agents\n\n- Never push to main without a review.\n- Always write dates as YYYY-MM-DD.\n",
    "memory/deploys.md": "# Deploys\n\nDeploys go out on Tuesdays through the blue-green pipeline.\n",
    "memory/billing.md": "# Billing\n\nInvoices are generated on the first of the month by the billing worker.\n",
}
#: (prompt, words of the note that answers it): what a relevant prompt's memory block must hold.
RELEVANT = (
    ("When do deploys go out?", "Tuesdays"),
    ("Which day of the week do we deploy?", "Tuesdays"),
    ("How do deploys reach production?", "blue-green"),
    ("What pipeline do our deploys use?", "blue-green"),
    ("What day are releases shipped?", "Tuesdays"),
    ("When are invoices generated?", "first of the month"),
    ("Which worker creates the invoices?", "billing worker"),
    ("On what date does invoicing run?", "first of the month"),
    ("Who generates the invoices each month?", "billing worker"),
    ("How are invoices made?", "billing worker"),
)
UNRELATED = (
    "Write a haiku about autumn.",
    "What is 17 times 23?",
    "Name three rivers in Africa.",
    "Tell me a joke about penguins.",
    "How do I boil an egg?",
    "What colour is a ripe banana?",
    "Suggest a name for a goldfish.",
    "Translate 'good night' into French.",
    "How many legs does a spider have?",
    "Recommend a board game for four people.",
)
#: Sessions 1-4 plant FACTS[PLANTED[s]:PLANTED[s + 1]] (3, 3, 2 and 2 facts).
PLANTED = (0, 3, 6, 8, 10)
BLOCK_END = "<!-- openclaw:attempt:DYNAMIC -->"


def write(root: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def sync(home: ocr.OpenClawHome) -> None:
    """``botbin sync`` of the home's notes, as a user runs it once."""
    subprocess.run([str(ocr.BOTBIN), "sync", "--workspace", str(home.notes)], env=home.env(), check=True,
                   capture_output=True, timeout=600)  # fmt: skip


def seconds_of(command: list[str], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return median(times)


def node() -> str:
    """OpenClaw's Node 24 when installed (the engine runs in it), else the system's."""
    return str(ocr.NODE_BIN / "node") if ocr.installed() else "node"


def engine_bundle(out: Path) -> Path:
    options = {"entryPoints": ["bench/assembleLatency.ts"], "bundle": True, "platform": "node", "format": "cjs",
               "outfile": str(out), "logLevel": "warning"}  # fmt: skip
    script = f"require('esbuild').build({json.dumps(options)})"
    subprocess.run(["node", "-e", script], cwd=PLUGIN, check=True, timeout=300)
    return out


def assemble_latency(home: ocr.OpenClawHome, bundle: Path) -> dict[str, Any]:
    """Two passes over 10 relevant and 10 unrelated prompts, interleaved (the second pass finds the query vectors
    cached, as a repeated prompt does)."""
    one_pass = [p for pair in zip(RELEVANT, UNRELATED, strict=True) for p in (pair[0][0], pair[1])]
    prompts = one_pass * 2
    job = {"workspace": str(home.notes), "agentDir": str(home.root / "agent"), "prompts": prompts, "budgetTokens": 600}
    done = subprocess.run([node(), str(bundle), json.dumps(job)], env=home.env(), capture_output=True, text=True,
                          check=True, timeout=600)  # fmt: skip
    data = json.loads(done.stdout)
    walls = [run["ms"] for run in data["runs"]]
    first = walls[: len(one_pass)]
    answers = dict(RELEVANT)
    asked = [(run, answers[prompt]) for prompt, run in zip(prompts, data["runs"], strict=True) if prompt in answers]
    recalled = sum(answer in run["addition"] for run, answer in asked)
    return {"runs": len(prompts), "p50_ms": r(median(walls), 1), "p95_ms": r(percentile(walls, 95), 1),
            "first_pass_p50_ms": r(median(first), 1), "first_pass_p95_ms": r(percentile(first, 95), 1),
            "max_ms": r(max(walls), 1), "relevant_recalled": f"{recalled}/{len(asked)}",
            "failures_logged": data["log"], "node": data["node"], "target_p95_ms": 150.0}  # fmt: skip


def cold_start(home: ocr.OpenClawHome, runs: int = 3) -> dict[str, Any]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        with ocr.botbin_server(home):  # returns once an assemble answered with the index and model loaded
            times.append(time.perf_counter() - start)
    return {"runs": runs, "median_s": r(median(times), 2), "max_s": r(max(times), 2)}


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


def memory_block(request: ModelRequest) -> str:
    system = request.system
    start = system.find("## Rules (always follow)")
    return system[start : system.find(BLOCK_END, start)] if start >= 0 else ""


def planted(root: Path, turns: int) -> dict[str, Any]:
    if not ocr.installed():
        return {"skipped": f"OpenClaw {ocr.OPENCLAW_VERSION} is not installed (scripts/openclaw-real/install.sh)"}
    replies = {user: reply for s in range(5) for (_, user), (_, reply) in _pairs(chatter(2 * turns, seed=s))}
    with scripted_model(lambda body: replies.get(ModelRequest("", body).last_user.split("\n")[-1], "Got it.")) as chat:
        home = ocr.OpenClawHome(root, chat, root / "notes", engine={"startServer": False})
        write(home.notes, {"AGENTS.md": NOTES["AGENTS.md"]})
        home.write()
        sync(home)
        turn_s: list[float] = []
        with ocr.botbin_server(home), ogw.gateway(home):
            for number, prompts in enumerate(sessions_plan(turns), 1):
                with ogw.acp_session(home, f"planted-{number}") as session:
                    for prompt in prompts:
                        start = time.perf_counter()
                        stop = session.prompt(prompt)
                        turn_s.append(time.perf_counter() - start)
                        assert stop == "end_turn", stop
                log(f"session {number}: {len(prompts)} turns, median turn {median(turn_s):.2f} s")
        recalled = []
        for _, question, word in FACTS:
            asked = [q for q in chat.completions() if q.last_user.endswith(question)]
            recalled.append(bool(asked) and word in memory_block(asked[0]))
        outside = [a["target"] for a in home.outside_attempts()]
        failures = home.log_lines("botbin: no memory")
    return {"sessions": 5, "turns_per_session": turns, "facts": len(FACTS), "recalled": sum(recalled),
            "missed": [FACTS[i][0] for i, ok in enumerate(recalled) if not ok], "turn_s_p50": r(median(turn_s), 3),
            "turn_s_p95": r(percentile(turn_s, 95), 3), "turns_without_memory": len(failures),
            "refused_outside_lookups": sorted(set(outside)), "target": len(FACTS),
            "openclaw": ocr.OPENCLAW_VERSION, "node": ocr.NODE_VERSION}  # fmt: skip


def _pairs(turns: list[tuple[str, str]]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    return list(zip(turns[0::2], turns[1::2], strict=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="40 turns per OpenClaw session")
    parser.add_argument("--skip-host", action="store_true", help="no OpenClaw sessions (the engine's assemble only)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON result here")
    args = parser.parse_args()
    started = time.perf_counter()
    torch_s = seconds_of([sys.executable, "-c", "import torch"])
    log(f"baseline: python -c 'import torch' {torch_s:.2f} s")
    with tempfile.TemporaryDirectory(prefix="botbin-openclaw-") as tmp:
        with scripted_model() as unused:
            home = ocr.OpenClawHome(Path(tmp) / "engine", unused, Path(tmp) / "engine" / "notes")
            write(home.notes, NOTES)
            home.write()
            sync(home)
            bundle = engine_bundle(Path(tmp) / "assemble.cjs")
            cold = cold_start(home)
            log(f"cold start to a warm assemble: median {cold['median_s']} s")
            with ocr.botbin_server(home):
                warm = assemble_latency(home, bundle)
            log(f"engine assemble p50 {warm['p50_ms']} ms, p95 {warm['p95_ms']} ms")
        host_run = (
            {"skipped": "--skip-host"} if args.skip_host else planted(Path(tmp) / "host", 40 if args.quick else 200)
        )
    result = {
        "baseline_import_torch_s": r(torch_s, 3),
        "assemble": warm,
        "cold_start": cold,
        "planted": host_run,
        "load_average": load_average(),
        "seconds": r(time.perf_counter() - started, 1),
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
