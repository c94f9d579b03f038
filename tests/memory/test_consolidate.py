"""Consolidation into roots (memory/consolidate.py, roots.py, notes.py, abstractive.py): which memos
consolidate, the roots note's text and links, idempotence, the user's edits, and the optional LLM endpoint
(a real HTTP server on localhost speaking the OpenAI chat-completions shape)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from botbin.errors import BotbinError
from botbin.memory.consolidate import Candidate, find_groups, split_sentences, states_fact
from botbin.memory.notes import BEGIN, END, existing_roots
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest

ServiceFactory = Callable[..., MemoryService]
RECURRING = {
    "memory/2026-11-02.md": "# 2026-11-02\n\n- Deploys go out from the blue cluster in Frankfurt.\n",
    "memory/2026-11-09.md": "# 2026-11-09\n\n- Deploys go out from the blue cluster in Frankfurt now.\n",
    "memory/2026-11-10.md": "# 2026-11-10\n\n- I prefer short commit messages in the imperative.\n",
    "memory/2026-11-11.md": "# 2026-11-11\n\n- Update the install docs after the release.\n",
}


def cand(i: int, path: str, text: str = "x y z", count: int = 0, kind: str = "lore") -> Candidate:
    return Candidate(f"id{i}", path, i, i + 1, text, kind, count, i)


def test_find_groups_reasons() -> None:
    m = np.eye(5, dtype=np.float32)
    m[1] = m[0]  # rows 0 and 1: the same embedding, different notes
    m[3] = m[2]  # rows 2 and 3: the same embedding, one note: not a recurrence
    cands = [
        cand(0, "a.md"),
        cand(1, "b.md"),
        cand(2, "c.md", count=5),
        cand(3, "c.md"),
        cand(4, "d.md", "I prefer tea over coffee in the morning."),
    ]
    groups = find_groups(cands, m, 0.85, 3)
    assert [(g.reason, [c.id for c in g.members]) for g in groups] == [
        ("recurs", ["id0", "id1"]),
        ("reinforced", ["id2"]),
        ("stated", ["id4"]),
    ]
    assert groups[2].sentence == "I prefer tea over coffee in the morning."


def test_stated_facts_are_lasting_not_todos() -> None:
    assert states_fact("I prefer tabs over spaces.")
    assert states_fact("My sister's dog is called Pretzel.")
    assert states_fact("Always run the tests before pushing.")
    assert not states_fact("Update the install docs.")
    assert not states_fact("The certificate is always recent.")
    assert split_sentences("- One two three.\n\n```sh\nrm -rf it all\n```\n") == ["One two three."]


def test_consolidate_writes_linked_roots_once(make_service: ServiceFactory) -> None:
    service = make_service(RECURRING)
    service.sync()
    dry = service.consolidate(dry_run=True)
    assert [r.reason for r in dry.roots] == ["recurs", "stated"]
    assert not (service.root / "memory/roots.md").exists()
    report = service.consolidate()
    text = (service.root / "memory/roots.md").read_text()
    assert text.startswith("# Roots\n") and BEGIN in text and END in text
    assert (
        "[memory/2026-11-02.md L3](2026-11-02.md), [memory/2026-11-09.md L3](2026-11-09.md)) · recurs in 2 "
        "notes" in text
    )
    assert (
        "- I prefer short commit messages in the imperative. ([memory/2026-11-10.md L3](2026-11-10.md)) · "
        "stated" in text
    )
    assert "install docs" not in text
    assert len(report.roots) == 2
    again = service.consolidate()
    assert again.roots == () and again.skipped == 2
    assert (service.root / "memory/roots.md").read_text() == text
    hits = service.search(
        SearchRequest(query="commit message style", k=3, show_all=True)
    ).hits  # the roots note is synced and searchable
    assert "memory/roots.md" in {h.path for h in hits}
    assert "memory/roots.md" not in {m.path for m in service.lifecycle.store.all()}  # roots are not memos


def test_reinforced_memos_consolidate(make_service: ServiceFactory) -> None:
    service = make_service(
        {"memory/notes.md": "# Hosts\n\nThe staging database lives on host kestrel-db-2.\n"},
        consolidate_min_reinforcement=2,
    )
    service.sync()
    assert service.consolidate(dry_run=True).roots == ()
    service.search(SearchRequest(query="staging database", show_all=True))
    service.search(SearchRequest(query="staging database host", show_all=True))
    roots = service.consolidate(dry_run=True).roots
    assert [(r.reason, r.text) for r in roots] == [("reinforced", "The staging database lives on host kestrel-db-2.")]


def test_the_users_text_in_the_roots_note_is_kept(make_service: ServiceFactory) -> None:
    mine = "# My roots\n\nWritten by me.\n"
    service = make_service({**RECURRING, "memory/roots.md": mine})
    service.sync()
    service.consolidate()
    text = (service.root / "memory/roots.md").read_text()
    assert text.startswith(mine) and text.count(BEGIN) == 1
    edited = text.replace("Deploys go out", "Deploys (edited by me) go out")
    (service.root / "memory/roots.md").write_text(edited + "\nA line after the block.\n")
    (service.root / "memory/2026-11-12.md").write_text("- My favourite editor is Helix.\n")
    service.sync()
    service.consolidate()
    final = (service.root / "memory/roots.md").read_text()
    assert final.startswith(edited) is False and "Deploys (edited by me) go out" in final
    assert final.endswith("\nA line after the block.\n")
    assert existing_roots(final)[-1] == "My favourite editor is Helix."


def test_an_unreadable_roots_note_stops_consolidate(make_service: ServiceFactory) -> None:
    service = make_service({**RECURRING, "memory/roots.md": b"\xff\xfe bad bytes"})
    service.sync()
    with pytest.raises(BotbinError, match="cannot read the roots note"):
        service.consolidate()
    assert (service.root / "memory/roots.md").read_bytes() == b"\xff\xfe bad bytes"


# -- the optional OpenAI-compatible endpoint --------------------------------------------------------------------


class _Llm(BaseHTTPRequestHandler):
    answer = ""
    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": type(self).answer}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def llm() -> Iterator[tuple[str, type[_Llm]]]:
    handler = type("Llm", (_Llm,), {"answer": "", "requests": []})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1", handler
    server.shutdown()


def test_an_abstractive_root_close_to_its_sources_is_kept(
    make_service: ServiceFactory, llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, handler = llm
    handler.answer = "Deploys go out from the blue cluster in Frankfurt."
    monkeypatch.setenv("BOTBIN_DISTILL_API_KEY", "sk-local")
    service = make_service(RECURRING, distill_endpoint=url, distill_model="qwen")
    service.sync()
    report = service.consolidate(dry_run=True)
    recurs = next(r for r in report.roots if r.reason == "recurs")
    assert recurs.abstractive and report.rejected_abstractive == 0
    sent = handler.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["body"]["model"] == "qwen"
    assert sent["auth"] == "Bearer sk-local" and "blue cluster" in sent["body"]["messages"][1]["content"]


def test_an_abstractive_root_far_from_its_sources_is_refused(make_service: ServiceFactory, llm: Any) -> None:
    url, handler = llm
    handler.answer = "Bananas are an excellent source of potassium for athletes."
    service = make_service(RECURRING, distill_endpoint=url)
    service.sync()
    report = service.consolidate(dry_run=True)
    recurs = next(r for r in report.roots if r.reason == "recurs")
    assert not recurs.abstractive and report.rejected_abstractive == 1
    assert recurs.text.startswith("Deploys go out from the blue cluster in Frankfurt")


def test_an_unreachable_endpoint_falls_back_to_extractive(
    make_service: ServiceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    service = make_service(RECURRING, distill_endpoint="http://127.0.0.1:9/v1")
    service.sync()
    report = service.consolidate(dry_run=True)
    assert [r.abstractive for r in report.roots] == [False, False]
    assert "distill endpoint" in caplog.text


def test_real_model_groups_paraphrases_not_neighbours(tmp_path: Path, real_embedder: Any) -> None:
    """The 0.85 recurrence threshold with all-MiniLM-L6-v2: a restated fact recurs, a different fact on the
    same topic does not."""
    notes = {
        "memory/2026-10-01.md": "- Our production database runs PostgreSQL 16 on a dedicated host.\n",
        "memory/2026-10-20.md": "- Production database: PostgreSQL 16, on its own dedicated host.\n",
        "memory/2026-10-21.md": "- The staging database still runs PostgreSQL 14 and needs an upgrade.\n",
    }
    for rel, text in notes.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    service = MemoryService(tmp_path, embedder=real_embedder, env={})
    service.sync()
    roots = service.consolidate(dry_run=True).roots
    recurs = [r for r in roots if r.reason == "recurs"]
    assert len(recurs) == 1
    assert {c.path for c in recurs[0].sources} == {"memory/2026-10-01.md", "memory/2026-10-20.md"}
