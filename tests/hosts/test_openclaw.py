"""botbin inside the real OpenClaw (issue 32): OpenClaw 2026.9.6 on Node 24.21.0 (scripts/openclaw-real/install.sh,
cached outside the clone; this module runs it when missing), this checkout's context engine (extensions/openclaw)
selected by plugins.slots.contextEngine, the real botbin server and model, and a scripted model on 127.0.0.1 that
records every request. The assertions are on what the model received and on the notes written.

- A 20-turn session through the Gateway (``openclaw acp``, the bridge an IDE uses): every AGENTS.md rule is in
  100 % of the model requests, and the memory block never exceeds the engine's budget in the host's own count
  (chars / 4).
- Sessions as separate ``openclaw agent --local`` processes: a fact told in session 1 is in session 2's request
  when the prompt asks about it, and absent when the prompt is unrelated.
- Compaction: with a small model the older turns fold into botbin's summary (its confidence logged), and OpenClaw
  runs no summarising call of its own.
- The degradation table: botbin not installed, the server killed mid-session, a locked store without its
  passphrase, a hung server (time limit): the turn completes, exit 0, one clear log line, nothing lost.
- Nothing leaves 127.0.0.1 (tests/hosts/netguard.mjs refuses and records it).

BOTBIN_SKIP_OPENCLAW_REAL=1 skips the module. ~10 min on the shared 2-core VM under load (each --local turn is a
Node process of 8-15 s; the Gateway starts in ~20 s, then answers an ACP turn in ~1 s).
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO
from hosts import openclaw_gateway as ogw
from hosts import openclaw_real as ocr
from hosts.scripted_openai import ModelRequest, ScriptedModel, scripted_model

pytestmark = pytest.mark.skipif(
    os.environ.get("BOTBIN_SKIP_OPENCLAW_REAL") == "1", reason="BOTBIN_SKIP_OPENCLAW_REAL=1"
)

RULES = (
    "Always answer in British English.",
    "Never deploy on a Friday.",
    "Always cite the ticket number in a commit message.",
    "Never paste customer data into a chat.",
    "Always run the migrations on staging first.",
    "Prefer short answers.",
)
AGENTS_MD = "# Rules for agents\n\n" + "".join(f"- {rule}\n" for rule in RULES)
NOTES = {
    "AGENTS.md": AGENTS_MD,
    "memory/projects.md": "# Projects\n\n## Billing\n\nAna owns the billing service; its dashboards are in Grafana.\n\n"
    "## Search\n\nThe search team moved from Elasticsearch to OpenSearch in October.\n",
    "memory/2026-11-30.md": "# 2026-11-30\n\n- Reviewed the quarterly roadmap with Ben.\n"
    "- Lunch with the design team.\n- The office printer on floor 3 is fixed.\n",
}
BUDGET_TOKENS = 220
"""The engine's budget: the rules, the recent tail and recall together are more than this, so it is at work."""
BLOCK_START = "## Rules (always follow)"
BLOCK_END = "<!-- openclaw:attempt:DYNAMIC -->"
"""OpenClaw 2026.9.6 puts systemPromptAddition just before the dynamic part of its system prompt."""
HOST_LOOKUPS = {"clawhub.ai"}
"""OpenClaw's Gateway looks up its plugin catalog host at start (with or without botbin; no setting turns it off in
2026.9.6): netguard refuses it, so it never leaves the machine. The embedded runs (--local) attempt nothing."""


def reply(body: dict) -> str:
    last = ModelRequest("", body).last_user.lower()
    if "good morning" in last or last.strip().startswith("hi"):
        return "Good morning! How can I help today?"
    return "Noted."


@pytest.fixture(scope="module")
def openclaw() -> Path:
    """OpenClaw installed (the install script is a no-op when it is) and the engine built."""
    if not ocr.installed():
        subprocess.run([str(REPO / "scripts" / "openclaw-real" / "install.sh")], check=True, timeout=1200)
    ocr.build_plugin()
    return ocr.OPENCLAW


@pytest.fixture
def chat() -> Iterator[ScriptedModel]:
    """The scripted OpenAI-compatible model OpenClaw talks to."""
    with scripted_model(reply) as m:
        yield m


def make_home(root: Path, model: ScriptedModel, **engine: object) -> ocr.OpenClawHome:
    """An OpenClaw home whose engine serves a synced copy of NOTES."""
    notes = root / "notes"
    for rel, text in NOTES.items():
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        (notes / rel).write_text(text)
    home = ocr.OpenClawHome(root, model, notes, engine={"startServer": False, "budgetTokens": BUDGET_TOKENS, **engine})
    home.write()
    sync = subprocess.run([str(ocr.BOTBIN), "sync", "--workspace", str(notes)], env=home.env(), capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert sync.returncode == 0, sync.stderr
    return home


def memory_block(request: ModelRequest) -> str:
    """botbin's systemPromptAddition as the model received it ("" when the request has none)."""
    system = request.system
    start = system.find(BLOCK_START)
    if start < 0:
        return ""
    end = system.find(BLOCK_END, start)
    assert end > start, "OpenClaw's system prompt layout changed: the memory block has no end marker"
    return system[start:end].strip()


def assert_stayed_local(home: ocr.OpenClawHome, allowed: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    attempts = home.outside_attempts()
    assert [a for a in attempts if a["kind"] != "dns" or a["target"] not in allowed] == [], attempts


def soul_text(home: ocr.OpenClawHome) -> str:
    return "\n".join(p.read_text() for p in sorted((home.notes / "memory" / "soul").glob("*.md")))


# -- every rule in every request ----------------------------------------------------------------------------
SESSION_20 = [
    "Good morning!",
    "We are planning the billing migration for next week.",
    "Who owns the billing service?",
    "Can you draft a commit message for the invoice fix?",
    "What should we check before running the migrations?",
    "Thanks.",
    "The invoice bug is ticket BILL-4312.",
    "Is Friday a good day to deploy it?",
    "Summarise the plan in two lines.",
    "Which search engine does the search team use now?",
    "OK.",
    "Our on-call this week is Priya.",
    "Write a short note for the customer about the delay.",
    "Can I paste the customer's invoice here?",
    "What was the ticket number again?",
    "Remind me who is on call.",
    "Great, thanks.",
    "Let's also rename the billing dashboard.",
    "Where are the billing dashboards?",
    "That's all for today.",
]


def test_every_rule_is_in_every_request_of_a_20_turn_session(
    openclaw: Path, chat: ScriptedModel, tmp_path: Path
) -> None:
    home = make_home(tmp_path, chat)
    with ocr.botbin_server(home), ogw.gateway(home), ogw.acp_session(home, "twenty") as session:
        stops = [session.prompt(message) for message in SESSION_20]
    assert stops == ["end_turn"] * 20
    requests = chat.completions()
    assert len(requests) >= 20
    assert not (home.agent_workspace / "AGENTS.md").exists()  # the rules reach the model through botbin only
    for n, request in enumerate(requests):
        block = memory_block(request)
        missing = [rule for rule in RULES if rule not in block]
        assert missing == [], f"request {n}: rules missing from {block!r}"
        assert math.ceil(len(block) / 4) <= BUDGET_TOKENS, (
            f"request {n}: {len(block)} chars over {BUDGET_TOKENS} tokens"
        )
    asked = [r for r in requests if "Who owns the billing service?" in r.last_user]
    assert asked and "Ana owns the billing service" in memory_block(asked[0]), "recall at work within the budget"
    assert home.log_lines("botbin: no memory") == [], "memory was there for every turn"
    assert_stayed_local(home, HOST_LOOKUPS)


# -- a fact told in one session, recalled in the next ---------------------------------------------------------
def test_a_fact_from_session_1_reaches_session_2_when_asked_and_only_then(
    openclaw: Path, chat: ScriptedModel, tmp_path: Path
) -> None:
    home = make_home(tmp_path, chat)
    home.install_plugin()  # as the README says: openclaw plugins install -l extensions/openclaw
    with ocr.botbin_server(home):
        for message in (
            "Good morning!",
            "By the way, the staging database moved to pg-staging-7 last Tuesday.",
            "Thanks, that's all.",
        ):
            assert home.turn(message, session="one").code == 0
        told = len(chat.completions())
        unrelated = home.turn("What is a good name for a grey cat?", session="two")
        asked = home.turn("Which database host does staging use now?", session="two")
    assert (unrelated.code, asked.code) == (0, 0), unrelated.stderr + asked.stderr
    first, second = chat.completions()[told:]
    assert "pg-staging-7" in memory_block(second), memory_block(second)
    assert "pg-staging-7" not in first.text, memory_block(first)
    assert "pg-staging-7" in soul_text(home)
    assert_stayed_local(home)


# -- compaction ----------------------------------------------------------------------------------------------
TOPICS = ("invoices", "card retries", "dunning emails", "refunds", "tax rates", "the ledger export")
REPORT = (
    "Status {n} on {topic}: the billing team shipped the change on day {n}, the error rate fell to {k} per thousand, "
    "Ana reviewed the dashboards, Ben wrote the runbook, and the audit trail for {topic} is complete. "
)


def report(n: int) -> str:
    """About 500 host tokens of a billing status report, its sentences differing from turn to turn."""
    return "".join(REPORT.format(n=n, k=n + i, topic=TOPICS[(n + i) % len(TOPICS)]) for i in range(9))


def test_older_turns_fold_into_botbins_summary_when_the_window_fills(
    openclaw: Path, chat: ScriptedModel, tmp_path: Path
) -> None:
    home = make_home(tmp_path, chat, compactTimeoutMs=60_000)
    home.context_window = 8_000  # a small model: the messages outgrow OpenClaw's budget within a few turns
    home.write()
    with ocr.botbin_server(home):
        turns = [home.turn(report(n) + " Please file it.", session="c") for n in range(1, 8)]
    assert [t.code for t in turns] == [0] * len(turns), [t.stderr[-2000:] for t in turns]
    folds = home.log_lines("botbin: folded")
    assert folds, [t.botbin_lines() for t in turns]
    assert "confidence" in folds[0]
    requests = chat.completions()
    assert len(requests) == len(turns), "OpenClaw ran no summarising model call of its own"
    messages = [str(m.get("content")) for m in requests[-1].body["messages"] if m.get("role") != "system"]
    summaries = [m for m in messages if "compacted into the following summary" in m]
    verbatim = [m for m in messages if m not in summaries]
    assert len(summaries) == 1, messages
    assert "billing" in summaries[0]
    assert any("Status 7 on" in m for m in verbatim), "the newest turn is verbatim"
    assert not any("Status 1 on" in m for m in verbatim), "the oldest turn is folded into the summary"
    assert_stayed_local(home)


# -- the degradation table ------------------------------------------------------------------------------------
def assert_turn_went_on(turn: ocr.Turn, why: str) -> None:
    """Exit 0, the model's reply printed, exactly one botbin log line saying why memory is off (naming ``why``);
    a second one may only say it is back (a server the engine started can answer the same turn's capture)."""
    assert turn.code == 0, turn.stderr[-3000:]
    assert "Noted." in turn.stdout
    lines = turn.botbin_lines()
    off = [line for line in lines if "no memory for this turn" in line]
    assert len(off) == 1, lines
    assert why in off[0], off[0]
    assert all(line in off or "botbin: memory is back" in line for line in lines), lines


def test_botbin_not_installed(openclaw: Path, chat: ScriptedModel, tmp_path: Path) -> None:
    home = make_home(tmp_path, chat, botbinPath=str(tmp_path / "no" / "botbin"), startServer=True)
    turn = home.turn("The deploy key is in vault path kv/deploy-2291.", session="d")
    assert_turn_went_on(turn, "botbin is not installed")
    assert memory_block(chat.completions()[-1]) == ""
    spooled = [json.loads(line) for p in home.state_dir.rglob("spool.jsonl") for line in p.read_text().splitlines()]
    assert "The deploy key is in vault path kv/deploy-2291." in [t["content"] for t in spooled], "kept, not lost"
    assert_stayed_local(home)


def _plugin_started_server(home: ocr.OpenClawHome) -> int | None:
    marker = next(home.state_dir.rglob("serve.json"), None)
    return json.loads(marker.read_text())["pid"] if marker else None


def test_server_killed_mid_session(openclaw: Path, chat: ScriptedModel, tmp_path: Path) -> None:
    home = make_home(tmp_path, chat, startServer=True)
    with ocr.botbin_server(home) as server:
        assert home.turn("Good morning!", session="k").code == 0
        assert RULES[0] in memory_block(chat.completions()[-1])
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        killed = home.turn("Remember: the release train leaves on Thursdays at 10:00.", session="k")
    try:
        assert_turn_went_on(killed, "no server at")
        assert "starting `" in killed.botbin_lines()[0], killed.botbin_lines()
        assert memory_block(chat.completions()[-1]) == ""
        ocr.wait_for_socket(home, None, 120)  # the engine started botbin serve again
        again = home.turn("And the hotfix window?", session="k")
        assert again.code == 0
        assert RULES[0] in memory_block(chat.completions()[-1]), again.stderr[-2000:]
        assert home.turn("Thanks.", session="k2").code == 0  # a new session: what was buffered is written
        assert "release train leaves on Thursdays" in soul_text(home), "the turn told while botbin was down is kept"
    finally:
        pid = _plugin_started_server(home)
        if pid is not None:
            os.killpg(pid, signal.SIGTERM)
    assert_stayed_local(home)


def test_locked_store_without_its_passphrase(openclaw: Path, chat: ScriptedModel, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "botbin.toml").write_text(
        "encryption = true\nkdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"
    )
    home = ocr.OpenClawHome(tmp_path, chat, notes, env_extra={"BOTBIN_PASSPHRASE": "correct horse"})
    home.engine = {"startServer": False, "budgetTokens": BUDGET_TOKENS}
    for rel, text in NOTES.items():
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        (notes / rel).write_text(text)
    home.write()
    subprocess.run([str(ocr.BOTBIN), "sync", "--workspace", str(notes)], env=home.env(), check=True, timeout=300)
    home.env_extra = {}  # neither the server nor OpenClaw has the passphrase now
    with ocr.botbin_server(home):
        turn = home.turn("Ana said the audit is on 12 January.", session="l")
        assert_turn_went_on(turn, "encrypted and locked")
        block = memory_block(chat.completions()[-1])
        assert all(rule in block for rule in RULES), block  # the rules come from the notes themselves
        assert "Ana owns the billing service" not in block  # recall needs the store
        assert home.turn("Thanks.", session="l2").code == 0
    assert "audit is on 12 January" in soul_text(home), "captured into the notes even while the store is locked"
    assert_stayed_local(home)


def test_a_hung_server_costs_the_time_limit_only(openclaw: Path, chat: ScriptedModel, tmp_path: Path) -> None:
    home = make_home(tmp_path, chat, assembleTimeoutMs=1000, ingestTimeoutMs=1000)
    with ocr.botbin_server(home) as server:
        assert home.turn("Good morning!", session="h").code == 0
        os.killpg(server.pid, signal.SIGSTOP)  # it accepts (the kernel does) and never answers
        try:
            started = time.monotonic()
            hung = home.turn("The quarterly review moved to 14 March.", session="h")
            took = time.monotonic() - started
        finally:
            os.killpg(server.pid, signal.SIGCONT)
        assert_turn_went_on(hung, "did not answer assemble within 1000 ms")
        assert memory_block(chat.completions()[-1]) == ""
        assert home.turn("Thanks.", session="h2").code == 0  # botbin answers again: the spool is delivered
    assert took < 120, took
    assert "quarterly review moved to 14 March" in soul_text(home)
    assert_stayed_local(home)
