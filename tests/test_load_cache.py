"""The load cache (index/load_cache.py): a start from it gives the index a fresh load gives; notes edited, removed
or added since it was written come from their AIF-BIN files; a corrupt or mismatched cache is ignored with a
message and rewritten."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from botbin.index.hits import Hit, IndexQuery
from botbin.index.load import load_index
from botbin.index.load_cache import LOAD_CACHE_FILE, CacheConfig, read_cache, wait_writes
from botbin.index.store import MemoryIndex
from botbin.service import MemoryService
from botbin.wire.requests import SyncRequest
from conftest import FakeEmbedder, write_notes

NOTES: dict[str, str | bytes] = {
    "AGENTS.md": "# Agents\n\n- Always answer in English.\n- Do not push to main.\n",
    "MEMORY.md": "# Memory\n\n- Never deploy on Fridays.\n- Always run the tests before a release.\n",
    "memory/2026-11-05.md": "---\ntags: [api, decision]\ndate: 2026-11-05\n---\n# API\n\n"
    "We picked GraphQL over REST for the mobile API.\n\n## Why\n\nFewer round trips on slow networks.\n",
    "memory/2026-11-06.md": "# Deploys\n\nThe deploy pipeline runs on GitHub Actions.\n\nRollback is one click.\n",
    "notes/café.md": "# Café\n\nThe naïve espresso machine needs descaling every month.\n",
    "notes/empty.md": "",
}
QUERIES = ["GraphQL mobile API", "deploy rollback", "espresso descaling", "tests release Fridays", "nothing matches"]


def _service(root: Path, cache: bool) -> MemoryService:
    return MemoryService(root, {"load_cache": cache, "vault": True}, embedder=FakeEmbedder(), env={})


def _answers(index: MemoryIndex) -> list[list[Hit]]:
    vectors = FakeEmbedder().embed(QUERIES)
    return [index.search(IndexQuery(q, v, k=5)) for q, v in zip(QUERIES, vectors, strict=True)]


def _fresh(root: Path) -> list[list[Hit]]:
    index, _ = _service(root, cache=False).index()
    return _answers(index)


@pytest.fixture
def synced(tmp_path: Path) -> Path:
    root = write_notes(tmp_path / "ws", NOTES)
    _service(root, cache=False).sync()
    return root


def _cache_file(root: Path) -> Path:
    return root / "memory" / "aifbin" / LOAD_CACHE_FILE


def _load(root: Path, caplog: pytest.LogCaptureFixture) -> tuple[MemoryIndex, str]:
    """A start with the cache: the index and the load's 'index loaded: ...' line."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="botbin.index"):
        index, _ = _service(root, cache=True).index()
    wait_writes()
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("index loaded:")]
    return index, lines[-1]


def test_a_start_from_the_cache_gives_the_fresh_load(synced: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert not _cache_file(synced).exists()  # a service with load_cache off writes none
    first, said = _load(synced, caplog)
    assert said.startswith("index loaded: 6 notes, 0 of them")
    assert _cache_file(synced).is_file()
    again, said = _load(synced, caplog)
    assert said == "index loaded: 6 notes, 6 of them from the load cache with its BM25 postings"
    fresh, _ = _service(synced, cache=False).index()
    assert _answers(again) == _answers(fresh) == _answers(first)
    assert any(_answers(fresh))
    assert again.directives() == fresh.directives() and again.directives()
    assert again.instruction_notes() == fresh.instruction_notes() == ["AGENTS.md"]
    assert again.chunk_refs() == fresh.chunk_refs()
    assert (again.note_count, len(again)) == (fresh.note_count, len(fresh))


def test_notes_changed_since_the_cache_come_from_their_files(
    synced: Path, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    _load(synced, caplog)  # writes the cache
    (synced / "memory" / "2026-11-06.md").write_text("# Deploys\n\nDeploys now run on Buildkite.\n", encoding="utf-8")
    (synced / "notes" / "café.md").unlink()
    write_notes(synced, {"notes/tea.md": "# Tea\n\nGreen tea steeps for two minutes.\n"})
    _service(synced, cache=False).sync()  # another process's sync: the cache is not touched
    index, said = _load(synced, caplog)
    assert said == "index loaded: 6 notes, 4 of them from the load cache"  # edited, added: from their files
    assert _answers(index) == _fresh(synced)
    assert "notes/café.md" not in index.note_paths() and "notes/tea.md" in index.note_paths()
    vector = FakeEmbedder().embed(["Buildkite"])[0]
    assert [h.path for h in index.search(IndexQuery("Buildkite", vector, k=1))] == ["memory/2026-11-06.md"]
    _, said = _load(synced, caplog)  # rewritten after that load
    assert said.startswith("index loaded: 6 notes, 6 of them")


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_corrupt_cache_is_ignored_with_a_message_and_rewritten(
    synced: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    _load(synced, caplog)
    cache = _cache_file(synced)
    data = cache.read_bytes()
    cache.write_bytes(
        {"truncated": data[: len(data) // 2], "garbage": b"PK\x03\x04" + b"x" * 500, "empty": b""}[damage]
    )
    index, said = _load(synced, caplog)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(str(cache) in w and "unreadable load cache" in w for w in warned), warned
    assert said.startswith("index loaded: 6 notes, 0 of them")
    assert _answers(index) == _fresh(synced)
    _, said = _load(synced, caplog)
    assert said.startswith("index loaded: 6 notes, 6 of them")


def test_a_cache_of_another_model_or_dimension_is_not_used(synced: Path, caplog: pytest.LogCaptureFixture) -> None:
    _load(synced, caplog)
    cache = _cache_file(synced)
    model = FakeEmbedder.model_id
    assert read_cache(CacheConfig(cache, model), 384) is not None
    with caplog.at_level(logging.INFO, logger="botbin.index"):
        assert read_cache(CacheConfig(cache, "other/model"), 384) is None
        assert read_cache(CacheConfig(cache, model), 768) is None
    said = [r.getMessage() for r in caplog.records]
    assert any("written for model" in s and "other/model" in s for s in said)
    assert any("dimension 384" in s for s in said)


def test_load_index_without_a_cache_file_writes_one(synced: Path, tmp_path: Path) -> None:
    files = sorted((synced / "memory" / "aifbin").rglob("*.aif-bin"))
    config = CacheConfig(tmp_path / "elsewhere.npz", FakeEmbedder.model_id)
    plain, _ = load_index(files, 384)
    cached, _ = load_index(files, 384, cache=config)
    wait_writes()
    again, _ = load_index(files, 384, cache=config)
    assert _answers(plain) == _answers(cached) == _answers(again)
    loaded = read_cache(config, 384)
    assert loaded is not None and set(loaded.stamps) == {str(f) for f in files}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.npz", "ws"]  # the temporary file renamed


def test_an_encrypted_store_keeps_no_cache(synced: Path, caplog: pytest.LogCaptureFixture) -> None:
    _load(synced, caplog)
    assert b"espresso" in _cache_file(synced).read_bytes()  # chunk text in the clear
    (synced / "botbin.toml").write_text("encryption = true\nkdf_time_cost = 1\nkdf_memory_kib = 8192\n")
    secret = "hunter2 horse"
    service = MemoryService(synced, {"vault": True}, embedder=FakeEmbedder(), env={}, passphrase=lambda: secret)
    service.sync(SyncRequest(encryption="encrypt"))
    assert not _cache_file(synced).exists()  # removed as the store is encrypted
    index, _ = service.index()
    wait_writes()
    assert index.note_count == 6 and not _cache_file(synced).exists()


def test_an_index_started_from_the_cache_takes_later_edits(synced: Path, caplog: pytest.LogCaptureFixture) -> None:
    _load(synced, caplog)
    service = _service(synced, cache=True)
    index, _ = service.index()  # every note a hit: the BM25 postings adopted from the cache
    (synced / "memory" / "2026-11-05.md").write_text("# API\n\nWe moved the mobile API to gRPC.\n", encoding="utf-8")
    write_notes(synced, {"notes/tea.md": "# Tea\n\nGreen tea for the API review.\n"})
    service.sync()  # patches the loaded index note by note
    assert service.index()[0] is index
    assert _answers(index) == _fresh(synced)


def test_a_load_leaves_the_garbage_collector_as_it_found_it(synced: Path) -> None:
    """load_index pauses the cyclic collector (index/load.py); it never turns it on or off for good, and freezes
    what it made only in a process that freezes already (the botbin command's start-up imports)."""
    import gc

    files = sorted((synced / "memory" / "aifbin").rglob("*.aif-bin"))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    index, _ = load_index(files, 384)
    assert gc.isenabled() and gc.get_freeze_count() == 0 and index.note_count == 6
    gc.disable()
    try:
        again, _ = load_index(files, 384)
        assert not gc.isenabled() and again.note_count == 6
        gc.enable()
        gc.freeze()
        before = gc.get_freeze_count()
        third, _ = load_index(files, 384)
        assert gc.isenabled() and gc.get_freeze_count() > before and third.note_count == 6
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_cache_of_an_older_format_is_ignored_and_rewritten(
    synced: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botbin.index import load_cache

    monkeypatch.setattr(load_cache, "FORMAT", 1)  # a cache written by the botbin of one record per chunk
    _load(synced, caplog)
    monkeypatch.undo()
    index, said = _load(synced, caplog)
    assert any("format 1, this botbin writes 2" in r.getMessage() for r in caplog.records)
    assert said.startswith("index loaded: 6 notes, 0 of them") and _answers(index) == _fresh(synced)
    _, said = _load(synced, caplog)  # rewritten in the columns
    assert said == "index loaded: 6 notes, 6 of them from the load cache with its BM25 postings"
