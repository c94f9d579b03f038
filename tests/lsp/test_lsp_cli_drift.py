"""Issue 35: one request, one answer, whichever door it comes in by. ``botbin search`` and ``botbin context`` answer
a request exactly as the real ``botbin lsp`` answers the same request (``botbin/search``, ``botbin/context``): the
same hits in the same order with the same scores, the same ``hidden`` count, the same context text, both when the
command runs in its own process and when the running server answers it over its socket (cli/warm.py)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from botbin.cli import main
from botbin.wire.search import HitFields
from lsp.conftest import request, serve

pytestmark = pytest.mark.model
QUERY = "which database did we choose and why"
#: Each CLI flag set with the LSP params of the same request.
SEARCHES: tuple[tuple[list[str], dict[str, Any]], ...] = (
    ([], {}),
    (["--all"], {"showAll": True}),
    (["--per-note", "1"], {"perNote": 1}),
    (["--best-per-note", "-k", "3"], {"bestPerNote": True, "k": 3}),
    (["--kind", "lore", "--alpha", "0.3"], {"filters": {"kind": "lore"}, "alpha": 0.3}),
)
#: The fields compared as they are. Each search reinforces the memos it returns (memory/lifecycle.py), so the memo
#: decay in ``components`` (and the score, by millionths) moves between two searches by any door.
FIELDS = [field.alias or name for name, field in HitFields.model_fields.items() if name not in ("components", "score")]


def _cli(root: Path, *args: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["-w", str(root), *args, "--json"])
    assert code == 0, err.getvalue()
    answer: dict[str, Any] = json.loads(out.getvalue())
    return answer


def _hits(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [{key: hit[key] for key in FIELDS} for hit in answer["hits"]]


@pytest.mark.parametrize("warm", [False, True], ids=["in-process", "warm"])
async def test_the_cli_answers_a_request_as_the_lsp_does(
    workspace: Path, warm: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not warm:
        monkeypatch.setenv("BOTBIN_NO_SERVER", "1")
    async with serve([workspace]) as client:
        for flags, params in SEARCHES:
            lsp = await request(client, "botbin/search", {"query": QUERY, "k": 10, **params})
            cli = _cli(workspace, "search", QUERY, "-k", "10", *flags)
            assert lsp["hits"], flags
            assert [h["score"] for h in cli["hits"]] == pytest.approx([h["score"] for h in lsp["hits"]], abs=1e-5)
            assert _hits(cli) == _hits(lsp), flags
            assert cli["hidden"] == lsp["hidden"], flags
        lsp_context = await request(client, "botbin/context", {"query": QUERY, "budgetTokens": 600})
        cli_context = _cli(workspace, "context", QUERY, "--budget", "600")
        for key in ("text", "usedTokens", "budgetTokens", "tiers"):
            assert cli_context[key] == lsp_context[key], key
