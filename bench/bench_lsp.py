"""Language-server latency on the Obsidian help vault: hover, botbin/search and workspace/symbol (p50/p95, ms),
and save-to-searchable time (a note edited on disk + didSave, until botbin/search returns the new text).

The real ``botbin lsp`` runs as a child process over stdio, driven by the pygls client; the vault (173 notes,
../shared/data/obsidian-help/en) is copied to a temp folder and synced once before the server starts, so
the figures are for a warm index and a warm model, as an editor sees them after start-up. Prints JSON.

Run: ``python bench/bench_lsp.py [--hovers 100] [--saves 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from common import log
from lsp_client import QUERIES, VAULT, paragraphs, running_server, stats, synced_vault_copy


async def measure(root: Path, hovers: int, saves: int) -> dict[str, Any]:
    async with running_server(root) as client:
        return await _measure(client, root, hovers, saves)


async def _measure(client: LanguageClient, root: Path, hovers: int, saves: int) -> dict[str, Any]:
    result: dict[str, Any] = {}

    async def hover(note: Path, line: int) -> float:
        t = time.perf_counter()
        await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(note.as_uri()), types.Position(line, 0))
        )
        return (time.perf_counter() - t) * 1000

    spots = paragraphs(root, hovers + 5)
    await client.protocol.send_request_async("botbin/search", {"query": "wait for the model to load"})
    for note, line in spots[:5]:  # warm: model loaded, index assembled
        await hover(note, line)
    result["hover"] = stats([await hover(n, ln) for n, ln in spots[5:]])
    log(f"hover {result['hover']}")
    # the same paragraphs again: an editor hovers the same text repeatedly
    result["hover_repeat"] = stats([await hover(n, ln) for n, ln in spots[5:]])
    # unsaved edits: the buffer differs from the indexed note, so the paragraph is embedded by the model
    edited = []
    for note, line in spots[5:35]:
        text = note.read_text(encoding="utf-8").split("\n")
        text[line] += f" edited {line}"
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=note.as_uri(), language_id="markdown", version=1, text="\n".join(text))
            )
        )
        edited.append(await hover(note, line))
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(note.as_uri())))
    result["hover_unsaved_buffer"] = stats(edited)
    log(f"hover on unsaved buffers {result['hover_unsaved_buffer']}")

    async def search(query: str) -> float:
        t = time.perf_counter()
        await client.protocol.send_request_async("botbin/search", {"query": query, "k": 10})
        return (time.perf_counter() - t) * 1000

    result["search"] = stats([await search(q) for _ in range(5) for q in QUERIES])
    t_symbols = []
    for q in QUERIES:
        t = time.perf_counter()
        await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=q))
        t_symbols.append((time.perf_counter() - t) * 1000)
    result["workspace_symbol"] = stats(t_symbols)
    log(f"search {result['search']}")
    result["save_to_searchable"] = stats(await save_to_searchable(client, root, saves))
    log(f"save to searchable {result['save_to_searchable']}")
    return result


POLL_S = 0.05
"""Pause between two searches while waiting for a saved sentence (the figure's resolution)."""


async def save_to_searchable(client: LanguageClient, root: Path, saves: int, note: Path | None = None) -> list[float]:
    """ms from didSave of an edited note (default: the help vault's "Create a vault") until botbin/search finds
    the new sentence in it (a search every POLL_S: each costs the server a search, ~20-40 ms, so polling faster
    would slow the sync it waits for; ``botbin/status`` walks the folder and is dearer still)."""
    note = note or root / "Getting started" / "Create a vault.md"
    original = note.read_text(encoding="utf-8")
    times = []
    for i in range(saves):
        token = f"zqx{i}marmot"
        note.write_text(
            original + f"\n\nThe {token} migrates across the quiet valley every spring.\n", encoding="utf-8"
        )
        t = time.perf_counter()
        client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(note.as_uri())))
        while True:
            found = await client.protocol.send_request_async("botbin/search", {"query": token, "k": 1})
            if found.hits and token in found.hits[0].snippet:
                break
            if time.perf_counter() - t > 30:
                raise TimeoutError(f"save {i} not searchable after 30 s")
            await asyncio.sleep(POLL_S)
        times.append((time.perf_counter() - t) * 1000)
    note.write_text(original, encoding="utf-8")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hovers", type=int, default=100)
    parser.add_argument("--saves", type=int, default=20)
    args = parser.parse_args()
    if not VAULT.is_dir():
        log(f"{VAULT} is absent; nothing to measure")
        print(json.dumps({"skipped": f"{VAULT} absent"}))
        return 0
    with synced_vault_copy() as root:
        result = asyncio.run(measure(root, args.hovers, args.saves))
    print(json.dumps({"lsp": result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
