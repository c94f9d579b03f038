"""Render benchmark JSON (bench/out/results/*.json, written by report.py) as docs/benchmarks.md + PNG plots.

Every section reads one benchmark's JSON defensively: a benchmark that was not run, failed or skipped gets a
one-line note instead of a table, so a partial run still renders. Plots (matplotlib, Agg backend) go to
``benchmarks/`` beside the markdown file: query latency against corpus size (log-log) and SciFact recall
against k per method.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import report_sections as sections

Json = dict[str, Any]


def _load(folder: Path, name: str) -> Json | None:
    """``NAME.json`` as a dict; None when there is no such file; ``{"failed": why}`` when it cannot be read
    as a JSON object (so the report says so instead of "not run")."""
    path = folder / f"{name}.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return {"failed": f"{path.name} is unreadable ({type(exc).__name__}: {str(exc)[:120]})"}
    return data if isinstance(data, dict) else {"failed": f"{path.name} holds a {type(data).__name__}, not an object"}


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):  # about 3-4 significant digits
        return (
            f"{value:,.0f}"
            if abs(value) >= 1000
            else f"{value:.1f}"
            if abs(value) >= 100
            else (f"{value:.2f}" if abs(value) >= 10 else f"{value:.{digits}f}")
        )
    return str(value)


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """A markdown table."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return [*out, ""]


def _missing(name: str, data: Json | None) -> list[str] | None:
    if data is None:
        return [f"_Not run: no `{name}.json`._", ""]
    if "failed" in data:
        return [f"_`{name}` failed: {data['failed']}._", ""]
    if "skipped" in data:
        return [f"_`{name}` skipped: {data['skipped']}._", ""]
    return None


def machine() -> list[str]:
    """Date, machine (cores, memory, CPU model) and the commit the figures belong to."""
    mem = cpu = "?"
    try:
        kib = next(
            int(x.split()[1]) for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal")
        )
        mem = f"{kib / 1024 / 1024:.1f} GiB"
        cpu = next(
            x.split(":", 1)[1].strip()
            for x in Path("/proc/cpuinfo").read_text().splitlines()
            if x.startswith("model name")
        )
    except (OSError, StopIteration, ValueError):
        pass
    try:
        commit = (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent
            ).stdout.strip()
            or "?"
        )
    except OSError:
        commit = "?"
    return [
        f"Rendered {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on top of commit `{commit}` on {platform.system()} "
        f"{platform.machine()}: {os.cpu_count()} cores ({cpu}), {mem} memory. Where a benchmark records the load "
        "average (1 / 5 / 15 min) its section gives it; wall-clock figures from a loaded machine are upper "
        "bounds.",
        "",
    ]


def scifact(data: Json | None, plots: Path) -> list[str]:
    out: list[str] = []
    missing = _missing("scifact", data)
    if missing or data is None:
        return out + (missing or [])
    res = data.get("results", {})
    keys = sorted(
        {k for m in res.values() for k in m if re.fullmatch(r"(ndcg|recall)@\d+", k)},
        key=lambda k: (k.split("@")[0] != "ndcg", int(k.split("@")[1])),
    )
    out += table(
        ["method", *keys], [[m, *[res[m].get(k) for k in keys]] for m in ("bm25", "vector", "hybrid") if m in res]
    )
    hybrid = res.get("hybrid", {}).get("ndcg@10")
    interval = res.get("hybrid", {}).get("ndcg@10_ci95")
    ci = ""
    if isinstance(interval, list) and len(interval) == 2:
        ci = f" (95 % bootstrap interval of the mean over these queries: {interval[0]:.3f}-{interval[1]:.3f})"
    subset = (
        "tiny corpus: its scores only show the pipeline works"
        if data.get("tiny")
        else "quick subset"
        if data.get("quick")
        else "the whole split"
    )
    out += [
        f"{data.get('queries')} queries ({subset}); "
        f"target for the default (hybrid) search: nDCG@10 >= 0.74 — "
        f"{'met' if hybrid is not None and hybrid >= 0.74 else 'not met'}{ci}. Figures the issue quotes for "
        "this data: BM25 ~0.65-0.665, all-MiniLM-L6-v2 dense ~0.645, naive 0.7/0.3 min-max hybrid ~0.715. "
        "Settings were tuned on the train split only; what was tried is in bench/README.md.",
        "",
    ]
    recall_keys = [k for k in keys if k.startswith("recall@")]
    if len(recall_keys) >= 2:
        ks = [int(k.split("@")[1]) for k in recall_keys]
        series = {m: [res[m][k] for k in recall_keys] for m in ("bm25", "vector", "hybrid") if m in res}
        name = _plot(
            plots,
            "scifact_recall_at_k.png",
            "SciFact: recall@k",
            "k",
            "recall@k",
            {m: (ks, v) for m, v in series.items()},
            logx=True,
        )
        out += [f"![SciFact recall against k per method](benchmarks/{name})", ""]
    return out


def locomo(data: Json | None, _plots: Path) -> list[str]:
    out: list[str] = []
    missing = _missing("locomo", data)
    if missing or data is None:
        return out + (missing or [])
    get = sections.get
    rows = []
    layouts = data.get("layouts")
    for name in layouts if isinstance(layouts, dict) else {}:
        recall = get(layouts, f"{name}.recall")
        for split in recall if isinstance(recall, dict) else {}:
            rows.append(
                [
                    name,
                    split,
                    *(get(recall, f"{split}.overall.{k}") for k in ("n", "@5", "@10")),
                    *(get(recall, f"{split}.cat{c}.@10") for c in (1, 2, 3, 4)),
                ]
            )
    out += table(
        [
            "layout",
            "conversations",
            "questions",
            "recall@5",
            "recall@10",
            "multi-hop (1) @10",
            "temporal (2) @10",
            "open-domain (3) @10",
            "single-hop (4) @10",
        ],
        rows,
    )
    want, met = data.get("targets_best_all"), data.get("targets_met")
    if isinstance(want, dict) and isinstance(met, dict):
        out += [
            "Targets for the best layout, all conversations: "
            + ", ".join(f"recall{k} ≥ {v} ({'met' if met.get(k) else 'not met'})" for k, v in want.items())
            + ".",
            "",
        ]
    out += [
        "Layouts were tuned on conversations 0-4 (5-9 held out); BM25's k1 / b were chosen on all ten (see "
        "bench/README.md). Categories are LoCoMo's QA types.",
        "",
    ]
    return out


def obsidian(data: Json | None, _plots: Path) -> list[str]:
    out: list[str] = []
    missing = _missing("obsidian", data)
    if missing or data is None:
        return out + (missing or [])
    rows = []
    for method, block in data.items():
        overall = block.get("overall") if isinstance(block, dict) else None
        if isinstance(overall, dict):
            rows.append([method, *(overall.get(k) for k in ("hit@1", "hit@5", "hit@10", "mrr@10"))])
    out += (
        table(["ranking", "hit@1", "hit@5", "hit@10", "MRR@10"], rows)
        if rows
        else ["```json", json.dumps(data, indent=1)[:3000], "```", ""]
    )
    return out


def small_memory(data: Json | None, _plots: Path) -> list[str]:
    missing = _missing("small_memory", data)
    if missing or data is None:
        return missing or []
    sets = data.get("sets") if isinstance(data.get("sets"), dict) else {}
    rows = [
        [name, s.get("split"), s.get("n"), s.get("top1"), s.get("top3"), s.get("span1")]
        for name, s in sets.items()
        if isinstance(s, dict)
    ]
    rows += [
        [split, "all", b.get("n"), b.get("top1"), b.get("top3"), b.get("span1")]
        for split in ("tune", "heldout")
        if isinstance(b := data.get(split), dict)
    ]
    return table(["set", "split", "questions", "top-1", "top-3", "top-1 on the lines"], rows)


def query(data: Json | None, plots: Path) -> list[str]:
    out: list[str] = []
    missing = _missing("query", data)
    if missing or data is None:
        return out + (missing or [])
    sizes = sorted(
        int(k.split("_")[0])
        for k in data
        if k.endswith("_chunks") and k.split("_")[0].isdigit() and isinstance(data[k], dict)
    )
    methods = {
        "botbin hybrid": "hybrid",
        "botbin vector": "vector_only_empty_query_text",
        "numpy exact": "numpy_matmul_argpartition_baseline",
        "FAISS flat": "faiss_flat_ip.latency",
        "usearch HNSW": "usearch_hnsw.latency",
    }
    rows, series = [], {}
    for label, path in methods.items():
        xs, ys = [], []
        for n in sizes:
            block = sections.get(data, f"{n}_chunks.{path}")
            if isinstance(block, dict) and isinstance(block.get("p95_ms"), int | float):
                rows.append([label, f"{n:,}", block.get("p50_ms"), block.get("p95_ms"), block.get("p99_ms")])
                xs.append(n)
                ys.append(block["p95_ms"])
        if xs:
            series[label] = (xs, ys)
    out += table(["method", "chunks", "p50 ms", "p95 ms", "p99 ms"], rows)
    if series:
        name = _plot(
            plots,
            "query_latency.png",
            "Query latency (p95) against corpus size",
            "chunks",
            "p95 ms",
            series,
            logx=True,
            logy=True,
        )
        out += [f"![query latency against corpus size](benchmarks/{name})", ""]
    out += [
        f"Vectors: {data.get('vectors', '?')}; BLAS on {data.get('query_threads', '?')} thread(s), query "
        f"embedding excluded; load {sections.load(data, 'load_average_1_5_15')}. Target: botbin hybrid p95 "
        "< 10 ms at 100,000 chunks.",
        "",
    ]
    extra = [
        [
            f"{n:,}",
            sections.get(data, f"{n}_chunks.botbin_rss_bytes_per_chunk"),
            sections.get(data, f"{n}_chunks.usearch_hnsw.recall_at_10_vs_exact"),
            sections.get(data, f"{n}_chunks.usearch_hnsw.build_s"),
            sections.get(data, f"{n}_chunks.usearch_hnsw.skipped"),
        ]
        for n in sizes
    ]
    out += table(
        [
            "chunks",
            "botbin resident bytes per chunk",
            "usearch recall@10 vs exact",
            "usearch build s",
            "usearch skipped",
        ],
        extra,
    )
    return out


def curated(
    name: str, pick: Callable[[Json], tuple[list[str], list[list[Any]], list[str]]]
) -> Callable[[Json | None, Path], list[str]]:
    """A section of chosen figures: ``pick`` (report_sections.py) gives the header, the rows and notes."""

    def section(data: Json | None, _plots: Path) -> list[str]:
        out: list[str] = []
        missing = _missing(name, data)
        if missing or data is None:
            return out + (missing or [])
        header, rows, notes = pick(data)
        return out + table(header, rows) + [n for note in notes if note for n in (note, "")]

    return section


def _plot(
    folder: Path,
    name: str,
    title: str,
    xlabel: str,
    ylabel: str,
    series: dict[str, tuple[list[int], list[float]]],
    logx: bool = False,
    logy: bool = False,
) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / name)
    plt.close(fig)
    return name


Section = Callable[[Json | None, Path], list[str]]
#: (benchmark name, section title, renderer of the section's body), in report order.
SECTIONS: list[tuple[str, str, Section]] = [
    ("scifact", "Quality: BEIR SciFact (test split)", scifact),
    ("locomo", "Quality: LoCoMo evidence recall (QA categories 1-4)", locomo),
    ("obsidian", "Quality: Obsidian help vault, 60 written queries", obsidian),
    ("small_memory", "Quality: small agent memories, questions written for each", small_memory),
    ("query", "Speed: query latency against corpus size", query),
    ("embed", "Speed: embedding throughput (plain encode, botbin, ONNX, int8)", curated("embed", sections.embed)),
    ("sync", "Speed: cold, no-op and one-edit sync", curated("sync", sections.sync)),
    ("lsp", "Speed: hover and search in the language server", curated("lsp", sections.lsp)),
    ("lsp_load", "Load: 2 bursts of 10,000 hover and search requests", curated("lsp_load", sections.lsp_load)),
    ("encryption", "Cost of encryption at rest", curated("encryption", sections.encryption)),
    ("peer", "The peer: memsearch on the same vault and queries", curated("peer", sections.peer)),
    (
        "planted",
        "Conversation memory: 10 planted facts among 1,000 and 10,000 turns",
        curated("planted", sections.planted),
    ),
    (
        "locomo_ingest",
        "Conversation memory: LoCoMo through `botbin ingest`, against raw turns",
        curated("locomo_ingest", sections.locomo_ingest),
    ),
    (
        "lifecycle",
        "Memo lifecycle: decay and reinforcement per search, prune, consolidate",
        curated("lifecycle", sections.lifecycle),
    ),
]


def render(results: Path, target: Path, quick: bool = False) -> None:
    """Write ``target`` (markdown) and its plots from the JSON files in ``results``."""
    plots = target.parent / "benchmarks"
    lines = ["# botbin benchmarks", ""]
    if quick:
        lines += ["_Quick run (small variants, CI): the figures check the harness, not the product._", ""]
    lines += machine()
    note = results / "note.md"  # what the person who ran it wants a reader to know (optional)
    if note.is_file():
        lines += [note.read_text(encoding="utf-8", errors="replace").strip(), ""]
    lines += [
        "Regenerate: `./scripts/bench.sh` (sets up, adds the optional benchmark packages, then runs "
        "`python bench/report.py`: everything, ~1 h on 2 idle cores) or "
        "`python bench/report.py --only NAME`; `--quick` runs the small variants. Raw JSON: "
        "`bench/out/results/`.",
        "",
    ]
    loaded = {name: _load(results, name) for name, _, _ in SECTIONS}
    lines += ["## Targets", ""]
    lines += table(["target", "measured", "met"], sections.targets(loaded))
    for name, title, section in SECTIONS:
        lines += [f"## {title}", ""]
        try:
            lines += section(loaded[name], plots)
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:  # a JSON of another shape
            lines += [f"_`{name}.json` could not be rendered ({type(exc).__name__}: {exc}); see the file._", ""]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines))
