"""Fixtures for end-to-end LSP tests: a synced copy of the example workspace, a pytest-lsp client per editor
profile (VS Code, Neovim) talking to the real ``botbin lsp`` over stdio, and helpers to wait for it."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import REPO

EXAMPLES = REPO / "examples" / "workspace"
SERVER = [sys.executable, "-m", "botbin", "lsp"]
PROFILES = ["visual_studio_code", "neovim"]


async def wait_until(predicate: Callable[[], Any], timeout_s: float = 60.0, what: str = "condition") -> Any:
    """Poll ``predicate`` every 50 ms until it returns something truthy."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.05)


def progress_ended(client: LanguageClient, count: int = 1) -> bool:
    """True when at least ``count`` work-done progress reports have ended."""
    ends = [
        r for reports in client.progress_reports.values() for r in reports if isinstance(r, types.WorkDoneProgressEnd)
    ]
    return len(ends) >= count


async def start(
    client: LanguageClient, profile: str, folders: list[Path], options: dict[str, Any] | None = None
) -> None:
    """Initialize ``client`` with an editor profile, workspace folders and initializationOptions."""
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        client.registrations.append(params)  # type: ignore[attr-defined]

    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(profile),
            initialization_options=options or {},
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
        )
    )


async def request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    """A custom request; the result as plain JSON data (pygls turns objects into namedtuples)."""
    result = await client.protocol.send_request_async(method, params)
    return _plain(result)


def _plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@pytest.fixture(scope="session")
def synced_examples(tmp_path_factory: pytest.TempPathFactory, real_embedder: Any) -> Path:
    """The example workspace, synced once with the real model (servers then start with a no-op sync)."""
    from botbin.service import MemoryService

    root = tmp_path_factory.mktemp("lsp") / "workspace"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("aifbin"))
    MemoryService(root, embedder=real_embedder, env={}).sync()
    return root


@pytest.fixture
def workspace(tmp_path: Path, synced_examples: Path) -> Path:
    """A private copy of the synced example workspace for one test."""
    root = tmp_path / "workspace"
    shutil.copytree(synced_examples, root)
    return root


@contextlib.asynccontextmanager
async def serve(
    folders: list[Path], options: dict[str, Any] | None = None, profile: str = "visual_studio_code", wait: bool = True
) -> AsyncIterator[LanguageClient]:
    """Start a real ``botbin lsp`` for a test that prepares its own workspace; shut it down after."""
    client = await ClientServerConfig(server_command=SERVER).start()
    assert isinstance(client, LanguageClient)
    client.root = folders[0] if folders else None  # type: ignore[attr-defined]
    try:
        await start(client, profile, folders, options)
        if wait:
            await wait_until(lambda: progress_ended(client), what="the initial indexing to end")
        yield client
    finally:
        await client.shutdown_session()
