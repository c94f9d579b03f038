"""Planted facts in a real vault: 24 facts, each added to a different note of the Obsidian help vault (a note
about something else), then asked for in plain words. Does the top hit land on the fact, not on the note that
is about the question's topic?

Run from the repo root with the venv active: ``python bench/bench_planted_vault.py [--weights N,M ...]``.
Prints one JSON object on stdout (progress on stderr).

The synced help vault of ``bench_obsidian_queries.py`` (its cache, ``common.CACHE_ROOT``) is copied to a temporary
folder, the facts are planted (half as a paragraph of their own at the end of the note, half as a sentence added
to the end of an existing paragraph in the middle of the note: the neighbours of a fact are about something
else), and the copy is synced again (only the planted notes change). Each question is searched with one best
chunk per note, top 5. Reported per weighting (``note_weight,neighbour_weight``; the default is the settings'):
hit@1 and hit@5 of the planted note, and how often the top hit's snippet shows the answer word. The facts and
their questions are varied on purpose: rare names ("Zanzibar"), numbers, paraphrases that share one word or none
with the fact.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench_obsidian_queries import prepare_workspace
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest
from common import QUALITY_SETTINGS, log, r

#: (fact sentence, question, answer word that the snippet should show)
FACTS: tuple[tuple[str, str, str], ...] = (
    (
        "The Zanzibar lighthouse keepers meet every second Tuesday.",
        "When do the Zanzibar lighthouse keepers meet?",
        "Tuesday",
    ),
    ("Our office wifi password is marmalade-42.", "what is the office wifi password", "marmalade-42"),
    ("My dentist, Dr. Ferreira, moved her practice to Lisbon.", "Where did my dentist move her practice?", "Lisbon"),
    ("The quarterly budget review was postponed to March 14.", "when is the budget review now", "March"),
    ("Grandma's lemon cake needs exactly 180 grams of sugar.", "how much sugar goes into grandma's lemon cake", "180"),
    ("The spare key to the shed hangs behind the calendar.", "where is the spare shed key", "calendar"),
    (
        "Kestrel is the codename of the billing migration project.",
        "What is the billing migration called internally?",
        "Kestrel",
    ),
    ("Our cat Miso only eats salmon-flavoured food.", "what food does Miso eat", "salmon"),
    ("The production database backups run at 03:15 UTC.", "What time do the database backups run?", "03:15"),
    ("My passport expires in August 2029.", "When does my passport expire?", "2029"),
    ("Priya prefers to be contacted on Signal, not email.", "How should I reach Priya?", "Signal"),
    ("The bike lock combination is 9-3-7-1.", "bike lock code", "9-3-7-1"),
    ("Tomas is allergic to hazelnuts.", "Which nut is Tomas allergic to?", "hazelnuts"),
    ("We rented the cabin near Lake Bled for the retreat.", "where is the team retreat cabin", "Bled"),
    ("The invoice template lives in the Finance shared drive.", "Where can I find the invoice template?", "Finance"),
    ("The plumber recommended replacing the boiler before winter.", "What did the plumber recommend?", "boiler"),
    ("My library card number is 55120934.", "library card number", "55120934"),
    ("The staging server was renamed from atlas to hermes.", "What is the staging server called now?", "hermes"),
    ("Aunt Rosa's birthday falls on the ninth of November.", "When is Aunt Rosa's birthday?", "November"),
    ("The sourdough starter is fed with rye flour twice a day.", "What flour do I feed the sourdough starter?", "rye"),
    (
        "The conference talk was accepted for the Berlin track.",
        "which track was my conference talk accepted for",
        "Berlin",
    ),
    ("Our car insurance renews with Allianz each April.", "who is our car insurer", "Allianz"),
    ("The greenhouse tomatoes get watered at dawn.", "When should the greenhouse tomatoes be watered?", "dawn"),
    ("Noah's piano lessons moved to Thursday afternoons.", "When are Noah's piano lessons?", "Thursday"),
)


#: The end of a prose paragraph (a line that starts with a letter, not a heading, list, table or quote marker)
#: followed by a blank line.
_PROSE_END = re.compile(r"^[A-Za-z][^\n]*[a-z.](?=\n\n)", re.MULTILINE)


def plant(root: Path, seed: int = 7) -> dict[str, str]:
    """Add each fact to a different note (chosen with random.Random(seed)); {question: note path}."""
    rng = random.Random(seed)
    notes = sorted(p for p in root.rglob("*.md") if "memory" not in p.relative_to(root).parts[:1])
    chosen = rng.sample([p for p in notes if p.stat().st_size > 1500], len(FACTS))
    where: dict[str, str] = {}
    for i, ((fact, question, _), path) in enumerate(zip(FACTS, chosen, strict=True)):
        text = path.read_text(encoding="utf-8")
        if i % 2 == 0:
            text = text.rstrip("\n") + "\n\n" + fact + "\n"
        else:
            ends = [m.end() for m in _PROSE_END.finditer(text)]
            at = ends[len(ends) // 2] if ends else len(text.rstrip("\n"))
            text = text[:at] + " " + fact + text[at:]
        path.write_text(text, encoding="utf-8")
        where[question] = path.relative_to(root).as_posix()
    return where


def evaluate(service: MemoryService, where: dict[str, str]) -> dict[str, Any]:
    """hit@1, hit@5 and snippet@1 (the top hit's snippet shows the answer) over FACTS."""
    h1 = h5 = shown = 0
    misses = []
    for _, question, answer in FACTS:
        hits = service.search(
            SearchRequest(query=question, k=5, best_per_note=True, show_all=True), reinforce=False
        ).hits
        paths = [h.path for h in hits]
        target = where[question]
        h1 += bool(paths) and paths[0] == target
        h5 += target in paths
        shown += bool(hits) and paths[0] == target and answer.lower() in (hits[0].snippet or "").lower()
        if not paths or paths[0] != target:
            rank = paths.index(target) + 1 if target in paths else None
            misses.append({"q": question, "rank": rank, "top": paths[0] if paths else None})
    n = len(FACTS)
    return {"hit@1": r(h1 / n), "hit@5": r(h5 / n), "snippet@1": r(shown / n), "misses": misses[:6]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", nargs="*", default=[], help="note_weight,neighbour_weight pairs to compare")
    args = parser.parse_args()
    cache, _ = prepare_workspace(fresh=False)
    if not (cache / "memory").is_dir():
        MemoryService(cache, QUALITY_SETTINGS).sync()
    out: dict[str, Any] = {"benchmark": "planted_vault", "facts": len(FACTS), "rankings": {}}
    with tempfile.TemporaryDirectory(prefix="botbin-planted-vault-") as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(cache, root)
        where = plant(root)
        log(f"planted {len(where)} facts; syncing")
        MemoryService(root, QUALITY_SETTINGS).sync()
        for label in ["default", *args.weights]:
            settings = dict(QUALITY_SETTINGS)
            if label != "default":
                note_w, near_w = (float(x) for x in label.split(","))
                settings |= {"note_weight": note_w, "neighbour_weight": near_w}
            out["rankings"][label] = evaluate(MemoryService(root, settings), where)
            log(f"{label}: {out['rankings'][label]['hit@1']}")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
