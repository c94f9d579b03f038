"""Client side of the language-server benchmarks: start the real ``botbin lsp`` over stdio on a synced copy of
the Obsidian help vault, wait for its index, pick prose lines, read the server's memory, summarize latencies."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from common import log, percentile, r

REPO = Path(__file__).resolve().parents[1]
VAULT = REPO.parent / "shared" / "data" / "obsidian-help" / "en"
QUERIES = [
    "how do I link to another note",
    "sync notes between phone and computer",
    "change the theme",
    "create a canvas",
    "publish my notes as a website",
    "keyboard shortcuts",
    "embed an image",
    "search for a tag",
    "daily notes template",
    "import from Evernote",
]


def paragraphs(root: Path, count: int, seed: int = 7) -> list[tuple[Path, int]]:
    """(note, 0-based line) of ``count`` random prose lines outside frontmatter and code."""
    candidates: list[tuple[Path, int]] = []
    for note in sorted(root.rglob("*.md")):
        lines = note.read_text(encoding="utf-8").split("\n")
        start = lines.index("---", 1) + 1 if lines and lines[0] == "---" and "---" in lines[1:] else 0
        fenced = False
        for i in range(start, len(lines)):
            fenced ^= lines[i].lstrip().startswith("```")
            if not fenced and len(lines[i]) > 40 and lines[i][0].isalpha():
                candidates.append((note, i))
    random.Random(seed).shuffle(candidates)
    return candidates[:count]


def stats(values_ms: list[float]) -> dict[str, float]:
    """n, p50 / p95 / p99 / max of latencies in ms."""
    return {
        "n": len(values_ms),
        "p50_ms": r(percentile(values_ms, 50), 1),
        "p95_ms": r(percentile(values_ms, 95), 1),
        "p99_ms": r(percentile(values_ms, 99), 1),
        "max_ms": r(max(values_ms), 1),
    }


@contextlib.contextmanager
def synced_vault_copy() -> Iterator[Path]:
    """A temp copy of the help vault, synced once with the real model (cold, ~35 s on 2 cores); deleted after."""
    from botbin.service import MemoryService

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(VAULT, root)
        log("syncing a copy of the help vault (cold, real model)")
        started = time.perf_counter()
        MemoryService(root, {"vault": True}).sync()
        log(f"cold sync {time.perf_counter() - started:.1f} s")
        yield root


async def until_indexed(client: LanguageClient, timeout_s: float = 600.0) -> None:
    """Poll ``botbin/status`` until no sync runs or waits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = await client.protocol.send_request_async("botbin/status", {})
        if not status.indexing and status.pending == 0:
            return
        await asyncio.sleep(0.2)
    raise TimeoutError("the server did not finish indexing")


async def _forward_stderr(stream: asyncio.StreamReader | None) -> None:
    """Copy the server's stderr to ours: pygls pipes it, and a pipe nobody reads would block the server's
    logging once full (and hide why a server exited)."""
    if stream is not None:
        while line := await stream.readline():
            sys.stderr.write("[server] " + line.decode("utf-8", "replace"))


@contextlib.asynccontextmanager
async def running_server(root: Path, name: str = "bench") -> AsyncIterator[LanguageClient]:
    """The real ``botbin lsp`` on ``root`` (vault mode), initialized and done indexing; shut down after."""
    client = LanguageClient(name, "1")
    await client.start_io(sys.executable, "-m", "botbin", "lsp")
    forward = asyncio.create_task(_forward_stderr(client._server.stderr if client._server else None))
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                initialization_options={"vault": True},
                workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)],
            )
        )
        client.initialized(types.InitializedParams())
        started = time.perf_counter()
        await until_indexed(client)
        log(f"indexed in {time.perf_counter() - started:.1f} s (no-op sync of a synced vault)")
        yield client
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
        forward.cancel()


def server_pid(client: LanguageClient) -> int:
    """Process id of the server a pygls client started with ``start_io``."""
    if client._server is None:
        raise RuntimeError("the client did not start a server process")
    return client._server.pid


def rss_mb(pid: int) -> dict[str, float]:
    """Resident memory of process ``pid`` now (``rss_mb``) and at its peak (``hwm_mb``), MiB, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024  # kB
    return {"rss_mb": r(fields["VmRSS"], 1), "hwm_mb": r(fields["VmHWM"], 1)}


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) process ``pid`` has used so far, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15
