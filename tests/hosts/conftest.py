"""Fixtures of the agent-host tests: a scripted model on 127.0.0.1, and a Claude Code environment (fresh HOME, private
runtime folder, a workspace with AGENTS.md) whose botbin server is stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_notes
from hosts.claude_code import Host
from hosts.scenario import AGENTS, answer
from hosts.scripted_model import ScriptedModel


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(answer) as served:
        yield served


@pytest.fixture
def host(tmp_path: Path, model: ScriptedModel) -> Iterator[Host]:
    made = Host(tmp_path, model.url)
    write_notes(made.workspace, {"AGENTS.md": AGENTS})
    yield made
    made.stop_server()
