"""Shared fixtures: workspaces on disk, a fast deterministic embedder, the real model, shared data paths."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from botbin.embedding import SentenceTransformerEmbedder, resolve_model
from botbin.service import MemoryService

# The test process itself embeds with torch (the real_embedder fixture and the services it makes): it never also
# loads ONNX Runtime, whose first import into this long-lived, many-threaded process once crashed it
# (a segmentation fault during the import, seen once in CI-like runs and not reproduced). The ONNX tests give
# their embedders their own env, and the CLI, MCP and LSP children use ONNX as a user's would.
os.environ.setdefault("BOTBIN_EMBED_BACKEND", "torch")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
OBSIDIAN_HELP = SHARED / "data" / "obsidian-help" / "en"
CHECKER = SHARED / "tools" / "aifbin_check.py"


class FakeEmbedder:
    """Deterministic bag-of-words hashing embedder (fast unit tests only; the real model has its own tests).

    Each word adds +1 to a dimension chosen by its MD5, so texts sharing words get a high cosine.
    """

    model_id = "test/fake-bow-384"
    dim = 384
    max_tokens = 256

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    @property
    def embedded(self) -> int:
        """Texts embedded so far."""
        return sum(len(c) for c in self.calls)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.casefold()):
                out[row, int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % self.dim] += 1.0
            out[row, 0] += 1e-3  # never an all-zero row
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def write_notes(root: Path, notes: Mapping[str, str | bytes]) -> Path:
    """Create ``notes`` (relative path -> text or bytes) under ``root``; return ``root``."""
    for rel, content in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def make_service(tmp_path: Path, fake_embedder: FakeEmbedder) -> Callable[..., MemoryService]:
    """make_service(notes, **settings) -> a MemoryService over a fresh workspace with the fake embedder."""

    def make(
        notes: dict[str, str | bytes] | None = None, root: Path | None = None, **settings: object
    ) -> MemoryService:
        ws = write_notes(root or tmp_path / "ws", notes or {})
        ws.mkdir(parents=True, exist_ok=True)
        return MemoryService(ws, settings, embedder=fake_embedder, env={})

    return make


@pytest.fixture(scope="session")
def real_embedder() -> Iterator[SentenceTransformerEmbedder]:
    """The bundled all-MiniLM-L6-v2, loaded once per test session, with no network."""
    yield SentenceTransformerEmbedder(resolve_model(None))


@pytest.fixture(scope="session")
def synced_help_vault(tmp_path_factory: pytest.TempPathFactory, real_embedder: SentenceTransformerEmbedder) -> Path:
    """A copy of the Obsidian help vault synced once per session with the real model. Read-only for tests:
    a test that edits notes makes its own copy (the source in ../shared is never written)."""
    import shutil

    root = tmp_path_factory.mktemp("obsidian-help") / "vault"
    shutil.copytree(OBSIDIAN_HELP, root)
    report = MemoryService(root, {"vault": True}, embedder=real_embedder, env={}).sync()
    assert not report.failed, report.failed
    return root


def run_checker(root: Path, output_dir: Path) -> subprocess.CompletedProcess[str]:
    """Run the independent AIF-BIN checker from ../shared/tools on ``output_dir``; skips the test when
    ../shared is absent (as the README says: tests that need it are skipped, not failed)."""
    skip_without_checker()
    return subprocess.run(
        [sys.executable, str(CHECKER), "--root", str(root), str(output_dir)],
        capture_output=True,
        text=True,
        check=False,
    )


def skip_without_checker() -> None:
    """Skip the calling test when the independent checker (../shared/tools/aifbin_check.py) is absent."""
    if not CHECKER.is_file():
        pytest.skip(f"the AIF-BIN checker {CHECKER} is absent (../shared is not beside the repository)")


needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared data folder {SHARED} is absent")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers by what each test needs (tests/markers.py): ``-m "not (model or process or ...)"`` is the fast check."""
    from markers import mark

    for item in items:
        mark(item, str(REPO / "tests"))
