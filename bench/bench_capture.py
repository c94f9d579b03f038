"""Conversation capture on labelled lines: are standing instructions kept as rules, and small talk left out?

Run from the repo root with the venv active: ``python bench/bench_capture.py [FILE.jsonl ...]`` (default: the
labelled sets in tests/fixtures/conversation/). Prints one JSON object on stdout (progress on stderr);
``--out FILE`` also writes it there. Point PYTHONPATH at another checkout's ``server/`` to measure that code.

Each line ``{"role", "content", "label"}`` is one turn of a user of its own (so nothing else in memory sways the
admission gate), observed by a ``TurnObserver`` with the real all-MiniLM-L6-v2 and flushed to that user's soul
file, as ``botbin ingest`` does. Labels: ``rule`` (a user's standing instruction), ``not_rule`` (a habit, a
hedge, a question, a one-off request, someone else's rule, an assistant's advice), ``smalltalk`` (greetings,
thanks, acknowledgements, pleasantries) and ``fact`` (content worth keeping). A line *is a rule* when its bullet
is a rule bullet and the soul file's partition (an ordinary note) makes it a soft directive; it is *stored*
when its soul file holds a bullet for it.

Reported per file and overall: rule precision and recall (over every line), small-talk rejection precision
(of the lines left out, the share that were small talk, over small talk, facts and rules) and recall (of the
small talk, the share left out), and the lines each verdict got wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from botbin.directives.partition import partition_source
from botbin.memory.conversation.distill import RULE_MARK
from botbin.memory.conversation.soul import soul_rel
from botbin.memory.conversation.turns import Turn
from botbin.service import MemoryService
from common import log, r

SETS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "conversation"


def verdicts(service: MemoryService, rows: list[dict[str, Any]]) -> list[tuple[bool, bool]]:
    """(stored, rule) for each row, each row the only turn of its own user."""
    observer = service.observer()
    users = [f"labelled-{i}" for i in range(len(rows))]
    for user, row in zip(users, rows, strict=True):
        observer.observe(Turn(row["role"], row["content"], user, "s1"))
    observer.flush()
    out = []
    for user in users:
        rel = soul_rel(service.ws.settings.soul_dir, user)
        path = service.root / rel
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        bullets = [line for line in text.split("\n") if line.startswith("- ")]
        _, part = partition_source(text, rel)
        soft = any(d.kind == "soft" and RULE_MARK in d.text for d in part.directives)
        out.append((bool(bullets), soft and any(RULE_MARK in b for b in bullets)))
    return out


def _ratio(a: int, b: int) -> float | None:
    return r(a / b) if b else None


def metrics(rows: list[dict[str, Any]], found: list[tuple[bool, bool]]) -> dict[str, Any]:
    """Rule precision/recall and small-talk rejection precision/recall, with the lines each got wrong."""
    labels = [row["label"] for row in rows]
    rule_tp = sum(lab == "rule" and rule for lab, (_, rule) in zip(labels, found, strict=True))
    rule_fp = sum(lab != "rule" and rule for lab, (_, rule) in zip(labels, found, strict=True))
    rules = labels.count("rule")
    kept = [
        (lab, stored) for lab, (stored, _) in zip(labels, found, strict=True) if lab in ("smalltalk", "fact", "rule")
    ]
    small_tp = sum(lab == "smalltalk" and not stored for lab, stored in kept)
    small_fp = sum(lab != "smalltalk" and not stored for lab, stored in kept)
    wrong = {
        "missed_rules": [
            row["content"] for row, (_, rule) in zip(rows, found, strict=True) if row["label"] == "rule" and not rule
        ],
        "false_rules": [
            row["content"] for row, (_, rule) in zip(rows, found, strict=True) if row["label"] != "rule" and rule
        ],
        "stored_small_talk": [
            f"{row['role']}: {row['content']}"
            for row, (stored, _) in zip(rows, found, strict=True)
            if row["label"] == "smalltalk" and stored
        ],
        "dropped_content": [
            f"{row['role']}: {row['content']}"
            for row, (stored, _) in zip(rows, found, strict=True)
            if row["label"] in ("fact", "rule") and not stored
        ],
    }
    return {
        "lines": len(rows),
        "rule_precision": _ratio(rule_tp, rule_tp + rule_fp),
        "rule_recall": _ratio(rule_tp, rules),
        "small_talk_precision": _ratio(small_tp, small_tp + small_fp),
        "small_talk_recall": _ratio(small_tp, labels.count("smalltalk")),
        **wrong,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "files", nargs="*", type=Path, help="labelled JSONL files (default: tests/fixtures/conversation)"
    )
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args(argv)
    files = args.files or sorted(SETS.glob("capture_*.jsonl"))
    result: dict[str, Any] = {}
    every: list[dict[str, Any]] = []
    found_all: list[tuple[bool, bool]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            root = Path(tmp) / path.stem
            root.mkdir()
            log(f"{path.name}: {len(rows)} lines")
            found = verdicts(MemoryService(root, env={}), rows)
            result[path.name] = metrics(rows, found)
            every += rows
            found_all += found
    result["overall"] = {k: v for k, v in metrics(every, found_all).items() if not isinstance(v, list)}
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
