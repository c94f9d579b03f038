"""Language server under load: bursts of 10,000 mixed ``textDocument/hover`` and ``botbin/search`` requests,
many in flight at once; every answer checked, latency per kind (p50/p95/p99/max, ms), throughput, and the
server's resident memory before, after one burst and after a second, identical burst (growth, not warm-up).

The real ``botbin lsp`` runs as a child process over stdio on a synced copy of the Obsidian help vault
(../shared/data/obsidian-help/en), as in bench_lsp.py. Hovers go to random positions (any line, any column)
of open documents; searches use varied queries (help-page headings and titles, k and bestPerNote varied).
Latency is measured at the client from send to answer, so it includes the time a request waits behind the
others in flight. Prints JSON; exits 1 if any request failed, timed out or got an invalid answer.

Run: ``python bench/bench_lsp_load.py [--requests 10000] [--window 100] [--hover-share 0.5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from common import load_average, log, r
from lsp_client import QUERIES, VAULT, cpu_s, rss_mb, running_server, server_pid, stats, synced_vault_copy

#: Seconds one request may take before it counts as unanswered.
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Call:
    """One request of a burst."""

    kind: str
    """``hover`` or ``search``."""
    uri: str = ""
    """Hover: the open document."""
    line: int = 0
    """Hover: 0-based line."""
    character: int = 0
    """Hover: column in UTF-16 code units (never past the line's end)."""
    prose: bool = False
    """Hover: the line is a prose paragraph, so an answer without related memories is wrong."""
    query: str = ""
    """Search: the query text."""
    k: int = 10
    best_per_note: bool = False


def prose_lines(lines: list[str]) -> set[int]:
    """0-based lines of ``lines`` that are prose (outside frontmatter and code fences, long, starting with a letter)."""
    start = lines.index("---", 1) + 1 if lines and lines[0] == "---" and "---" in lines[1:] else 0
    fenced, prose = False, set()
    for i in range(start, len(lines)):
        fenced ^= lines[i].lstrip().startswith("```")
        if not fenced and len(lines[i]) > 40 and lines[i][0].isalpha():
            prose.add(i)
    return prose


def workload(
    root: Path, count: int, hover_share: float, open_notes: int, seed: int = 11
) -> tuple[list[Call], list[Path]]:
    """``count`` calls in random order (``random.Random(seed)``), and the notes they hover (to open first)."""
    rng = random.Random(seed)
    notes = sorted(root.rglob("*.md"))
    opened = rng.sample(notes, min(open_notes, len(notes)))
    texts = {note: note.read_text(encoding="utf-8").split("\n") for note in opened}
    prose = {note: prose_lines(lines) for note, lines in texts.items()}
    headings = sorted(
        {
            line.lstrip("#").strip()
            for note in notes
            for line in note.read_text(encoding="utf-8").split("\n")
            if line.startswith("#") and len(line.lstrip("#").strip()) > 3
        }
    )
    queries = [*QUERIES, *(n.stem for n in notes), *headings, *(f"how do I {h.lower()}" for h in headings[::3])]
    log(f"{len(queries)} distinct queries (the server caches 256 query embeddings), {len(opened)} open notes")
    calls = []
    for _ in range(count):
        if rng.random() < hover_share:
            note = rng.choice(opened)
            line = rng.randrange(len(texts[note]))
            calls.append(
                Call("hover", note.as_uri(), line, rng.randint(0, len(texts[note][line])), line in prose[note])
            )
        else:
            calls.append(
                Call(
                    "search", query=rng.choice(queries), k=rng.choice((1, 5, 10, 20)), best_per_note=rng.random() < 0.3
                )
            )
    return calls, opened


def problem(call: Call, answer: Any, root_uri: str) -> str | None:
    """Why ``answer`` is not a valid answer to ``call``; None when it is."""
    if call.kind == "hover":
        if answer is None:
            return "no hover on a prose line" if call.prose else None
        if not isinstance(answer, types.Hover) or not isinstance(answer.contents, types.MarkupContent):
            return f"not a markdown Hover: {type(answer).__name__}"
        if not answer.contents.value.startswith(("**Related memories**", "**Directive:**")):
            return "hover without related memories or a directive"
        span = answer.range
        if span is None or not span.start.line <= call.line < max(span.end.line, span.start.line + 1):
            return f"hover range {span} does not hold line {call.line}"  # an answer meant for another request?
        return None
    hits = getattr(answer, "hits", None)
    if not isinstance(hits, list) or not 1 <= len(hits) <= call.k:
        return f"expected 1..{call.k} hits, got {hits!r:.200}"
    if any(not str(h.uri).startswith(root_uri) for h in hits):
        return "a hit outside the workspace"
    if call.best_per_note and len({h.path for h in hits}) != len(hits):
        return "bestPerNote returned two hits of one note"
    return None


async def send(client: LanguageClient, call: Call) -> Any:
    if call.kind == "hover":
        return await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(call.uri), types.Position(call.line, call.character))
        )
    return await client.protocol.send_request_async(
        "botbin/search", {"query": call.query, "k": call.k, "bestPerNote": call.best_per_note}
    )


async def burst(client: LanguageClient, calls: list[Call], window: int, root_uri: str) -> dict[str, Any]:
    """Send ``calls`` with ``window`` requests in flight at all times; latencies per kind, failures, and the CPU
    seconds the server and this client used meanwhile (both share the machine's cores)."""
    latencies: dict[str, list[float]] = {"hover": [], "search": []}
    failures: list[str] = []
    todo = iter(enumerate(calls))

    async def worker() -> None:
        for index, call in todo:
            t = time.perf_counter()
            try:
                answer = await asyncio.wait_for(send(client, call), TIMEOUT_S)
            except TimeoutError:
                failures.append(f"#{index} {call}: no answer in {TIMEOUT_S:.0f} s")
                continue
            except Exception as exc:  # an error response from the server
                failures.append(f"#{index} {call}: {type(exc).__name__}: {exc}")
                continue
            latencies[call.kind].append((time.perf_counter() - t) * 1000)
            why = problem(call, answer, root_uri)
            if why is not None:
                failures.append(f"#{index} {call}: {why}")

    pid = server_pid(client)
    started, server_cpu, client_cpu = time.perf_counter(), cpu_s(pid), time.process_time()
    await asyncio.gather(*(worker() for _ in range(window)))
    seconds = time.perf_counter() - started
    return {
        "requests": len(calls),
        "seconds": r(seconds, 2),
        "requests_per_s": r(len(calls) / seconds, 1),
        "server_cpu_s": r(cpu_s(pid) - server_cpu, 1),
        "client_cpu_s": r(time.process_time() - client_cpu, 1),
        **{kind: stats(values) for kind, values in latencies.items() if values},
        "failed": len(failures),
        "failures_first_10": failures[:10],
    }


async def measure(root: Path, requests: int, window: int, hover_share: float, open_notes: int) -> dict[str, Any]:
    calls, opened = workload(root, requests, hover_share, open_notes)
    async with running_server(root, "bench-load") as client:
        pid = server_pid(client)
        for note in opened:
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(
                        uri=note.as_uri(), language_id="markdown", version=1, text=note.read_text(encoding="utf-8")
                    )
                )
            )
        await client.protocol.send_request_async("botbin/search", {"query": "wait for the model to load"})
        warm = await burst(client, calls[:200], 10, root.as_uri())  # model, index, first queries
        result: dict[str, Any] = {"window": window, "open_documents": len(opened), "warm_up_failed": warm["failed"]}
        result["rss_before"] = rss_mb(pid)
        log(f"server pid {pid}, before the bursts {result['rss_before']}")
        for name in ("burst_1", "burst_2"):
            result[name] = await burst(client, calls, window, root.as_uri())
            await asyncio.sleep(1.0)
            result[f"rss_after_{name}"] = rss_mb(pid)
            brief = {k: v for k, v in result[name].items() if k != "failures_first_10"}
            log(f"{name}: {brief}, {result[f'rss_after_{name}']}")
        after = await burst(client, [c for c in calls if c.kind == "hover" and c.prose][:20], 1, root.as_uri())
        result["sequential_hovers_after"] = after
        rss_1, rss_2 = result["rss_after_burst_1"]["rss_mb"], result["rss_after_burst_2"]["rss_mb"]
        result["growth_mb_burst_2"] = r(rss_2 - rss_1, 1)
        result["failed"] = result["burst_1"]["failed"] + result["burst_2"]["failed"] + after["failed"] + warm["failed"]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=10_000, help="requests per burst")
    parser.add_argument("--window", type=int, default=100, help="requests in flight at once")
    parser.add_argument("--hover-share", type=float, default=0.5, help="fraction of hovers (the rest search)")
    parser.add_argument("--open-notes", type=int, default=40, help="documents opened (and hovered)")
    args = parser.parse_args()
    if not VAULT.is_dir():
        log(f"{VAULT} is absent; nothing to measure")
        print(json.dumps({"skipped": f"{VAULT} absent"}))
        return 0
    with synced_vault_copy() as root:
        load_before = load_average()
        result = asyncio.run(measure(root, args.requests, args.window, args.hover_share, args.open_notes))
    result["load_average"] = {"before": load_before, "after": load_average()}
    print(json.dumps({"lsp_load": result}))
    if result["failed"]:
        log(f"{result['failed']} requests failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
