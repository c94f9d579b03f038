"""The host ops as the warm socket answers them (cli/host_ops.py): the envelope and params checked against the
contract (wire/hosts.py) with a reason a client can show, error kinds a client acts on, and answers in the shape the
generated clients read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from botbin.cli.host_ops import answer_op
from botbin.service import MemoryService
from botbin.wire import hosts
from conftest import FakeEmbedder, write_notes

AGENTS = "# Agents\n\n- Never push to main without a review.\n"


@pytest.fixture
def memory(make_service: Callable[..., MemoryService]) -> MemoryService:
    service = make_service({"AGENTS.md": AGENTS, "memory/deploys.md": "# Deploys\n\nDeploys go out on Tuesdays.\n"})
    service.sync()
    return service


def ask(memory: MemoryService, op: str, **params: Any) -> dict[str, Any]:
    return answer_op(memory, {"v": hosts.HOST_PROTOCOL, "op": op, **params})


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ({"v": 99, "op": "recall", "prompt": "x"}, "host protocol 99 asked; this server speaks 1"),
        ({"v": 1, "op": "teleport"}, "op: Input should be"),
        ({"v": 1, "op": "recall"}, "prompt: Field required"),
        ({"v": 1, "op": "recall", "prompt": "x", "budgetTokens": 0}, "budgetTokens: Input should be greater than"),
        ({"v": 1, "op": "recall", "prompt": "x", "extra": 1}, "extra: Extra inputs are not permitted"),
        ({"v": 1, "op": "expand", "id": "ab"}, "id: String should have at least 4 characters"),
    ],
)
def test_a_request_the_contract_rejects_is_a_bad_request_that_says_why(
    memory: MemoryService, message: dict[str, Any], said: str
) -> None:
    answer = answer_op(memory, message)
    assert answer["v"] == 1 and answer["ok"] is False and answer["error"]["kind"] == "bad_request"
    assert said in answer["error"]["message"]


def test_answers_carry_every_field_of_their_result(memory: MemoryService) -> None:
    for op, params, model in (
        ("session_context", {"budgetTokens": 300}, hosts.SessionContextResult),
        ("recall", {"prompt": "When do deploys go out?"}, hosts.RecallResult),
        ("assemble", {"budgetTokens": 300, "prompt": "deploys"}, hosts.AssembleResult),
        ("ingest", {"turns": [{"role": "user", "content": "We deploy on Tuesdays.", "id": "t1"}]}, hosts.IngestResult),
        ("compact", {"messages": [{"role": "user", "content": "We deploy on Tuesdays."}], "budgetTokens": 40},
         hosts.CompactResult),
    ):  # fmt: skip
        answer = ask(memory, op, **params)
        assert answer["ok"] is True, answer
        fields = {k: v for k, v in answer.items() if k not in ("v", "ok")}
        model.model_validate(fields)  # the shape the generated clients read, every field present
        assert set(fields) == {f.alias or n for n, f in model.model_fields.items()}


def test_rules_over_the_budget_are_a_bad_request_naming_their_size(memory: MemoryService) -> None:
    answer = ask(memory, "session_context", budgetTokens=3)
    assert answer["ok"] is False and answer["error"]["kind"] == "bad_request"
    assert "over the budget of 3" in answer["error"]["message"]


def test_an_encrypted_store_without_its_passphrase_is_locked_but_gives_its_rules(tmp_path: Path) -> None:
    fast_kdf = "kdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"
    notes = {"AGENTS.md": AGENTS, "botbin.toml": "encryption = true\n" + fast_kdf, "memory/deploys.md": "# Deploys\n"}
    root = write_notes(tmp_path / "ws", notes)
    embedder = FakeEmbedder()
    MemoryService(root, {}, embedder=embedder, env={}, passphrase=lambda: "hunter2 horse").sync()
    locked = MemoryService(root, {}, embedder=embedder, env={}, passphrase=lambda: None)
    recall = ask(locked, "recall", prompt="When do deploys go out?")
    assert recall["ok"] is False and recall["error"]["kind"] == "locked"
    start = ask(locked, "session_context", budgetTokens=300)
    assert start["ok"] is True and "Never push to main without a review." in start["text"]
