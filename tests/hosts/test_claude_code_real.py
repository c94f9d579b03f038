"""botbin inside the real Claude Code (2.1.332, scripts/claude-code/install.sh), its plugin loaded with
``--plugin-dir extensions/claude-code``, against a scripted model on 127.0.0.1 whose every request body is kept:
the rules are in every request of a 20-turn session; a fact told in one session is in a later session's request when
the prompt asks about it, and not when it does not; the expand tool runs inside the host. Skipped when Claude Code is
not installed (BOTBIN_REQUIRE_CLAUDE_CODE=1, as scripts/test.sh sets, fails instead). About 2 minutes."""

from __future__ import annotations

import subprocess

from conftest import REPO
from hosts.claude_code import Host
from hosts.scenario import BINARY, FACT, RENDERED, requires_claude_code, session
from hosts.scripted_model import ModelRequest, ScriptedModel

pytestmark = requires_claude_code


def requests_for(model: ScriptedModel, prompt: str) -> list[ModelRequest]:
    return [r for r in model.main_requests if r.prompt == prompt]


def test_every_rule_is_in_every_model_request_of_a_20_turn_session(host: Host, model: ScriptedModel) -> None:
    talk = session(host)
    prompts = [f"Step {n}: refactor the {topic} module." for n, topic in enumerate(["billing", "auth", "search",
               "export", "import"] * 4, 1)]  # fmt: skip
    for prompt in prompts:
        assert talk.say(prompt)["subtype"] == "success"
    assert talk.close() == 0
    asked = model.main_requests
    assert len(asked) >= 20 and {p for p in prompts} <= {r.prompt for r in asked}
    missing = [(n, rule) for n, r in enumerate(asked) for rule in RENDERED if rule not in r.text]
    assert missing == [], f"rules missing from {len(missing)} of {len(asked) * len(RENDERED)} (request, rule) pairs"
    assert not [line for h in talk.hooks for line in str(h.get("stderr")).splitlines()]  # nothing went wrong


def test_a_fact_told_in_one_session_is_recalled_in_the_next_only_when_asked(host: Host, model: ScriptedModel) -> None:
    first = session(host)
    for prompt in ("Hi!", FACT, "Thanks, that's all for today."):
        first.say(prompt)
    assert first.close() == 0
    soul = (host.workspace / "memory" / "soul" / "user.md").read_text(encoding="utf-8")
    assert FACT in soul and "Hi!" not in soul  # the greeting is not memory

    asked = "Which port does the staging database listen on?"
    second = session(host)
    second.say(asked)
    assert second.close() == 0
    (request,) = requests_for(model, asked)
    assert "5433" in request.text and "db-staging.internal" in request.text

    unrelated = "Write a haiku about autumn leaves."
    third = session(host)
    third.say(unrelated)
    assert third.close() == 0
    (request,) = requests_for(model, unrelated)
    assert "5433" not in request.text and RENDERED[0] in request.text


def test_the_expand_tool_runs_inside_the_host(host: Host, model: ScriptedModel) -> None:
    first = session(host)
    first.say(FACT)
    assert first.close() == 0
    second = session(host)
    second.say("Which port does the staging database listen on?")
    done = second.say("Please look it up in detail.")
    assert done["subtype"] == "success" and second.close() == 0
    results = [text for r in model.main_requests for text in r.tool_results]
    expanded = [text for text in results if "memory/soul/user.md" in text]
    assert expanded, f"no expand_memory result reached the model: {results}"
    assert "db-staging.internal" in expanded[0] and '"turns"' in expanded[0]
    assert FACT in expanded[0].split('"turns"', 1)[1]  # the source turn, read back from the transcript


def test_the_plugin_installs_from_the_repositorys_marketplace_as_users_install_it(
    host: Host, model: ScriptedModel
) -> None:
    def claude(*args: str) -> str:
        done = subprocess.run([str(BINARY), *args], env=host.env(), cwd=host.workspace, capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    claude("plugin", "marketplace", "add", str(REPO))
    claude("plugin", "install", "botbin@botbin")
    assert "botbin@botbin" in claude("plugin", "list")
    talk = session(host, installed=True)
    talk.say("Which port does the staging database listen on?")
    assert talk.close() == 0
    assert all(rule in model.main_requests[0].text for rule in RENDERED)
