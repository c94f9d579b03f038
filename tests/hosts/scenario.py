"""The scripted scenario of the Claude Code tests: the workspace's rules, the facts told, the scripted model's
answers, and a session of the real Claude Code with botbin's plugin."""

from __future__ import annotations

import os
import re

import pytest

from hosts.claude_code import VERSION, Host, Session, claude_binary
from hosts.scripted_model import ModelRequest, Reply

BINARY = claude_binary()
requires_claude_code = pytest.mark.skipif(
    BINARY is None and not os.environ.get("BOTBIN_REQUIRE_CLAUDE_CODE"),
    reason=f"Claude Code {VERSION} is not installed (scripts/claude-code/install.sh)",
)
RULES = ("Never push to main without a review.", "Always write dates as YYYY-MM-DD.", "Never log customer emails.")
AGENTS = "# Agents\n\n" + "".join(f"- {rule}\n" for rule in RULES)
#: Each rule as botbin's context renders it, with its source line: Claude Code 2.1.332 puts AGENTS.md itself into
#: the first request too (a built-in plugin), so only this form proves that botbin delivered the rule.
RENDERED = tuple(f"- {rule} (AGENTS.md:{line})" for line, rule in enumerate(RULES, 3))
FACT = "Our staging database listens on port 5433 on host db-staging.internal."
EXPAND = "mcp__plugin_botbin_botbin__expand_memory"


def answer(request: ModelRequest) -> Reply:
    """The scripted model: a short answer, or, asked to look a memory up, a call of expand_memory with the [id] it
    was given (first loading the tool's schema through ToolSearch, as Claude Code defers MCP tools)."""
    last = request.tool_results[-1] if request.tool_results else ""
    loaded = "tool_reference" in last and EXPAND in last  # ToolSearch loaded the tool's schema
    if last and not loaded:
        return Reply("Here is what the note says.")
    if loaded or "look it up in detail" in request.prompt:
        ids = re.findall(r"\[([0-9a-f]{10})\]", request.text)
        assert ids, "no memory with an [id] in the request"
        if loaded or EXPAND in request.tools:
            return Reply(tool=EXPAND, tool_input={"id": ids[-1]})
        return Reply(tool="ToolSearch", tool_input={"query": f"select:{EXPAND}", "max_results": 1})
    return Reply("Noted.")


def session(host: Host, *args: str, botbin: bool = True, installed: bool = False, **env: str) -> Session:
    """A ``claude -p`` session in the workspace, the expand tool allowed; ``botbin=False``: no botbin on PATH;
    ``installed``: the plugin as installed in the HOME (else loaded with ``--plugin-dir``)."""
    assert BINARY is not None, f"Claude Code {VERSION} is not installed: run scripts/claude-code/install.sh"
    allowed = ("--allowedTools", f"ToolSearch {EXPAND}")
    return Session(BINARY, host, host.env(botbin, **env), *allowed, *args, plugin_dir=not installed)
