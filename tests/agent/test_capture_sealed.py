"""Host capture in an encrypted store (agent/capture.py, agent/host_files.py): the turn journal and the captured-turn
ledger are sealed, so no word of a conversation is in the clear anywhere in the output folder (the whole-folder
check of tests/test_encrypted_store.py, over a store used by host ops, before and after ``encrypt``); a store
that is locked (no passphrase) journals nothing and keeps what was said in the soul file, reported "not indexed:
no passphrase" and indexed by the next sync that has it, while ``remember`` there keeps refusing (its caller can
retry; a host's capture has no one who could); ``decrypt`` opens the files again."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from botbin.agent.journal import JOURNAL_FILE
from botbin.agent.ledger import LEDGER_FILE
from botbin.embedding import SentenceTransformerEmbedder
from botbin.errors import PassphraseError
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest, SyncRequest
from conftest import FakeEmbedder, write_notes
from test_encrypted_store import _files_holding_secrets

FAST_KDF = "kdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"
PASSPHRASE = "hunter2 horse"
SECRETS = (b"zebracorn", b"quokkafish", b"7781", b"db-staging", b"heronpike")


@dataclass(frozen=True)
class Said:
    """A host turn (agent/capture.py HostTurn)."""

    role: str
    content: str
    id: str | None = None
    timestamp: str | None = None
    session: str | None = "s1"
    name: str | None = None


FIRST = [
    Said("user", "The zebracorn vault opens with the code 7781.", "u1"),
    Said("assistant", "Noted: the zebracorn vault code is 7781.", "a1"),
]
SECOND = [Said("user", "The quokkafish sleeps under the west pier of db-staging.", "u2")]
LATER = [Said("user", "The heronpike migrates north every April.", "u3")]


def workspace(tmp_path: Path, encrypted: bool) -> Path:
    toml = ("encryption = true\n" if encrypted else "") + FAST_KDF
    notes = {"MEMORY.md": "# Memory\n\n- The build server is hammerhead.\n", "botbin.toml": toml}
    return write_notes(tmp_path / "ws", notes)


def service(root: Path, secret: str | None, embedder: FakeEmbedder | SentenceTransformerEmbedder) -> MemoryService:
    return MemoryService(root, {}, embedder=embedder, env={}, passphrase=lambda: secret)


def soul(root: Path) -> str:
    path = root / "memory" / "soul" / "user.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_an_encrypted_store_seals_the_journal_and_the_ledger_and_the_next_server_reads_them(
    tmp_path: Path, fake_embedder: FakeEmbedder
) -> None:
    root = workspace(tmp_path, encrypted=True)
    first = service(root, PASSPHRASE, fake_embedder)
    first.sync()
    capture = first.hosts.capture
    assert capture.ingest(FIRST, flush=True).written == ("memory/soul/user.md",)
    assert capture.ingest(SECOND).pending == ("u2",)  # journaled, not distilled: the server is killed now
    out = first.output_dir
    assert (out / JOURNAL_FILE).stat().st_size and (out / LEDGER_FILE).stat().st_size
    assert _files_holding_secrets(root, secrets=SECRETS) == []
    lines = [line for name in (JOURNAL_FILE, LEDGER_FILE) for line in (out / name).read_bytes().split()]
    assert lines and all(line.startswith(b"sealed:v1:") for line in lines)
    after = service(root, PASSPHRASE, fake_embedder).hosts.capture  # the next server, with the passphrase
    again = after.ingest([*FIRST, *SECOND, *LATER], flush=True)
    assert (again.accepted, again.duplicates) == (1, 3)  # the sealed ledger and journal were read
    assert all(fact in soul(root) for fact in ("7781", "quokkafish", "heronpike"))
    assert soul(root).count("zebracorn vault opens") == 1
    assert _files_holding_secrets(root, secrets=SECRETS) == []


def test_a_locked_store_keeps_the_turns_in_the_soul_file_and_journals_nothing(
    tmp_path: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    root = workspace(tmp_path, encrypted=True)
    service(root, PASSPHRASE, real_embedder).sync()
    locked = service(root, None, real_embedder)
    report = locked.hosts.capture.ingest(FIRST)  # not asked to flush: a locked store distils at once
    assert report.written == ("memory/soul/user.md",) and report.pending == ()
    assert report.not_indexed is not None and report.not_indexed.startswith("not indexed: no passphrase")
    assert "7781" in soul(root)
    out = locked.output_dir
    assert not (out / JOURNAL_FILE).exists() and not (out / LEDGER_FILE).exists()
    assert _files_holding_secrets(root, secrets=SECRETS) == []
    with pytest.raises(PassphraseError, match="nothing was written"):
        locked.remember("The heronpike migrates north every April.")  # its caller can give the passphrase
    assert not list((root / "memory").glob("20*.md"))
    unlocked = service(root, PASSPHRASE, real_embedder)
    unlocked.sync()
    hit = unlocked.search(SearchRequest(query="zebracorn vault code", k=1, show_all=True)).hits[0]
    assert hit.path == "memory/soul/user.md" and "7781" in hit.text


@pytest.mark.parametrize("server_has_passphrase", [True, False])
def test_encrypt_while_a_server_holds_turns_leaves_no_word_in_the_clear_and_loses_none(
    tmp_path: Path, fake_embedder: FakeEmbedder, server_has_passphrase: bool
) -> None:
    root = workspace(tmp_path, encrypted=False)
    running = service(root, PASSPHRASE if server_has_passphrase else None, fake_embedder)
    running.sync()
    capture = running.hosts.capture
    capture.ingest(FIRST, flush=True)
    assert capture.ingest(SECOND).pending == ("u2",)
    assert _files_holding_secrets(root, secrets=SECRETS)  # a plaintext store: the journal holds the turn
    service(root, PASSPHRASE, fake_embedder).sync(
        SyncRequest(encryption="encrypt")
    )  # `botbin encrypt` in another process
    assert _files_holding_secrets(root, secrets=SECRETS) == []
    report = capture.ingest(LATER, flush=True)
    assert report.pending == () and all(fact in soul(root) for fact in ("7781", "quokkafish", "heronpike"))
    assert (report.not_indexed is None) == server_has_passphrase
    assert _files_holding_secrets(root, secrets=SECRETS) == []


def test_decrypt_opens_the_host_files_for_a_plaintext_store(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    root = workspace(tmp_path, encrypted=True)
    store = service(root, PASSPHRASE, fake_embedder)
    store.sync()
    store.hosts.capture.ingest(FIRST, flush=True)
    service(root, PASSPHRASE, fake_embedder).sync(SyncRequest(encryption="decrypt"))
    ledger = [json.loads(line) for line in (root / "memory" / "aifbin" / LEDGER_FILE).read_text().splitlines()]
    assert {e["id"] for e in ledger} == {"u1", "a1"}
    plain = service(root, None, fake_embedder).hosts.capture
    assert plain.ingest(FIRST, flush=True).duplicates == 2
