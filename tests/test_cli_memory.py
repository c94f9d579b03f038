"""`botbin context` and `botbin remember` end to end, through the FakeEmbedder launcher of test_cli_directives.py
(a subprocess per command, well under a second each)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conftest import write_notes
from test_cli_directives import botbin, ok

NOTES: dict[str, str | bytes] = {
    "AGENTS.md": "# Rules for the assistant\n\n- Never answer in prose.\n",
    # an instruction note's quote is a soft rule; MEMORY.md is memory since issue 19
    "CLAUDE.md": "# Memory\n\n> Prefer short answers.\n\nThe user lives in Lisbon.\n",
    "memory/cooking.md": "# Cooking\n\nPasta needs salted water and ten minutes.\n",
    "memory/2020-01-01.md": "# 2020-01-01\n\n- 09:00 bought a bike\n- 10:00 fixed the bike light\n",
}
RULE = "- Never answer in prose. (AGENTS.md:3)"
# The FakeEmbedder only sees shared words, so the question shares three with the cooking note: a question that
# shares one word of five is under the relevance floor, as it should be without a real model to see "cook".
QUESTION = "how long does pasta need in salted water"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_notes(tmp_path_factory.mktemp("memory-cli") / "ws", NOTES)
    report = json.loads(ok("sync", "--json", cwd=root))
    assert sorted(report["added"]) == sorted(NOTES)
    return root


def test_context_json_shape(ws: Path) -> None:
    out = json.loads(ok("context", QUESTION, "--budget", "300", "--json", cwd=ws))
    assert set(out) == {"text", "usedTokens", "budgetTokens", "tiers", "indexing", "partialTiers"}
    assert out["budgetTokens"] == 300 and 0 < out["usedTokens"] <= 300
    assert [(t["name"], t["tier"]) for t in out["tiers"]] == [
        ("hard", "1"),
        ("guidance", "1.5"),
        ("soft", "2"),
        ("recent", "3"),
        ("recalled", "4"),
    ]
    for tier in out["tiers"]:
        assert set(tier) == {"name", "tier", "tokens", "items", "cut"}
        for entry in tier["items"] + tier["cut"]:
            assert set(entry) == {"path", "startLine", "endLine", "text"}
    assert sum(t["tokens"] for t in out["tiers"]) == out["usedTokens"]
    hard, _, soft, recent, recalled = out["tiers"]
    assert hard["items"] == [{"path": "AGENTS.md", "startLine": 2, "endLine": 3, "text": "- Never answer in prose."}]
    assert [i["text"] for i in soft["items"]] == ["> Prefer short answers."]
    assert [i["text"] for i in recent["items"]] == ["- 09:00 bought a bike", "- 10:00 fixed the bike light"]
    assert "memory/cooking.md" in [i["path"] for i in recalled["items"]]
    assert out["text"].startswith("## Rules (always follow)\n" + RULE + "\n")


def test_context_text_prints_the_context_and_a_token_summary(ws: Path) -> None:
    args = ("context", QUESTION, "--budget", "300")
    done = botbin(*args, cwd=ws)
    assert done.returncode == 0, done.stderr
    as_json = json.loads(ok(*args, "--json", cwd=ws))
    assert done.stdout == as_json["text"] + "\n"
    assert RULE in done.stdout.splitlines()
    used = ", ".join(f"{t['name']} {t['tokens']}" for t in as_json["tiers"] if t["tokens"])
    assert done.stderr == f"botbin: {as_json['usedTokens']}/300 tokens ({used})\n"
    assert re.fullmatch(r"botbin: \d+/300 tokens \(hard \d+, soft \d+, recent \d+, recalled \d+\)\n", done.stderr)


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        (
            "3",
            re.compile(r"botbin: error: the hard rules \(1\) need \d+ tokens, over the budget of 3; raise the budget"),
        ),
        ("0", re.compile(r"botbin context: --budget must be a whole number of tokens from 1 to 10,000,000, not 0")),
    ],
    ids=["rules-over-budget", "zero"],
)
def test_context_budget_too_small_fails_clearly(ws: Path, budget: str, message: re.Pattern[str]) -> None:
    done = botbin("context", "pasta", "--budget", budget, cwd=ws)
    assert done.returncode == 2 and done.stdout == ""
    assert message.match(done.stderr) and "Traceback" not in done.stderr, done.stderr
    need = int(re.findall(r"need (\d+) tokens", done.stderr)[0]) if budget == "3" else None
    if need is not None:  # the count it names is exactly enough
        exact = json.loads(ok("context", "pasta", "--budget", str(need), "--json", cwd=ws))
        assert exact["usedTokens"] == need and [t["tokens"] for t in exact["tiers"]] == [need, 0, 0, 0, 0]


def test_remember_prints_where_it_wrote(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "ws", {"AGENTS.md": NOTES["AGENTS.md"]})
    out = ok("remember", "We picked the otter logo.\nIt tested best.", "--tag", "decision", "--tag", "#v2", cwd=root)
    match = re.fullmatch(r"(memory/(\d{4}-\d{2}-\d{2})\.md):(\d+)-(\d+)\n", out)
    assert match, out
    rel, day, first, last = match[1], match[2], int(match[3]), int(match[4])
    now = datetime.now().astimezone()
    assert day in {f"{d:%Y-%m-%d}" for d in (now, now - timedelta(minutes=5))}  # today (run across midnight)
    lines = (root / rel).read_text(encoding="utf-8").split("\n")
    assert lines[0] == f"# {day}" and (first, last) == (3, 4)
    assert re.fullmatch(r"- \d\d:\d\d We picked the otter logo\. #decision #v2", lines[first - 1])
    assert lines[last - 1] == "  It tested best."
    again = ok("remember", "Second thought", cwd=root)
    assert again == f"{rel}:5-5\n"
    # remember synced: the entry is searchable, and it is the recent tier of the context
    hits = json.loads(ok("search", "otter logo", "--json", "-k", "1", cwd=root))["hits"]
    assert hits[0]["path"] == rel
    context = json.loads(ok("context", "logo", "--json", cwd=root))
    assert [i["startLine"] for i in context["tiers"][3]["items"]] == [2, 4]


def test_remember_refuses_empty_text_and_bad_tags(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "ws", {"AGENTS.md": NOTES["AGENTS.md"]})
    for args in (("remember", "  "), ("remember", "x", "--tag", "two words")):
        done = botbin(*args, cwd=root)
        assert done.returncode == 2 and done.stderr.startswith("botbin: error: ") and "Traceback" not in done.stderr
    assert not (root / "memory").exists()
