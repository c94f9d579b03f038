"""Which tests need what, as pytest markers set from one place at collection (tests/conftest.py calls ``mark``), so
that ``scripts/check.sh`` can run the tests that need neither the model nor a process nor a real editor or host in
under a minute. A test is marked by the fixtures it uses, by its folder, or by its module (a module that starts
botbin processes: the CLI, ``botbin lsp``, ``botbin mcp``, a warm server; each loads the real model by itself)."""

from __future__ import annotations

import pytest

#: Fixtures that load the real all-MiniLM-L6-v2 (tests/conftest.py).
MODEL_FIXTURES = frozenset({"real_embedder", "synced_help_vault"})
#: Folders of tests/ whose every test needs something the fast check leaves out, and the marker each gets.
FOLDERS = {
    "editors": "editor",  # a real VS Code (code-server) or Neovim
    "hosts": "host",  # a real Claude Code or OpenClaw
    "postgres": "postgres",  # a real PostgreSQL + pgvector
    "crash": "crash",  # kills or races real botbin processes
    "lsp": "process",  # botbin lsp over stdio
    "fuzz": "slow",  # hypothesis and tampering over many inputs (about a minute together)
}
#: Modules of tests/ that start botbin processes or run for many seconds (measured: scripts/check.sh --durations).
PROCESS_MODULES = frozenset(
    {
        "test_bench_harness.py",
        "test_cli.py",
        "test_cli_directives.py",
        "test_cli_memory.py",
        "test_cli_terminal.py",
        "test_cli_warm.py",
        "test_e2e_obsidian.py",
        "test_embedding.py",
        "test_embedding_onnx.py",
        "test_export_reaper.py",
        "test_hook.py",
        "test_mcp_stdio.py",
        "test_scripts.py",
        "test_storage_errors.py",
        "test_sync_unreadable_folder.py",
        "agent/test_mcp_session.py",
        "agent/test_remember_writers.py",
        "fuzz/test_tamper_ann.py",
        "fuzz/test_tamper_cli.py",
        "memory/test_cli_lifecycle.py",
        "memory/conversation/test_cli_ingest.py",
    }
)
#: Modules of tests/ that need no process but run for many seconds (seconds measured on 2 busy cores, 2026-12-03).
SLOW_MODULES = frozenset(
    {
        "test_ann_store.py",  # 127 s: HNSW indexes of thousands of rows, built and rebuilt
        "test_ann.py",  # 10 s
        "test_assembled_patch.py",  # 17 s: patched against assembled matrices at scale
        "memory/conversation/test_gate.py",  # 12 s
    }
)


def mark(item: pytest.Item, tests_root: str) -> None:
    """Add the markers ``item`` needs: ``model``, ``process``, ``editor``, ``host``, ``postgres``, ``crash``,
    ``slow``."""
    rel = str(item.path.relative_to(tests_root)).replace("\\", "/")
    if MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        item.add_marker(pytest.mark.model)
    folder = rel.split("/", 1)[0] if "/" in rel else ""
    if folder in FOLDERS:
        item.add_marker(getattr(pytest.mark, FOLDERS[folder]))
    if rel in PROCESS_MODULES:
        item.add_marker(pytest.mark.process)
    if rel in SLOW_MODULES:
        item.add_marker(pytest.mark.slow)
