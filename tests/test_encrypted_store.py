"""An encrypted store end to end (service and CLI): `encryption = true`, `botbin encrypt` / `decrypt`.

Promises checked: search works over an encrypted store, decrypting in memory only (no file under the
workspace or the temp folder holds note text); a wrong or missing passphrase stops before anything is read
or written and names the marker file; `encrypt` / `decrypt` convert in place without re-embedding, and a
conversion cut short is finished by the next sync; botbin's folders are 0700 and its files 0600; after
`encrypt` no byte of any file under the output folder or botbin's cache holds note text (memo sidecar, archive
note, load, ANN and spare caches), and `decrypt` gives back every archived text, tag and count; a new store
refuses a weak passphrase, an old one opens with it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

import pytest

from botbin.aifbin import decode
from botbin.errors import PassphraseError
from botbin.service import MemoryService
from botbin.sync import atomic, encryption
from botbin.sync.encryption import MARKER_FILE
from botbin.wire.requests import SearchRequest, SyncRequest
from conftest import REPO, FakeEmbedder, run_checker, write_notes

FAST_KDF = "kdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n"
NOTES = {
    "MEMORY.md": "# Memory\n\n- Never push to main on a Friday.\n",
    "memory/2026-11-28.md": "# 2026-11-28\n\nThe zebracorn project codename is Bluefin.\n",
    "memory/people.md": "---\ntags: [privatetag]\n---\n# People\n\nAna's phone is 555-0199.\n",
}
SECRETS = (b"zebracorn", b"Bluefin", b"555-0199", b"privatetag", b"Friday")
BOTBIN = [sys.executable, "-m", "botbin"]


def _workspace(tmp_path: Path, encrypted: bool = True) -> Path:
    ws = write_notes(tmp_path / "ws", dict(NOTES))
    (ws / "botbin.toml").write_text(("encryption = true\n" if encrypted else "") + FAST_KDF)
    return ws


def _service(ws: Path, secret: str | None = "hunter2 horse", embedder: FakeEmbedder | None = None) -> MemoryService:
    return MemoryService(ws, {}, embedder=embedder or FakeEmbedder(), env={}, passphrase=lambda: secret)


def _outputs(ws: Path) -> list[Path]:
    return sorted((ws / "memory" / "aifbin").rglob("*.aif-bin"))


def _files_holding_secrets(ws: Path, *more: Path, secrets: tuple[bytes, ...] = SECRETS) -> list[Path]:
    """Every file under ``ws`` but its notes and botbin.toml (the output folder whole, archive.md included), and
    under the ``more`` folders, that holds one of ``secrets``: every byte of each is read."""
    out = ws / "memory" / "aifbin"
    found = []
    for folder in (ws, *more):
        for path in folder.rglob("*"):
            note = path.suffix == ".md" and out not in path.parents
            if path.is_file() and not note and path.name != "botbin.toml":
                data = path.read_bytes()
                if any(s in data for s in secrets):
                    found.append(path)
    return found


def test_search_over_an_encrypted_store_decrypts_in_memory_only(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = set(Path(tempfile.gettempdir()).iterdir())
    service = _service(ws)
    report = service.sync()
    assert len(report.added) == 3 and not report.failed
    hits = service.search(SearchRequest(query="zebracorn codename", show_all=True)).hits
    assert hits and "Bluefin" in hits[0].text
    assert _files_holding_secrets(ws) == []
    new_temp = set(Path(tempfile.gettempdir()).iterdir()) - before - {tmp_path}
    assert not [p for p in new_temp if p.is_file() and any(s in p.read_bytes() for s in SECRETS)]
    fresh = _service(ws)  # another process: loads the encrypted files
    assert "Bluefin" in fresh.search(SearchRequest(query="zebracorn codename", show_all=True)).hits[0].text
    checked = run_checker(ws, ws / "memory" / "aifbin")
    assert checked.returncode == 0, checked.stdout


def test_wrong_or_missing_passphrase_changes_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _service(ws).sync()
    snapshot = {p: p.read_bytes() for p in (ws / "memory" / "aifbin").rglob("*") if p.is_file()}
    (ws / "memory" / "2026-11-28.md").write_text("# changed\n\nNew text.\n")
    for secret in ("wrong horse", None):
        service = _service(ws, secret)
        with pytest.raises(PassphraseError, match=MARKER_FILE):
            service.sync()
        with pytest.raises(PassphraseError):
            service.search(SearchRequest(query="zebracorn", show_all=True))
    assert {p: p.read_bytes() for p in snapshot} == snapshot


def test_a_new_store_needs_a_passphrase(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with pytest.raises(PassphraseError, match="encryption is on"):
        _service(ws, None).sync()
    assert _outputs(ws) == []


def test_encrypt_then_decrypt_in_place_without_re_embedding(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, encrypted=False)
    embedder = FakeEmbedder()
    service = _service(ws, embedder=embedder)
    service.sync()
    plain = {p: decode(p.read_bytes(), str(p)) for p in _outputs(ws)}
    embedded = embedder.embedded
    report = service.sync(SyncRequest(encryption="encrypt"))
    assert embedder.embedded == embedded and not report.changed
    assert (ws / "memory" / "aifbin" / MARKER_FILE).is_file()
    assert _files_holding_secrets(ws) == []
    keys = service.ws.keys()
    assert keys is not None
    for path, doc in plain.items():
        back = decode(path.read_bytes(), str(path), keys.keyring)
        assert back.encrypted and [c.text for c in back.chunks] == [c.text for c in doc.chunks]
        assert back.source_text == doc.source_text
    assert service.sync().changed is False  # stays encrypted though botbin.toml does not ask for it
    assert all(p.read_bytes()[5] & 0b10 for p in _outputs(ws))
    service.sync(SyncRequest(encryption="decrypt"))
    assert not (ws / "memory" / "aifbin" / MARKER_FILE).exists()
    assert embedder.embedded == embedded
    for path, doc in plain.items():
        back = decode(path.read_bytes(), str(path))
        assert not back.encrypted and back.source_text == doc.source_text
    assert "Bluefin" in _service(ws, None).search(SearchRequest(query="zebracorn", show_all=True)).hits[0].text


@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
def test_a_conversion_cut_short_is_finished_by_the_next_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direction: Literal["encrypt", "decrypt"]
) -> None:
    ws = _workspace(tmp_path, encrypted=False)
    service = _service(ws)
    service.sync(SyncRequest(encryption="encrypt" if direction == "decrypt" else None))
    real: Callable[..., None] = atomic.atomic_write
    writes: list[Path] = []

    def dying_write(path: Path, data: bytes, sync_dir: bool = True) -> None:
        if path.suffix == ".aif-bin":
            if len(writes) == 1:
                raise KeyboardInterrupt  # stands in for a kill between two files
            writes.append(path)
        real(path, data, sync_dir)

    monkeypatch.setattr(encryption, "atomic_write", dying_write)
    with pytest.raises(KeyboardInterrupt):
        service.sync(SyncRequest(encryption=direction))
    monkeypatch.setattr(encryption, "atomic_write", real)
    flags = [p.read_bytes()[5] & 0b10 for p in _outputs(ws)]
    assert len(set(flags)) == 2  # half converted
    _service(ws).sync()  # a plain sync, another process
    want = 0b10 if direction == "encrypt" else 0
    assert [p.read_bytes()[5] & 0b10 for p in _outputs(ws)] == [want] * 3
    assert (ws / "memory" / "aifbin" / MARKER_FILE).exists() == (direction == "encrypt")


def test_botbin_creates_private_folders_and_files(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _service(ws).remember("The otter logo won.", [])
    out = ws / "memory" / "aifbin"
    for path in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def test_damaged_marker_is_a_clear_error(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _service(ws).sync()
    (ws / "memory" / "aifbin" / MARKER_FILE).write_text("{not json")
    with pytest.raises(PassphraseError, match=r"encryption\.json: encryption marker is unreadable"):
        _service(ws).search(SearchRequest(query="x", show_all=True))


@pytest.mark.model
def test_cli_encrypt_search_extract_decrypt(tmp_path: Path) -> None:
    """The real CLI and model: passphrase from BOTBIN_PASSPHRASE; exit code 6 without one (no terminal)."""
    ws = write_notes(tmp_path / "ws", dict(NOTES))
    (ws / "botbin.toml").write_text(FAST_KDF)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}
    env["PYTHONPATH"] = str(REPO / "server")

    def run(*args: str, secret: str | None = "passphrase one", check: int = 0) -> subprocess.CompletedProcess[str]:
        extra = {"BOTBIN_PASSPHRASE": secret} if secret else {}
        done = subprocess.run(
            [*BOTBIN, *args, "-w", str(ws)],
            capture_output=True,
            text=True,
            env={**env, **extra},
            stdin=subprocess.DEVNULL,
            timeout=300,
        )
        assert done.returncode == check, done.stderr
        return done

    run("sync", secret=None)
    run("encrypt")
    assert _files_holding_secrets(ws) == []
    assert "Bluefin" in run("search", "zebracorn codename").stdout
    no_pass = run("search", "zebracorn", secret=None, check=6)
    assert "encryption.json" in no_pass.stderr and "BOTBIN_PASSPHRASE" in no_pass.stderr
    run("search", "zebracorn", secret="passphrase two", check=6)
    out = ws / "memory" / "aifbin" / "memory" / "people.aif-bin"
    extracted = subprocess.run(
        [*BOTBIN, "extract", str(out)],
        capture_output=True,
        env={**env, "BOTBIN_PASSPHRASE": "passphrase one"},
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert extracted.stdout == (ws / "memory" / "people.md").read_bytes()
    run("extract", str(out), secret=None, check=5)
    run("decrypt")
    assert "Bluefin" in run("search", "zebracorn codename", secret=None).stdout


def test_status_reports_encryption_even_without_the_passphrase(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert _service(ws).status().encryption == "off"  # nothing synced yet: no store
    _service(ws).sync()
    assert _service(ws).status().encryption == "on"
    locked = _service(ws, None).status()
    assert locked.encryption == "on" and locked.files == 3
    assert any("encryption.json" in w and "passphrase" in w for w in locked.warnings)


def _memo_rows(service: MemoryService) -> dict[str, tuple[str, int, bool, str | None, tuple[str, ...]]]:
    service.lifecycle.flush()
    return {
        m.id: (m.path, m.reinforcement_count, m.archived_at is not None, m.archived_text, m.tags)
        for m in service.lifecycle.store.all()
    }


def _plaintext_ann_cache(service: MemoryService) -> Path:
    """The HNSW cache a large plaintext store keeps (index/ann.py writes it; past ANN_MIN_ROWS chunks)."""
    from botbin.index.ann import AnnIndex, usearch_available

    if not usearch_available():
        pytest.skip("usearch is not installed")
    index, _ = service.index()
    keys, vectors = index._assemble().live()
    ann = AnnIndex(index.dim or 384)
    ann.add(keys, vectors)
    path = service.output_dir / "ann.usearch"
    ann.save(path, "test")
    return path


def test_encrypt_leaves_no_note_text_anywhere_and_decrypt_brings_it_all_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every byte of every file under the output folder and botbin's cache folder, after `encrypt` and after a
    remember, search, prune, restore, consolidate and sync in the encrypted store: archived memos' texts (the
    sidecar, archive.md), tags, the load cache, the ANN cache. Archived memos stay hidden; decrypt gives back
    the texts, tags and counts."""
    from botbin.index.load_cache import LOAD_CACHE_FILE, wait_writes
    from botbin.sync.spare import SPARE_FILE

    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    ws = _workspace(tmp_path, encrypted=False)
    (ws / "memory" / "gone.md").write_text("# Gone\n\nA note deleted before the store is encrypted.\n")
    service = _service(ws)
    service.sync()
    (ws / "memory" / "gone.md").unlink()
    service.sync()  # its vectors are kept in the spare file
    assert (
        "Bluefin" in service.search(SearchRequest(query="zebracorn codename", show_all=True)).hits[0].text
    )  # counted once
    later = datetime.now().astimezone() + timedelta(days=400)
    assert len(service.prune(now=later).archived) == 2  # the daily note and people.md
    wait_writes()
    ann = _plaintext_ann_cache(service)
    out = service.output_dir
    caches = [out / LOAD_CACHE_FILE, out / SPARE_FILE, ann, ann.with_name(ann.name + ".json")]
    assert all(p.is_file() for p in caches) and b"Bluefin" in (out / "archive.md").read_bytes()
    before = _memo_rows(service)
    assert any(row[3] and "Bluefin" in row[3] and row[1] == 1 for row in before.values())

    service.sync(SyncRequest(encryption="encrypt"))
    assert _files_holding_secrets(ws, cache) == []
    assert not [p for p in caches if p.exists()]  # chunk texts, vectors: none kept by an encrypted store
    fresh = _service(ws)  # another process, in the encrypted store
    assert not any(
        "Bluefin" in h.text for h in fresh.search(SearchRequest(query="zebracorn codename Bluefin", show_all=True)).hits
    )  # still archived
    fresh.remember("The quokkafish lives under the west pier.", ["harbourtag"])
    assert "quokkafish" in fresh.search(SearchRequest(query="quokkafish pier", show_all=True)).hits[0].text
    pruned = fresh.prune(now=later + timedelta(days=400)).archived
    assert len(pruned) == 1 and pruned[0].path.startswith("memory/20")  # today's daily note
    fresh.restore([pruned[0].id], now=later + timedelta(days=400))
    fresh.prune(now=later + timedelta(days=800))
    fresh.consolidate(now=later + timedelta(days=800))
    fresh.sync()
    fresh.lifecycle.close()
    new_secrets = (*SECRETS, b"quokkafish", b"harbourtag")
    assert _files_holding_secrets(ws, cache, secrets=new_secrets) == []

    _service(ws).sync(SyncRequest(encryption="decrypt"))
    after = _memo_rows(_service(ws, None))
    assert {i: after[i] for i in before} == before  # ids, counts, archived texts and tags as they were
    archive = (out / "archive.md").read_text()
    assert "Bluefin" in archive and "555-0199" in archive and "quokkafish" in archive


def test_a_sidecar_left_in_the_clear_by_an_earlier_encrypt_is_sealed_by_the_next_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store encrypted before the sidecar followed its keys (or by a conversion killed midway): the next
    process that searches seals it, and the memos archived before stay archived."""
    import contextlib

    from botbin.memory.lifecycle import Lifecycle

    ws = _workspace(tmp_path, encrypted=False)
    service = _service(ws)
    service.sync()
    service.prune(now=datetime.now().astimezone() + timedelta(days=400))
    with monkeypatch.context() as patch:  # the conversion as an older botbin did it: outputs only
        patch.setattr(Lifecycle, "following_keys", lambda self, request: contextlib.nullcontext(), raising=False)
        service.sync(SyncRequest(encryption="encrypt"))
    service.lifecycle.close()
    assert _files_holding_secrets(ws)  # the sidecar and archive.md still hold the archived texts
    fresh = _service(ws)
    assert not any(
        "Bluefin" in h.text for h in fresh.search(SearchRequest(query="zebracorn codename Bluefin", show_all=True)).hits
    )
    fresh.lifecycle.close()
    assert _files_holding_secrets(ws) == []


def test_a_load_cache_write_waiting_when_the_store_is_encrypted_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor's server read the plaintext store (its load cache waits for the first search) and another
    process encrypts the store: the waiting write must not put the chunks back in the clear."""
    import threading

    from botbin.index import load_cache

    monkeypatch.setattr(load_cache, "_searched", threading.Event())  # this process has not searched yet
    ws = _workspace(tmp_path, encrypted=False)
    editor = _service(ws)
    editor.sync()
    editor.index()  # the cache write now waits for a search
    _service(ws).sync(SyncRequest(encryption="encrypt"))
    load_cache.wait_writes()
    assert not (editor.output_dir / load_cache.LOAD_CACHE_FILE).exists()
    assert _files_holding_secrets(ws) == []


@pytest.mark.parametrize("weak", ["x", "hunter2", "aaaaaaaaaa"])
def test_a_weak_passphrase_makes_no_new_store_but_opens_an_old_one(tmp_path: Path, weak: str) -> None:
    """Issue 36: a one-letter passphrase was taken silently. A new store needs 8 characters of 4 different ones;
    a store made with a shorter one before opens and syncs as ever (nobody is locked out of their data)."""
    from botbin.crypto.cipher import KdfParams, Keyring, StoreKdf
    from botbin.sync.encryption import Marker

    ws = _workspace(tmp_path)
    with pytest.raises(PassphraseError, match=r"encryption\.json: the passphrase is too weak .*nothing was encrypted"):
        _service(ws, weak).sync()
    assert _outputs(ws) == [] and not (ws / "memory" / "aifbin" / MARKER_FILE).exists()
    kdf = StoreKdf.new(KdfParams(1, 8192, 1))  # the marker an earlier version wrote for this passphrase
    marker = Marker(kdf, Keyring(weak, only=kdf).check_value(kdf), "encrypted")
    atomic.atomic_write(ws / "memory" / "aifbin" / MARKER_FILE, marker.to_json())
    old = _service(ws, weak)
    assert (
        len(old.sync().added) == 3
        and "Bluefin" in old.search(SearchRequest(query="zebracorn codename", show_all=True)).hits[0].text
    )
    assert all(p.read_bytes()[5] & 0b10 for p in _outputs(ws))
