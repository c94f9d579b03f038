"""The one list of botbin's benchmarks: what each measures, how to run it, and which runs include it. ``report.py``
(docs/benchmarks.md), ``run_all.py`` (one combined JSON) and the command list of bench/README.md
(``python scripts/gen_protocol.py``) all read it. One-off experiments, each of which answered one question, live in
``bench/experiments/`` with their recorded results, and are not listed here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Benchmark:
    """One benchmark script of bench/."""

    name: str
    """Its name in report.py's ``--only`` and in the results folder (``NAME.json``)."""
    script: str
    """Its file in bench/."""
    usage: str
    """The options a person passes, as the README shows them ("" for none)."""
    what: str
    """What it measures, and about how long it takes."""
    full: tuple[str, ...] | None = None
    """Arguments of a full report run; None: report.py leaves it out."""
    quick: tuple[str, ...] | None = None
    """Arguments of ``report.py --quick``; None: left out of --quick (too slow even when small, or it installs)."""
    ci: tuple[str, ...] | None = None
    """Arguments of ``report.py --ci`` (no cache, no network, about a minute); None: not a CI benchmark."""
    run_all: tuple[str, ...] | None = None
    """Arguments in ``run_all.py`` (its ``--quick`` adds ``quick_run_all``); None: left out of it."""
    quick_run_all: tuple[str, ...] = ()
    """What ``run_all.py --quick`` passes instead of ``run_all``."""


BENCHMARKS: tuple[Benchmark, ...] = (
    # -- in the report, in report order --------------------------------------------------------------------------
    Benchmark(
        name="scifact",
        script="bench_scifact.py",
        usage="[--split train] [--quick]",
        what="BEIR SciFact nDCG@10, BM25 / vector / hybrid (~30 min first sync, then ~20-60 s)",
        full=(),
        quick=("--quick",),
        ci=("--tiny",),
    ),
    Benchmark(
        name="locomo",
        script="bench_locomo.py",
        usage="[--quick]",
        what="LoCoMo evidence recall@5/@10, raw turns vs best layout (~10 min first, ~6 s cached)",
        full=(),
        quick=("--quick",),
    ),
    Benchmark(
        name="obsidian",
        script="bench_obsidian_queries.py",
        usage="[--quick] [--fresh]",
        what="60 hand-written questions on the Obsidian help vault: hit@k, MRR (real model)",
        full=(),
        quick=("--quick",),
    ),
    Benchmark(
        name="small_memory",
        script="bench_small_memory.py",
        usage="[--split tune|heldout]",
        what="7 small agent memories, 94 written questions: top-1 / top-3 (~10 s, real model)",
        full=(),
        quick=(),
    ),
    Benchmark(
        name="migration",
        script="bench_migration.py",
        usage="[--notes 60] [--gap-ms 20]",
        what="model migration on the help vault: wall time vs a plain re-embed, search p95 during vs idle, "
        "switch back, kill -9 (~2 min; --notes 0: all 173 notes)",
    ),
    Benchmark(
        name="embed",
        script="bench_embed.py",
        usage="",
        what="embedding chunks/s: plain, botbin, ONNX fp32/int8, torch int8 (~3-4 min)",
        full=(),
    ),
    Benchmark(
        name="sync",
        script="bench_sync.py",
        usage="[--quick]",
        what="sync: Obsidian help vault + 10,000-note synthetic vault (~4 min on 2 cores; --quick ~2 min)",
        full=(),
        quick=("--quick",),
        run_all=(),
        quick_run_all=("--quick",),
    ),
    Benchmark(
        name="query",
        script="bench_query.py",
        usage="[--sizes 10000,100000]",
        what=("query latency at 10k/100k/1M chunks vs numpy, FAISS, usearch (~5-6 min, ~8 GB RAM; 10k,100k: ~1 min)"),
        full=("--sizes", "10000,100000,1000000"),
        quick=("--sizes", "10000"),
        ci=("--sizes", "10000"),
        run_all=(),
        quick_run_all=("--sizes", "10000,100000"),
    ),
    Benchmark(
        name="lsp",
        script="bench_lsp.py",
        usage="",
        what="language server: hover, search, save-to-searchable (~2 min, real model)",
        full=(),
        run_all=(),
    ),
    Benchmark(
        name="lsp_load",
        script="bench_lsp_load.py",
        usage="",
        what="language server under 2 bursts of 10,000 hovers + searches (~7 min, real model)",
        full=(),
        run_all=(),
    ),
    Benchmark(
        name="encryption",
        script="bench_encryption.py",
        usage="[--notes N]",
        what="AES-256-GCM + Argon2id: key derivation, sync, index load, size",
        full=(),
        quick=("--notes", "200"),
    ),
    Benchmark(
        name="peer",
        script="bench_peer.py",
        usage="[--reinstall] [--runs 3]",
        what="botbin vs memsearch on the Obsidian help vault (~4 min; first run installs it)",
        full=(),
    ),
    Benchmark(
        name="planted",
        script="bench_planted.py",
        usage="[--quick]",
        what="10 planted facts, then 1,000 / 10,000 chatter turns: recall@5 (real model)",
        full=(),
        quick=("--quick",),
    ),
    Benchmark(
        name="locomo_ingest",
        script="bench_locomo_ingest.py",
        usage="[--quick]",
        what="LoCoMo recall through botbin ingest (soul files) vs raw turns (~1.5 min, --quick < 1 min)",
        full=(),
        quick=("--quick",),
    ),
    Benchmark(
        name="lifecycle",
        script="bench_lifecycle.py",
        usage="[--quick]",
        what="memo lifecycle: reinforcement/decay cost per search, prune, consolidate (~1 min)",
        full=(),
        quick=("--quick",),
        ci=("--quick",),
    ),
    # -- run by hand (each section of bench/README.md says when it was run and what it found) -------------------
    Benchmark(
        name="directives",
        script="bench_directives.py",
        usage="",
        what="deontic lexer MB/s, vault partition time, precision/recall (~20 s, no model)",
        run_all=(),
    ),
    Benchmark(
        name="noop_sync",
        script="bench_noop_sync.py",
        usage="--baseline-ref main",
        what="no-op re-sync of 10k notes vs a baseline revision (~6 min)",
    ),
    Benchmark(
        name="planted_cli",
        script="bench_planted_cli.py",
        usage="[--turns 1000 10000]",
        what=(
            "10 facts, chatter about the same subjects, botbin ingest + botbin search -k 5 (real "
            "model, ~3 min per 1,000 turns)"
        ),
    ),
    Benchmark(
        name="planted_vault",
        script="bench_planted_vault.py",
        usage="[--weights NOTE,NEAR ...]",
        what="24 facts planted in help-vault notes about something else: hit@1, snippet (~20 s, real model)",
    ),
    Benchmark(
        name="cold_search",
        script="bench_cold_search.py",
        usage="[--quick]",
        what='cold `botbin search` (ONNX) vs `python -c "import torch"`, warm latency (real model)',
    ),
    Benchmark(
        name="embed_backends",
        script="bench_embed_backends.py",
        usage="[--quick]",
        what="sync-side encode: torch vs botbin's ONNX export, engine batches (real model)",
    ),
    Benchmark(
        name="ann",
        script="bench_ann.py",
        usage="[--sizes 100000] [--store 100000] [--cache DIR] [--sweep 256x100]",
        what=(
            "HNSW + exact rescoring vs numpy exact; --store: through MemoryIndex.search (and its vector stage alone)"
        ),
    ),
    Benchmark(
        name="first_call",
        script="bench_first_call.py",
        usage="[--only examples,obsidian,synthetic] [--notes 1000,10000] [--cache DIR] [--cache-modes off,cold,warm]",
        what=(
            "first LSP hover / MCP search_memory after start vs warm; start-up at 10k notes, load "
            "cache off / cold / warm"
        ),
    ),
    Benchmark(
        name="lsp_save",
        script="bench_lsp_save.py",
        usage="[--notes 334,10000] [--cache DIR]",
        what="save-to-searchable through botbin lsp at two vault sizes (synthetic, real model per save)",
    ),
    Benchmark(
        name="save_service",
        script="bench_save_service.py",
        usage="",
        what="save-to-searchable through the service, step by step, at two vault sizes",
    ),
    Benchmark(
        name="save_steps",
        script="bench_save_steps.py",
        usage="",
        what="index-side cost of one save at several vault sizes (upsert, first search after it)",
    ),
    Benchmark(
        name="big_note",
        script="bench_big_note.py",
        usage="[--sizes 100,1000,5000]",
        what="one big note synced: s and CPU s per MB, peak RSS (hash embedder)",
    ),
    Benchmark(
        name="locomo_daily",
        script="bench_locomo_daily.py",
        usage="[--quick]",
        what="LoCoMo through the daily-note layout an agent keeps (real model)",
    ),
    Benchmark(
        name="capture",
        script="bench_capture.py",
        usage="[FILE.jsonl ...]",
        what="conversation capture on labelled lines: rules kept, small talk left out",
    ),
    Benchmark(
        name="postgres",
        script="bench_postgres.py",
        usage="[--quick]",
        what="team memory on PostgreSQL + pgvector against the embedded index: same answers, latency, recall",
    ),
    Benchmark(
        name="hosts",
        script="bench_hosts.py",
        usage="[--quick] [--skip-host]",
        what=(
            "Claude Code hooks: first prompt with server start, warm prompt p95, 10 facts across 5 "
            "real Claude Code sessions of 200 turns (~11 min; --quick 40 turns, ~3 min)"
        ),
    ),
    Benchmark(
        name="openclaw",
        script="bench_openclaw.py",
        usage="[--quick] [--skip-host]",
        what=(
            "OpenClaw context engine: assemble p95 on the warm server, cold start, 10 facts across 5 "
            "real OpenClaw sessions of 200 turns (~9 min; --quick 40 turns, ~3 min)"
        ),
    ),
    Benchmark(
        name="studio",
        script="bench_studio.py",
        usage="[--repeat 5]",
        what=(
            "Recall Studio: first paint of each view in headless Chromium; its search against the CLI's warm search "
            "and the direct service call, same run (~1.5 min, most of it the cold sync)"
        ),
    ),
    Benchmark(
        name="fuzz",
        script="fuzz_run.py",
        usage="[--examples N] [--seconds S]",
        what="long fuzz run: the tests/fuzz strategies at random, per target",
    ),
    Benchmark(
        name="fuzz_atheris",
        script="fuzz_atheris.py",
        usage="aifbin|markdown [libFuzzer flags, e.g. -max_total_time=60]",
        what="coverage-guided fuzzing with atheris (libFuzzer; pip install atheris), the same promises as tests/fuzz",
    ),
)

BY_NAME = {benchmark.name: benchmark for benchmark in BENCHMARKS}
#: What report.py runs and renders, in report order.
REPORTED = tuple(b for b in BENCHMARKS if b.full is not None)


def readme_listing() -> str:
    """The command list of bench/README.md, one line per benchmark."""
    lines = ["```sh", ". .venv/bin/activate"]
    for b in BENCHMARKS:
        command = f"python bench/{b.script}" + (f" {b.usage}" if b.usage else "")
        lines.append(f"{command:<40} # {b.what}")
    lines += [
        "python bench/run_all.py [--quick] > bench-results.json   # "
        + ", ".join(b.name for b in BENCHMARKS if b.run_all is not None)
        + ": one combined JSON",
        "python bench/report.py [--quick|--ci|--only NAME,...]   # the report: docs/benchmarks.md",
        "```",
    ]
    return "\n".join(lines)
