"""Issue 18 end to end: a conversation with planted facts goes through the real ``botbin ingest`` (a subprocess,
the bundled model), and each fact is then found by a search with its own sentence in the hit's snippet."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

pytestmark = pytest.mark.model

FACTS = (
    ("My blood type is AB negative.", "What is my blood type?", "AB negative"),
    ("My locker code at the gym is 4471.", "What is my gym locker code?", "4471"),
    ("I am allergic to penicillin.", "Which medicine am I allergic to?", "penicillin"),
    ("My first car was a green 1998 Volvo estate.", "What was my first car?", "Volvo"),
    ("My landlord's name is Mr. Okonkwo.", "What is my landlord's name?", "Okonkwo"),
)
TOPICS = ("the weather", "football", "a recipe", "the traffic", "a TV series", "gardening", "a podcast", "coffee")
TEMPLATES = (
    "I was thinking about {t} again today and it made me smile.",
    "Did you hear anything new about {t}? I keep meaning to look it up.",
    "We talked about {t} at lunch for {n} minutes at least.",
    "My friend has strong opinions about {t}, which I find hilarious.",
    "We should plan something around {t} next weekend, maybe with {n} people.",
)


def _turns() -> list[dict[str, object]]:
    rng = random.Random(0)
    rows: list[dict[str, object]] = []
    for i, (fact, _, _) in enumerate(FACTS):  # each fact amid its own small talk, as a conversation goes
        rows.append({"role": "user", "content": fact, "session": 1 + i})
        for j in range(8):
            text = rng.choice(TEMPLATES).format(t=rng.choice(TOPICS), n=rng.randint(2, 90))
            rows.append({"role": "user" if j % 2 else "assistant", "content": text, "session": 1 + i})
    return rows


def test_planted_facts_are_found_with_their_sentence_in_the_snippet(tmp_path: Path) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in _turns()) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}
    done = subprocess.run(
        [sys.executable, "-m", "botbin", "ingest", "chat.jsonl", "--user", "Ana", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    service = MemoryService(tmp_path, env={})
    for fact, question, answer in FACTS:
        hits = service.search(SearchRequest(query=question, k=5, show_all=True)).hits
        assert any(answer in h.snippet for h in hits), (question, [h.snippet for h in hits])
        top = next(h for h in hits if answer in h.snippet)
        assert fact.rstrip(".") in top.snippet  # the fact's own sentence, not a neighbour's
        lines = (tmp_path / top.path).read_text(encoding="utf-8").split("\n")
        assert answer in "\n".join(lines[top.snippet_start_line : top.snippet_end_line])
