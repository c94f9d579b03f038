"""Planted facts through the CLI, with chatter that talks about the same things: 10 facts told in a conversation,
then N turns of small talk built from varied templates, ``botbin ingest``, then ``botbin search -k 5`` per
question, in separate processes, the way a user or an agent shelling out would.

Run from the repo root with the venv active: ``python bench/bench_planted_cli.py [--turns 1000 10000]``.
Prints one JSON object on stdout (progress on stderr).

Unlike ``bench_planted.py`` (chatter over 24 unrelated topics), this chatter is built to be hard: a third of it
talks about the facts' own subjects (pets, the gym, birthdays, cars, teachers, medicine) without their answers
("my neighbour's dog barks all night", "the gym changed its opening hours"), with 40 templates, several speakers'
phrasings and random lengths, so that a fact must win against turns that share its words. A fact counts as found
when the snippet of one of the 5 hits returned shows the answer (``found@5``: what the user reads; ``--json`` hits
carry no chunk text), and ``found@1`` when the first hit's does. Deterministic (random.Random(seed)).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench_planted import FACTS
from common import log, r

#: Subjects of the facts, talked about in the chatter without the facts' answers.
NEAR = (
    "my neighbour's dog",
    "the gym",
    "my cousin's birthday",
    "the blood donation drive",
    "my old car",
    "the dessert menu",
    "our landlord",
    "the pharmacy",
    "my daughter's school",
    "the wedding we went to",
    "Norway",
    "the violin concert",
    "my sister",
    "the dentist",
    "the locker room",
)
FAR = (
    "the weather",
    "football",
    "a TV series",
    "the traffic",
    "a podcast",
    "houseplants",
    "the office printer",
    "a board game",
    "the bus timetable",
    "a crossword",
)
OPEN = ("", "Honestly, ", "By the way, ", "So ", "Funny thing: ", "Anyway, ", "Ugh, ", "Random thought: ", "Oh, ")
SAY = (
    "{o}{t} came up again today.",
    "{o}I keep thinking about {t}.",
    "{o}did I tell you about {t}? Long story.",
    "{o}{t} was all anyone talked about at lunch, for {n} minutes at least.",
    "{o}I read something about {t} last night and couldn't sleep.",
    "{o}my friend has opinions about {t}. Strong ones.",
    "{o}not sure what to make of {t} lately.",
    "{o}we should plan something around {t}, maybe with {n} people.",
    "{o}{t} reminded me of something from years ago.",
    "{o}what do you think about {t}?",
    "{o}I had a weird dream about {t}.",
    "{o}{t} is getting more expensive every year.",
    "{o}can you remind me later to look into {t}?",
    "{o}I was late again because of {t}.",
    "{o}there was a long queue at {t} this morning.",
    "{o}I told Sam about {t} and he laughed for {n} seconds.",
    "{o}{t} is the reason I was up until {n} past midnight.",
    "{o}I saw a documentary that mentioned {t}.",
    "{o}honestly {t} is overrated.",
    "{o}I might write something about {t} one day.",
)
REPLY = (
    "That sounds nice!",
    "Ha, I know what you mean.",
    "Tell me more about it sometime.",
    "Interesting, I had no idea.",
    "Oh really? What happened next?",
    "I can look into {t} for you if you like.",
    "Noted. Anything else about {t}?",
    "Sounds like {t} keeps you busy.",
    "I hope {t} gets better soon.",
    "Good to know!",
)


def turns(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """The facts, then ``n`` chatter turns (a third about the facts' subjects), as ``botbin ingest`` rows."""
    rng = random.Random(seed)
    rows = [{"role": "user", "content": fact} for fact, _, _ in FACTS]
    for i in range(n):
        topic = rng.choice(NEAR if rng.random() < 0.33 else FAR)
        if i % 2:
            rows.append({"role": "assistant", "content": rng.choice(REPLY).format(t=topic)})
        else:
            text = rng.choice(SAY).format(o=rng.choice(OPEN), t=topic, n=rng.randint(2, 90))
            rows.append({"role": "user", "content": text[0].upper() + text[1:]})
    start = datetime(2026, 10, 1, 12, tzinfo=UTC)
    for i, row in enumerate(rows):  # 60 turns a day, a day a session (10,000 turns span 167 days)
        day = i // 60
        stamp = start + timedelta(days=day, minutes=i % 60)
        row |= {"timestamp": stamp.strftime("%Y-%m-%dT%H:%M:%SZ"), "session": f"s{day + 1}"}
    return rows


def botbin(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI of this venv; raises on failure."""
    exe = Path(sys.executable).with_name("botbin")
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"botbin {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return proc


def run_size(n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="botbin-planted-cli-") as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        log_file = Path(tmp) / "turns.jsonl"
        log_file.write_text("".join(json.dumps(t) + "\n" for t in turns(n)), encoding="utf-8")
        started = time.perf_counter()
        botbin("ingest", "-w", str(root), str(log_file))
        ingest_s = time.perf_counter() - started
        found = first = 0
        missed = []
        for _, question, answer in FACTS:
            hits = json.loads(botbin("search", "-w", str(root), "-k", "5", "--json", question).stdout)["hits"]
            shown_texts = [h["snippet"].casefold() for h in hits]
            ok = any(answer.casefold() in t for t in shown_texts)
            found += ok
            first += bool(hits) and answer.casefold() in shown_texts[0]
            if not ok:
                missed.append(question)
        return {
            "chatter_turns": n,
            "found@5": r(found / len(FACTS)),
            "found@1": r(first / len(FACTS)),
            "missed": missed,
            "ingest_s": r(ingest_s, 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, nargs="*", default=[1000])
    args = parser.parse_args()
    sizes = []
    for n in args.turns:
        log(f"{n} chatter turns")
        sizes.append(run_size(n))
        log(json.dumps(sizes[-1]))
    print(json.dumps({"benchmark": "planted_cli", "facts": len(FACTS), "sizes": sizes}, indent=1))


if __name__ == "__main__":
    main()
