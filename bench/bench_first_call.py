"""The first answer after start (issue 21): the real ``botbin lsp`` (pygls client over stdio) and ``botbin mcp``
(the ``mcp`` SDK's client) on an indexed workspace; the first hover / ``search_memory`` after ``initialize`` timed
against the median warm call of the same server, same run. Target: first <= 2 x warm + 1 s.

Workspaces: ``examples`` (examples/workspace, synced once with the real model), ``obsidian`` (the help vault of
../shared in vault mode, synced once with the real model) and ``synthetic`` (``--notes N``, default 1000 and
10000: bench/common.generate_vault, synced once in-process with the hash embedder under the bundled model's id, so
the server counts it up to date: the real model is far too slow for 10k notes on 2 cores; hovers use the stored
vectors of the hovered chunk, so only index-side costs are timed). For the synthetic vaults the figure is the
start-up: seconds from launching ``botbin lsp`` to the first hover that returns hits (target <= 5 s at 10k),
with the ratio 10k / 1k.

Each synthetic vault is started once per load-cache mode (``--cache-modes``, default ``off,cold,warm``: no cache,
a start that writes it, a start that reads it), with the phases launch -> ``initialize`` answered -> index
loaded (the server's log line) -> first hover with hits, and the same-run ratios 10k / 1k per mode and each
mode / off per size.

    python bench/bench_first_call.py [--only examples,obsidian,synthetic] [--notes 1000,10000] [--warm 8] [--cache DIR]
        [--cache-modes off,cold,warm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from common import HashEmbedder, generate_vault, log, r
from lsp_client import QUERIES, VAULT, paragraphs, until_indexed

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "workspace"


def _has_hits(hover: types.Hover | None) -> bool:
    """True when a hover lists memories (a link to a note), not just 'indexing' or nothing."""
    if hover is None:
        return False
    value = hover.contents.value if isinstance(hover.contents, types.MarkupContent) else str(hover.contents)
    return "](file:" in value or ".md" in value


async def _timed(call: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    started = time.perf_counter()
    out = await call()
    return time.perf_counter() - started, out


def _verdict(first_s: float, warm: list[float]) -> dict[str, Any]:
    warm_med = statistics.median(warm)
    return {
        "first_ms": r(first_s * 1000, 1),
        "warm_median_ms": r(warm_med * 1000, 1),
        "first_over_warm": r(first_s / warm_med, 2) if warm_med else None,
        "target_ms": r((2 * warm_med + 1) * 1000, 1),
        "meets_target": first_s <= 2 * warm_med + 1,
    }


async def _watch_stderr(stream: asyncio.StreamReader | None, launched: float, marks: dict[str, float]) -> None:
    """Forward the server's stderr (as lsp_client._forward_stderr) and note when the index load ended (its
    'index loaded:' log line), in seconds after ``launched``."""
    if stream is not None:
        while line := await stream.readline():
            text = line.decode("utf-8", "replace")
            if "index loaded:" in text and "index_loaded_s" not in marks:
                marks["index_loaded_s"] = time.perf_counter() - launched
            sys.stderr.write("[server] " + text)


async def lsp_first(root: Path, vault: bool, warm_calls: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start ``botbin lsp`` on ``root`` (``env``: its environment, default ours); time the first hover after
    ``initialized`` (and the first with hits, from launch), then ``warm_calls`` hovers once indexing is done."""
    spots = paragraphs(root, warm_calls + 1)
    client = LanguageClient("bench-first", "1")
    marks: dict[str, float] = {}
    launched = time.perf_counter()
    await client.start_io(sys.executable, "-m", "botbin", "lsp", env=env)
    stderr = client._server.stderr if client._server else None
    forward = asyncio.create_task(_watch_stderr(stderr, launched, marks))
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                initialization_options={"vault": vault},
                workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)],
            )
        )
        client.initialized(types.InitializedParams())
        initialized_s = time.perf_counter() - launched

        def hover(note: Path, line: int) -> Callable[[], Awaitable[Any]]:
            params = types.HoverParams(types.TextDocumentIdentifier(note.as_uri()), types.Position(line, 0))
            return lambda: client.text_document_hover_async(params)

        first_s, answer = await _timed(hover(*spots[0]))
        first_hits = _has_hits(answer)
        while not _has_hits(answer) and time.perf_counter() - launched < 300:
            await asyncio.sleep(0.05)
            answer = await hover(*spots[0])()
        hits_after_launch_s = time.perf_counter() - launched
        await until_indexed(client)
        warm = [(await _timed(hover(*spot)))[0] for spot in spots[1:]]
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
        forward.cancel()
    return {
        **_verdict(first_s, warm),
        "first_had_hits": first_hits,
        "initialize_s": r(initialized_s, 2),
        "index_loaded_after_launch_s": r(marks["index_loaded_s"], 2) if "index_loaded_s" in marks else None,
        "first_hits_after_launch_s": r(hits_after_launch_s, 2),
    }


async def mcp_first(root: Path, vault: bool, warm_calls: int) -> dict[str, Any]:
    """Start ``botbin mcp`` on ``root``; time the first ``search_memory`` after ``initialize``, then
    ``warm_calls`` more (other queries)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = ["-m", "botbin", "mcp", "--workspace", str(root)] + (["--vault"] if vault else [])
    params = StdioServerParameters(command=sys.executable, args=args, env=_env())
    queries = (QUERIES * (warm_calls // len(QUERIES) + 2))[: warm_calls + 1]
    launched = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        initialized_s = time.perf_counter() - launched

        def search(query: str) -> Callable[[], Awaitable[Any]]:
            return lambda: session.call_tool("search_memory", {"query": query, "k": 5})

        first_s, answer = await _timed(search(queries[0]))
        if answer.is_error:
            raise RuntimeError(f"search_memory failed: {answer.content}")
        await asyncio.sleep(2.0)  # let the start-up sync settle: warm calls are the steady state
        warm = [(await _timed(search(q)))[0] for q in queries[1:]]
    return {**_verdict(first_s, warm), "initialize_s": r(initialized_s, 2)}


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "server") + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _sync(root: Path, vault: bool, embedder: Any = None) -> float:
    from botbin.service import MemoryService

    started = time.perf_counter()
    MemoryService(root, {"vault": vault}, embedder=embedder, env={}).sync()
    return time.perf_counter() - started


def synthetic(root: Path, notes: int) -> dict[str, Any]:
    """A synthetic vault of ``notes`` notes, synced with the hash embedder under the bundled model's id, then
    its memos seeded once in-process (so that every start measured finds the same memo store)."""
    from botbin.embedding.model import BUNDLED_MODEL_ID
    from botbin.service import MemoryService

    generate_vault(root, notes)
    sync_s = _sync(root, True, HashEmbedder(BUNDLED_MODEL_ID))
    service = MemoryService(root, {"vault": True}, embedder=HashEmbedder(BUNDLED_MODEL_ID), env={})
    for thread in service.warm_in_background(model=False):
        thread.join()
    return {"notes": notes, "sync_s": r(sync_s, 1)}


CACHE_MODES = {
    "off": "no load cache (BOTBIN_LOAD_CACHE=false): every AIF-BIN file decoded and tokenized",
    "cold": "load cache on, its file deleted first: the start reads the AIF-BIN files, then writes it",
    "warm": "load cache on and up to date: the start reads it",
}


async def synthetic_starts(root: Path, modes: list[str], warm_calls: int) -> dict[str, Any]:
    """One ``botbin lsp`` start on ``root`` per load-cache mode (CACHE_MODES), in the order given."""
    out: dict[str, Any] = {}
    for mode in modes:
        if mode == "cold":
            (root / "memory" / "aifbin" / "index-cache.npz").unlink(missing_ok=True)
        env = _env() | {"BOTBIN_LOAD_CACHE": "false" if mode == "off" else "true"}
        out[mode] = await lsp_first(root, True, warm_calls, env)
        log(f"  {root.name} cache {mode}: {out[mode]}")
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"bench": "first_call", "warm_calls": args.warm}
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        spaces: list[tuple[str, Path, bool]] = []
        if "examples" in only:
            root = Path(tmp) / "examples"
            shutil.copytree(EXAMPLES, root)
            log(f"examples: synced in {_sync(root, False):.1f} s")
            spaces.append(("examples", root, False))
        if "obsidian" in only and VAULT.is_dir():
            root = Path(tmp) / "obsidian"
            shutil.copytree(VAULT, root)
            log(f"obsidian: synced in {_sync(root, True):.1f} s")
            spaces.append(("obsidian", root, True))
        for name, root, vault in spaces:
            out[name] = {"lsp": await lsp_first(root, vault, args.warm), "mcp": await mcp_first(root, vault, args.warm)}
            log(f"{name}: {out[name]}")
        if "synthetic" in only:
            sizes = [int(n) for n in args.notes.split(",")]
            modes = [m for m in args.cache_modes.split(",") if m]
            unknown = set(modes) - set(CACHE_MODES)
            if unknown:
                raise SystemExit(f"--cache-modes: unknown {sorted(unknown)}; choose from {sorted(CACHE_MODES)}")
            for n in sizes:
                root = (args.cache or Path(tmp)) / f"synthetic-{n}"
                made = synthetic(root, n) if not (root / "memory" / "aifbin").is_dir() else {"notes": n, "reused": True}
                made["lsp"] = await synthetic_starts(root, modes, args.warm)
                out[f"synthetic_{n}"] = made
                log(f"synthetic {n}: {made}")
            out["cache_modes"] = {m: CACHE_MODES[m] for m in modes}
            out["ratios"] = _ratios(out, sizes, modes)
    return out


def _startup_s(entry: dict[str, Any], mode: str) -> float:
    """Seconds from launching the server to its first hover with hits."""
    return float(entry["lsp"][mode]["first_hits_after_launch_s"])


def _ratios(out: dict[str, Any], sizes: list[int], modes: list[str]) -> dict[str, float]:
    """Same-run ratios of the start-up: largest / smallest vault per mode, and each mode / ``off`` per size."""
    ratios: dict[str, float] = {}
    lo, hi = out[f"synthetic_{sizes[0]}"], out[f"synthetic_{sizes[-1]}"]
    if len(sizes) > 1:
        for mode in modes:
            ratios[f"{sizes[-1]}_over_{sizes[0]}_{mode}"] = r(_startup_s(hi, mode) / _startup_s(lo, mode), 2)
    if "off" in modes:
        for n in sizes:
            entry = out[f"synthetic_{n}"]
            for mode in modes:
                if mode != "off":
                    ratios[f"{n}_{mode}_over_off"] = r(_startup_s(entry, mode) / _startup_s(entry, "off"), 2)
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="examples,obsidian,synthetic")
    parser.add_argument("--notes", default="1000,10000", help="synthetic vault sizes, comma-separated")
    parser.add_argument("--warm", type=int, default=8, help="warm calls per server")
    parser.add_argument("--cache", type=Path, help="keep the synced synthetic vaults here and reuse them")
    parser.add_argument(
        "--cache-modes",
        default="off,cold,warm",
        help="load-cache modes of the synthetic starts, in this order: off, cold, warm (see CACHE_MODES)",
    )
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
