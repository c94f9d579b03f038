"""Directives benchmark: deontic lexer throughput, partition time of a whole vault, precision/recall per modality
(per register: instruction-note and ordinary-note sentences), and the share of Obsidian help vault chunks classed as
rules (vault mode), against the share under the previous rule (every cue of every note) in the same run.

Run from the repo root with the venv active: ``python bench/bench_directives.py [--runs N] [--quick]``
(``--quick``: scores and the vault share only, a few seconds). Prints one JSON object on stdout; progress goes to
stderr. Nothing is written to disk; no model is loaded (the vault share needs only the model's tokenizer).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from botbin.chunking import ChunkerParams, chunk_note
from botbin.directives.evaluate import evaluate, load_labeled
from botbin.directives.lexer import lex
from botbin.directives.partition import partition_note
from botbin.embedding import WordPieceCounter, bundled_model_path
from botbin.parsing import decode_note, parse_note
from common import load_average, log, median, r, timed

REPO = Path(__file__).resolve().parents[1]
OBSIDIAN_HELP = (REPO / ".." / "shared" / "data" / "obsidian-help" / "en").resolve()
LABELED = REPO / "tests" / "fixtures" / "directives"
#: Issue 19 part B: 301 sentences by category, written before the lexer was read (bench/README.md).
HELDOUT3 = REPO / "bench" / "data" / "directives_heldout3.jsonl"
MIN_BYTES = 1_000_000
LEXER_TARGET_MB_S = 1.0  # "about 0.5 s per MB" (lexer.py), so at least 1 MB/s after warm-up
#: Labeled sets: the three instruction-style sets (register "instructions") and the issue-19 sets per register.
LABELED_SETS = (
    "labeled",
    "heldout",
    "blind",
    "register_instructions",
    "register_notes",
    "register_blind",
    "register_blind2",
)
#: Issue 19 targets: per modality, on instruction-note and on ordinary-note sentences.
TARGET_PRECISION, TARGET_RECALL = 0.95, 0.90
#: Issue 19 target: at most this share of the Obsidian help vault's chunks classed as rules (76 % before).
TARGET_VAULT_RULE_SHARE = 0.05

_RULES = (
    "Always run `make lint` before pushing.",
    "Never push to main; open a pull request instead.",
    "You must sign every commit.",
    "Do not commit secrets or `.env` files.",
    "Prefer small, focused commits.",
    "You may skip the changelog for documentation-only changes.",
    "Don't forget to update the lockfile.",
    "Use tabs for indentation in Go files.",
    "If the build fails, revert the last merge.",
    "Avoid global state in request handlers.",
    "You should write a test for every bug fix.",
    "Feel free to refactor code you touch.",
    "It is forbidden to log personal data.",
    "Answer in English unless the user writes in another language.",
    "Dates are ISO 8601.",
)
_PROSE = (
    "The billing service moved from Jenkins to GitHub Actions in 2023.",
    "Most customers pay monthly; about a tenth pay yearly.",
    "The API gateway runs in two regions.",
    "We tried Redis for sessions but went back to Postgres.",
    "See https://example.com/runbook for the on-call notes.",
    'The error said "connection refused" twice last week.',
    "Should we move the cron jobs to the queue?",
)


def synthetic_instructions(min_bytes: int = MIN_BYTES) -> str:
    """A deterministic (random.Random(0)) AGENTS.md-like note of at least ``min_bytes`` UTF-8 bytes: sections
    of rule lists, quoted rules, background prose and code fences."""
    rng = random.Random(0)
    parts = ["---\nbotbin: instructions\nindent: tabs\n---\n# Agent instructions\n"]
    size = len(parts[0])
    section = 0
    while size < min_bytes:
        section += 1
        block = [f"## Section {section}\n", " ".join(rng.choices(_PROSE, k=3)) + "\n"]
        block += [f"- {rule}" for rule in rng.choices(_RULES, k=rng.randint(4, 10))]
        block.append("")
        block.append(f"> {rng.choice(_RULES)}\n")
        if section % 5 == 0:
            block.append("```sh\n# never run this on production\nmake deploy ENV=prod\n```\n")
        text = "\n".join(block) + "\n"
        parts.append(text)
        size += len(text.encode("utf-8"))
    return "".join(parts)


def vault_notes() -> list[tuple[str, bytes]]:
    """(relative path, bytes) of every note of the Obsidian help vault, sorted by path."""
    return [(p.relative_to(OBSIDIAN_HELP).as_posix(), p.read_bytes()) for p in sorted(OBSIDIAN_HELP.rglob("*.md"))]


def repeated_to(text: str, min_bytes: int) -> str:
    """``text`` repeated (blank line between copies) until it holds at least ``min_bytes`` UTF-8 bytes."""
    copies = -(-min_bytes // max(1, len(text.encode("utf-8"))))
    return "\n\n".join([text] * max(1, copies))


def lexer_throughput(text: str, runs: int) -> dict[str, Any]:
    """Median MB/s of ``lex(text)`` over ``runs`` runs, after one warm-up run."""
    size = len(text.encode("utf-8"))
    _, cues = timed(lambda: lex(text))
    times = [timed(lambda: lex(text))[0] for _ in range(runs)]
    seconds = median(times)
    return {
        "bytes": size,
        "runs_s": [r(t) for t in times],
        "median_s": r(seconds),
        "mb_per_s": r(size / 1e6 / seconds, 2),
        "cues": len(cues),
        "target_mb_per_s": LEXER_TARGET_MB_S,
    }


def partition_vault(notes: list[tuple[str, bytes]], runs: int) -> dict[str, Any]:
    """Time to partition every note (parse excluded, and with decode + parse included), median of ``runs``."""
    parsed = []
    for rel, data in notes:
        text = decode_note(data, rel).text
        parsed.append((text, parse_note(text, rel)))

    def partition_all() -> list[Any]:
        return [partition_note(note, text) for text, note in parsed]

    def parse_and_partition_all() -> list[Any]:
        out = []
        for rel, data in notes:
            text = decode_note(data, rel).text
            out.append(partition_note(parse_note(text, rel), text))
        return out

    partition_all()  # warm-up
    only = [timed(partition_all)[0] for _ in range(runs)]
    with_parse = [timed(parse_and_partition_all)[0] for _ in range(runs)]
    parts = partition_all()
    kinds = [k for p in parts for k in p.kinds]
    return {
        "notes": len(notes),
        "bytes": sum(len(d) for _, d in notes),
        "blocks": len(kinds),
        "instruction_notes": sum(p.instruction for p in parts),
        "soft_blocks": kinds.count("soft"),
        "hard_blocks": kinds.count("hard"),
        "directives": sum(len(p.directives) for p in parts),
        "partition_only_s": {"runs": [r(t) for t in only], "median": r(median(only))},
        "decode_parse_partition_s": {"runs": [r(t) for t in with_parse], "median": r(median(with_parse))},
    }


def long_lines() -> dict[str, Any]:
    """Cost on long lines and big blocks (one timed run each): 1 MB of rules as one line vs one rule per line, and
    partition of one 0.25 MB paragraph of 25,000 rule lines. Linear code gives about the same MB/s everywhere."""
    unit = "Use tabs. Never push to main. The CI is slow. "
    one_line = repeated_to(unit, MIN_BYTES).replace("\n", " ")
    per_line = one_line.replace(". ", ".\n")
    out: dict[str, Any] = {}
    for name, text in (("lexer_one_line_1mb", one_line), ("lexer_one_sentence_per_line_1mb", per_line)):
        seconds, cues = timed(lambda: lex(text))  # noqa: B023  (called at once, inside this iteration)
        out[name] = {"seconds": r(seconds), "mb_per_s": r(len(text) / 1e6 / seconds, 2), "cues": len(cues)}
    paragraph = "Never use tabs.\n" * 25_000
    note = parse_note(paragraph, "memory/log.md")
    seconds, part = timed(lambda: partition_note(note, paragraph))
    out["partition_one_paragraph_0.25mb"] = {
        "seconds": r(seconds),
        "mb_per_s": r(len(paragraph) / 1e6 / seconds, 2),
        "blocks": len(note.blocks),
        "cues": len(part.directives[0].cues),
    }
    return out


def _scored(rows: list[Any]) -> dict[str, Any]:
    seconds, ev = timed(lambda: evaluate(rows))
    return {
        "sentences": len(rows),
        "seconds": r(seconds),
        "overall": {
            "precision": r(ev.overall.precision, 3),
            "recall": r(ev.overall.recall, 3),
            "support": ev.overall.support,
        },
        **{
            s.label: {"precision": r(s.precision, 3), "recall": r(s.recall, 3), "support": s.support}
            for s in ev.per_label
        },
        "errors": len(ev.errors),
        "targets_met": all(
            s.precision >= TARGET_PRECISION and s.recall >= TARGET_RECALL
            for s in ev.per_label
            if s.label != "none" and s.support
        ),
    }


def scores() -> dict[str, Any]:
    """Overall and per-modality precision and recall of the lexer on each labeled set, each register apart."""
    out: dict[str, Any] = {}
    pooled: dict[str, list[Any]] = {"instructions": [], "notes": []}
    for name in (*LABELED_SETS, "heldout3"):
        rows = load_labeled(HELDOUT3 if name == "heldout3" else LABELED / f"{name}.jsonl")
        for register, flag in (("instructions", True), ("notes", False)):
            part = [row for row in rows if row.instructions is flag]
            if part:
                out[f"{name}/{register}"] = _scored(part)
                if name.startswith("register_") or name == "heldout3":
                    pooled[register] += part
    for register, rows in pooled.items():  # the issue-19 sets pooled per register, against the targets
        out[f"issue19/{register}"] = _scored(rows)
    return out


def vault_rule_share(notes: list[tuple[str, bytes]]) -> dict[str, Any]:
    """Share of the vault's chunks (vault mode: every note tracked, default chunker) whose kind is hard or soft,
    now and under the previous rule (a block with any cue, imperatives included, was a soft directive)."""
    counter = WordPieceCounter(bundled_model_path())
    now = before = total = 0
    for rel, data in notes:
        text = decode_note(data, rel).text
        note = parse_note(text, rel)
        part = partition_note(note, text)
        old = [
            k
            if k == "hard" or part.instruction
            else ("soft" if b.kind in ("paragraph", "list_item", "quote") and lex(b.text) else "lore")
            for b, k in zip(note.blocks, part.kinds, strict=True)
        ]
        for kinds, is_now in ((part.kinds, True), (old, False)):
            chunks = chunk_note(note, counter, ChunkerParams(), kinds, split_kinds=part.instruction)
            rules = sum(c.kind != "lore" for c in chunks)
            now, before = (now + rules, before) if is_now else (now, before + rules)
            total += len(chunks) if is_now else 0
    share = now / total if total else 0.0
    return {
        "chunks": total,
        "rule_chunks": now,
        "share": r(share, 4),
        "previous_rule_chunks": before,
        "previous_share": r(before / total if total else 0.0, 4),
        "ratio_to_previous": r(now / before if before else 0.0, 3),
        "target_share": TARGET_VAULT_RULE_SHARE,
        "target_met": share <= TARGET_VAULT_RULE_SHARE,
    }


def run(runs: int, quick: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"load_average_at_start": load_average()}
    if OBSIDIAN_HELP.is_dir():
        log("share of the Obsidian help vault's chunks classed as rules")
        result["vault_rule_share"] = vault_rule_share(vault_notes())
    else:
        result["vault_rule_share"] = f"skipped: {OBSIDIAN_HELP} is absent"
    if quick:
        result["scores"] = scores()
        result["load_average_at_end"] = load_average()
        return result
    synthetic = synthetic_instructions()
    log(f"lexer on a synthetic instruction note ({len(synthetic.encode()) / 1e6:.2f} MB)")
    result["lexer_synthetic_instructions"] = lexer_throughput(synthetic, runs)
    if OBSIDIAN_HELP.is_dir():
        notes = vault_notes()
        text = repeated_to("\n\n".join(decode_note(d, rel).text for rel, d in notes), MIN_BYTES)
        log(f"lexer on the Obsidian help vault, concatenated ({len(text.encode()) / 1e6:.2f} MB)")
        result["lexer_obsidian_help"] = {"vault": str(OBSIDIAN_HELP), **lexer_throughput(text, runs)}
        log(f"partition of every note of the vault ({len(notes)} notes)")
        result["partition_obsidian_help"] = partition_vault(notes, runs)
    else:
        result["lexer_obsidian_help"] = result["partition_obsidian_help"] = f"skipped: {OBSIDIAN_HELP} is absent"
    log("long lines and big blocks")
    result["long_lines"] = long_lines()
    log("precision and recall on the labeled sets")
    result["scores"] = scores()
    result["load_average_at_end"] = load_average()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement (median reported)")
    parser.add_argument("--quick", action="store_true", help="scores and the vault share only")
    args = parser.parse_args()
    print(json.dumps(run(max(1, args.runs), args.quick), indent=2))


if __name__ == "__main__":
    main()
