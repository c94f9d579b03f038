"""Issue 35: every door of ``botbin search`` builds the one SearchRequest from the same flags (cli/flags.py), so no
path drops one: ``--batch`` honours ``--per-note`` as a single search does, and a search answered by a running
server (cli/warm.py) honours ``--namespace`` (its settings are part of the request: a server with other ones
declines, one with the same ones answers what the command prints in-process)."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from botbin.cli import main
from botbin.cli.answers import answer
from botbin.cli.warm import request
from botbin.service import MemoryService
from conftest import FakeEmbedder, write_notes

QUERY = "connection pool limits"
POOL = "".join(
    f"## {topic}\n\nThe connection pool of the {topic} service holds at most {n} connections; the pool limits "
    f"were raised after the outage.\n\n"
    for topic, n in (("billing", 20), ("search", 40), ("alerts", 10))
)
NOTES = {
    "memory/pools.md": "# Pools\n\n" + POOL,
    "memory/outage.md": "# Outage\n\nThe connection pool ran dry during the outage; we raised its limits.\n",
    "MEMORY.md": "# Memory\n\nThe team ships on Tuesdays.\n",
}


def _botbin(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.model
def test_batch_honours_per_note_as_one_search_does(
    tmp_path: Path, real_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOTBIN_NO_SERVER", "1")
    root = write_notes(tmp_path / "ws", NOTES)
    assert not MemoryService(root, embedder=real_embedder, env={}).sync().failed
    flags = ["-w", str(root), "search", "-k", "10", "--all"]
    capped = Counter(h["path"] for h in json.loads(_botbin(*flags, QUERY, "--json")[1])["hits"])
    assert capped["memory/pools.md"] == 2  # the default cap (max_hits_per_note): more than --per-note 1
    one = json.loads(_botbin(*flags, QUERY, "--json", "--per-note", "1")[1])["hits"]
    assert Counter(h["path"] for h in one)["memory/pools.md"] == 1
    batch = tmp_path / "queries.jsonl"
    batch.write_text(json.dumps({"q": QUERY}) + "\n", encoding="utf-8")
    code, out, _ = _botbin(*flags, "--batch", str(batch), "--per-note", "1")
    assert code == 0
    assert [h["path"] for h in json.loads(out.splitlines()[0])] == [h["path"] for h in one]


def test_a_warm_server_honours_namespace(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "ws", NOTES)
    plain = MemoryService(root, {}, embedder=FakeEmbedder(), env={})
    plain.sync()
    argv = ["search", QUERY, "--namespace", "ops,sre", "--json"]
    asked = request(argv, env={}, cwd=root)
    assert asked is not None and asked["settings"] == {"searchNamespaces": "ops,sre"}
    declined = answer(plain, dict(asked))  # its settings search no other namespace: it would answer another search
    assert declined["served"] is False and declined["reason"] == "other settings"
    spanning = MemoryService(root, {"search_namespaces": "ops,sre"}, embedder=FakeEmbedder(), env={})
    served = answer(spanning, dict(asked))
    assert served["served"] is True, served
    # what the command prints in its own process: the embedded backend has no namespaces, and says so
    assert 'search_namespaces apply to backend = "postgres" only' in str(served["stderr"])
