"""End to end under load: bursts of mixed ``textDocument/hover`` and ``botbin/search`` requests, many in flight
at once, are all answered without error, the server still answers afterwards, and its resident memory does not
grow from one burst to the next (a leak check; latency is not asserted: the CI machine is shared)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from botbin.index.blas import single_threaded_blas
from lsp.conftest import serve

pytestmark = pytest.mark.model

REQUESTS = 1000
"""Requests per burst."""
WINDOW = 100
"""Requests in flight at once."""
GROWTH_LIMIT_MB = 30.0
"""Most resident memory the second burst may add over the first (warm-up) burst, MiB."""
QUERIES = [
    "which database did we choose",
    "alerts",
    "SMS verification code",
    "deploy on Friday",
    "Postgres",
    "release checklist",
    "on-call rotation",
    "what did we decide about caching",
    "ideas for later",
]


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid``, MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def workload(root: Path, count: int, seed: int = 3) -> list[tuple[str, Any]]:
    """``count`` (method, params) pairs: hovers at random positions of every note, searches with varied
    queries (fixed ones and the notes' headings), k and bestPerNote."""
    rng = random.Random(seed)
    notes = {note.as_uri(): note.read_text(encoding="utf-8").split("\n") for note in sorted(root.rglob("*.md"))}
    headings = [line.lstrip("#").strip() for lines in notes.values() for line in lines if line.startswith("#")]
    queries = QUERIES + [h for h in headings if h][:60]
    calls: list[tuple[str, Any]] = []
    for _ in range(count):
        if rng.random() < 0.6:
            uri = rng.choice(list(notes))
            line = rng.randrange(len(notes[uri]))
            position = types.Position(line, rng.randint(0, len(notes[uri][line])))
            calls.append((types.TEXT_DOCUMENT_HOVER, types.HoverParams(types.TextDocumentIdentifier(uri), position)))
        else:
            calls.append(
                (
                    "botbin/search",
                    {"query": rng.choice(queries), "k": rng.choice((1, 5, 10)), "bestPerNote": rng.random() < 0.3},
                )
            )
    return calls


async def burst(client: LanguageClient, calls: list[tuple[str, Any]]) -> tuple[list[str], int]:
    """Send ``calls`` with WINDOW in flight at all times; the problems found (errors, timeouts, bad answers)
    and how many hovers showed something."""
    problems: list[str] = []
    shown = 0
    todo = iter(calls)

    async def worker() -> None:
        nonlocal shown
        for method, params in todo:
            try:
                answer = await asyncio.wait_for(client.protocol.send_request_async(method, params), 60)
            except Exception as exc:
                problems.append(f"{method} {params}: {type(exc).__name__}: {exc}")
                continue
            if method == "botbin/search" and not 1 <= len(answer.hits) <= params["k"]:
                problems.append(f"{params}: {len(answer.hits)} hits")
            elif method == types.TEXT_DOCUMENT_HOVER and answer is not None:
                shown += 1
                span = answer.range
                if not span.start.line <= params.position.line < max(span.end.line, span.start.line + 1):
                    problems.append(f"hover at line {params.position.line} answered for lines {span}")

    await asyncio.gather(*(worker() for _ in range(WINDOW)))
    return problems, shown


async def test_bursts_are_answered_and_memory_stays_flat(workspace: Path) -> None:
    async with serve([workspace]) as client:
        assert client._server is not None
        pid = client._server.pid
        for note in sorted(workspace.rglob("*.md")):
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(
                        uri=note.as_uri(), language_id="markdown", version=1, text=note.read_text(encoding="utf-8")
                    )
                )
            )
        calls = workload(workspace, REQUESTS)
        problems, shown = await burst(client, calls)  # warm-up: model, index, query cache, allocator pools
        assert problems == [] and shown > REQUESTS // 4
        before = rss_mb(pid)
        assert await burst(client, calls) == ([], shown)
        growth = rss_mb(pid) - before
        print(f"{shown} hovers shown; server RSS {before:.1f} -> {before + growth:.1f} MiB")
        assert growth < GROWTH_LIMIT_MB, f"server memory grew {growth:.1f} MiB over {REQUESTS} requests"
        # still answering normally afterwards
        uri = (workspace / "MEMORY.md").as_uri()
        lines = (workspace / "MEMORY.md").read_text(encoding="utf-8").split("\n")
        line = next(i for i, text in enumerate(lines) if len(text) > 40 and text[0].isalpha())
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, 0))
        )
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert "Related memories" in hover.contents.value


def test_the_server_runs_blas_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: with OpenBLAS's default threads, each search's small matrix product cost ~100x its CPU time
    under a burst on 2 shared cores (the threads busy-wait for each other)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    limiter = single_threaded_blas()
    try:
        blas = [pool for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
        assert blas and all(pool["num_threads"] == 1 for pool in blas)
    finally:
        limiter.restore_original_limits()
