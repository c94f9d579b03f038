"""Recall Studio over real notes: examples/workspace, plus two rules that contradict each other and hostile notes
(script tags, onerror attributes, javascript: links, in the text and in file names), synced with the real model,
served by a real StudioServer on 127.0.0.1. Every server is started here and stopped on exit."""

from __future__ import annotations

import http.client
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from botbin.embedding import SentenceTransformerEmbedder
from botbin.service import MemoryService
from botbin.studio.app import StudioConfig
from botbin.studio.serve import StudioServer
from conftest import REPO, write_notes

EXAMPLE = REPO / "examples" / "workspace"
#: What a hostile note tries; none of it may run (each would set window.__pwned).
HOSTILE_TEXT = (
    "# Hostile <script>window.__pwned = 'title'</script>\n\n"
    "Quarterly llama census: <script>window.__pwned = 'script'</script> counted 41 llamas.\n\n"
    '<img src="x" onerror="window.__pwned = \'img\'"> The llama barn roof leaks.\n\n'
    "[llama report](javascript:window.__pwned='link') and <a href=\"javascript:window.__pwned='a'\">llamas</a>.\n"
)
HOSTILE_NAME = "memory/<img src=x onerror=window.__pwned=1> llamas.md"
JS_NAME = "memory/javascript:window.__pwned=2.md"
NOTES = {
    "memory/llamas.md": HOSTILE_TEXT,
    HOSTILE_NAME: "# Llama names\n\nThe llamas are called Dolly and <b onmouseover=window.__pwned=3>Pedro</b>.\n",
    JS_NAME: "# Llama feed\n\nThe llamas eat hay and <svg onload=window.__pwned=4></svg> carrots.\n",
}
#: Two rules that contradict each other, and a hostile one.
EXTRA_RULES = (
    "\n- Always use tabs for indentation.\n- Never use tabs for indentation.\n"
    "- Never paste <script>window.__pwned='rule'</script> into a note.\n"
)


def make_workspace(root: Path) -> Path:
    """examples/workspace with the extra rules and the hostile notes, under ``root``."""
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("aifbin"))
    agents = root / "AGENTS.md"
    agents.write_text(agents.read_text(encoding="utf-8") + EXTRA_RULES, encoding="utf-8")
    write_notes(root, dict(NOTES))
    return root


@dataclass
class Running:
    """A studio serving one workspace."""

    server: StudioServer
    service: MemoryService

    @property
    def token(self) -> str:
        return self.server.guard.token

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, token: bool = True
    ) -> tuple[int, dict[str, str], bytes]:
        """One plain HTTP request; (status, headers with lower-case names, body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=120)
        sent = {"Host": self.host, **({"X-Botbin-Token": self.token} if token else {}), **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        out = (response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        conn.close()
        return out

    def json(self, method: str, path: str, body: Any = None) -> Any:
        status, _, data = self.request(method, path, body)
        assert status == 200, data.decode()
        return json.loads(data)


def start(service: MemoryService, read_only: bool = False) -> Running:
    """A studio over ``service`` with VS Code links, started."""
    server = StudioServer(StudioConfig(lambda: (service,), "vscode", read_only))
    server.start()
    return Running(server, service)


@pytest.fixture(scope="session")
def studio_workspace(tmp_path_factory: pytest.TempPathFactory, real_embedder: SentenceTransformerEmbedder) -> Path:
    """The workspace, synced once per session with the real model (tests that write make their own)."""
    root = make_workspace(tmp_path_factory.mktemp("studio") / "ws")
    report = MemoryService(root, embedder=real_embedder, env={}).sync()
    assert not report.failed, report.failed
    return root


@pytest.fixture(scope="session")
def studio(studio_workspace: Path, real_embedder: SentenceTransformerEmbedder) -> Iterator[Running]:
    """A studio over the session's workspace (read-only use: tests that act start their own)."""
    service = MemoryService(studio_workspace, embedder=real_embedder, env={})
    running = start(service)
    yield running
    running.server.stop()


@pytest.fixture
def own_studio(
    tmp_path: Path, studio_workspace: Path, real_embedder: SentenceTransformerEmbedder
) -> Iterator[Callable[..., Running]]:
    """own_studio(**settings) -> a studio over a copy of the synced workspace (its sync embeds nothing), for tests
    that act."""
    started: list[Running] = []

    def make(read_only: bool = False, **settings: object) -> Running:
        root = tmp_path / f"ws{len(started)}"
        shutil.copytree(studio_workspace, root, ignore=shutil.ignore_patterns("memos.sqlite*", "*.lock"))
        service = MemoryService(root, settings, embedder=real_embedder, env={})
        service.sync()
        started.append(start(service, read_only))
        return started[-1]

    yield make
    for running in started:
        running.server.stop()
