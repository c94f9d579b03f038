"""Model migration (workspace/migration.py) with real models: the bundled all-MiniLM-L6-v2 and a second model made
from it (its first 3 layers: another vector space). The index moves when the ``model`` setting changes, loses no
note, answers from the old model until the switch, and switching back embeds nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from botbin.aifbin import AifBinDocument, decode
from botbin.embedding import BUNDLED_MODEL_ID, ModelSpec, SentenceTransformerEmbedder
from botbin.errors import ModelError
from botbin.search.pipeline import SearchResult
from botbin.service import MemoryService
from botbin.sync.model_trees import MODELS_DIR, tree_name
from botbin.sync.state import JOURNAL_FILE
from botbin.wire.requests import SearchRequest, SyncRequest
from conftest import run_checker, write_notes

from .conftest import SETTINGS

QUERY = "which database stores the sensor measurements"


def ask(query: str = QUERY, k: int | None = None) -> SearchRequest:
    """A search for ``query`` (the ``top_k`` setting's hits when ``k`` is None), weak hits too: the cosines of
    every hit show which model answered."""
    return SearchRequest(query=query, k=k, show_all=True)


def found(result: SearchResult) -> frozenset[tuple[str, int, float]]:
    """The hits of a search as (note, first line, cosine): which model answered shows in the cosines."""
    return frozenset((h.path, h.start_line, round(h.cosine, 4)) for h in result.hits)


def outputs(svc: MemoryService) -> dict[str, bytes]:
    """Every live output's bytes, by note."""
    state, _ = svc.ws.state()
    return {rel: (svc.root / entry.output).read_bytes() for rel, entry in state.files.items()}


def read(path: Path) -> AifBinDocument:
    return decode(path.read_bytes(), str(path))


def model_id(folder: Path) -> str:
    return f"local:{folder.resolve()}"


def test_migration_switches_to_the_new_model_and_loses_no_note(
    workspace: Callable[..., MemoryService], second_model: Path
) -> None:
    first = workspace()
    before, original = first.status(), outputs(first)
    old_answer = found(first.search(ask(), reinforce=False))
    svc = workspace(model=str(second_model))
    status = svc.status()
    assert status.model == BUNDLED_MODEL_ID and status.migration is not None
    assert (status.migration.phase, status.migration.to_model) == ("paused", model_id(second_model))
    assert found(svc.search(ask(), reinforce=False)) == old_answer  # the old index answers until the switch

    report = svc.ws.migrate()
    assert report is not None and report.switched, report
    assert report.notes == before.files and report.chunks_embedded == before.chunks
    after = svc.status()
    assert (after.model, after.files, after.chunks, after.migration) == (
        model_id(second_model),
        before.files,
        before.chunks,
        None,
    )
    assert set(outputs(svc)) == set(original)
    state, _ = svc.ws.state()
    kept = svc.output_dir / MODELS_DIR / tree_name(BUNDLED_MODEL_ID)
    second = SentenceTransformerEmbedder(ModelSpec(model_id(second_model), second_model))
    query = second.embed([QUERY])[0]
    for rel, entry in state.files.items():
        doc = read(svc.root / entry.output)
        assert doc.metadata["model"] == {
            "name": model_id(second_model),
            "dim": 384,
            "normalized": True,
            "max_tokens": 256,
        }
        old = read(kept / entry.output[len(svc.settings.output_dir) + 1 :])
        assert (kept / entry.output[len(svc.settings.output_dir) + 1 :]).read_bytes() == original[rel]
        assert float(doc.chunks[0].embedding @ old.chunks[0].embedding) < 0.95  # another vector space
    hits = svc.search(ask(), reinforce=False).hits
    assert hits and hits[0].path.startswith("notes/database-")
    for hit in hits:  # the cosines are the second model's own
        doc = read(svc.root / state.files[hit.path].output)
        chunk = next(c for c in doc.chunks if c.start_line == hit.start_line)
        assert hit.cosine == pytest.approx(float(query @ chunk.embedding), abs=1e-4)
    assert run_checker(svc.root, svc.output_dir).returncode == 0


def test_switching_back_embeds_nothing_and_restores_the_same_files(
    workspace: Callable[..., MemoryService], second_model: Path
) -> None:
    first = workspace()
    original, old_answer = outputs(first), found(first.search(ask(), reinforce=False))
    assert workspace(model=str(second_model)).ws.migrate() is not None
    back = workspace()
    assert back.status().migration is not None
    report = back.ws.migrate()
    assert report is not None and report.switched and report.chunks_embedded == 0
    assert outputs(back) == original  # the very files the first model wrote
    assert back.status().model == BUNDLED_MODEL_ID
    assert found(back.search(ask(), reinforce=False)) == old_answer
    again = workspace(model=str(second_model)).ws.migrate()  # and forth again: the second model's tree was kept too
    assert again is not None and again.switched and again.chunks_embedded == 0


def test_searches_answer_during_a_background_migration_and_a_save_is_not_lost(
    workspace: Callable[..., MemoryService], second_model: Path
) -> None:
    svc = workspace(model=str(second_model))
    old_answer = found(svc.search(ask(), reinforce=False))
    assert svc.ws.migration.start_background()
    seen = []
    edited = svc.root / "notes" / "garden-0.md"
    edited.write_text(edited.read_text() + "\n## Pests\n\nSlugs eat the lettuce at night.\n")
    synced = svc.sync(SyncRequest(only=frozenset({"notes/garden-0.md"})))  # a save while the new index is built
    assert synced.modified == ("notes/garden-0.md",)
    while not svc.ws.migration.wait(0.0):
        seen.append(found(svc.search(ask(), reinforce=False)))
    assert svc.ws.migration.last is not None and svc.ws.migration.last.switched
    new_answer = found(svc.search(ask(), reinforce=False))
    assert new_answer != old_answer
    assert seen and old_answer in seen, "no search answered while the migration ran"
    assert set(seen) <= {old_answer, new_answer}, "a search mixed the two models"
    hit = svc.search(ask("what eats the lettuce at night", 1), reinforce=False).hits[0]
    assert hit.path == "notes/garden-0.md" and "Slugs" in hit.text  # the save made it into the new index


def test_another_process_switching_is_followed_without_reembedding(
    workspace: Callable[..., MemoryService], second_model: Path
) -> None:
    server = workspace(model=str(second_model))  # a long-lived process with its index loaded
    server.index()
    old_answer = found(server.search(ask(), reinforce=False))
    assert workspace(model=str(second_model)).ws.migrate() is not None  # `botbin sync` in another process
    assert found(server.search(ask(), reinforce=False)) != old_answer
    assert server.ws.models.meta.name == model_id(second_model)
    assert server.sync().chunks_embedded == 0  # its next sync uses the new model: nothing re-embedded


def test_a_wrong_model_path_is_reported_and_the_index_keeps_answering(
    workspace: Callable[..., MemoryService], tmp_path: Path
) -> None:
    first = workspace()
    original, old_answer = outputs(first), found(first.search(ask(), reinforce=False))
    svc = workspace(model=str(tmp_path / "no-such-model"))
    assert any("setting 'model' not used" in w and "no-such-model" in w for w in svc.warnings)
    status = svc.status()
    assert status.model == BUNDLED_MODEL_ID and status.migration is not None
    assert status.migration.phase == "refused" and "no-such-model" in status.migration.message
    result = svc.search(ask(), reinforce=False)
    assert not result.degraded and found(result) == old_answer
    with pytest.raises(ModelError):
        svc.ws.migrate()
    assert svc.sync().chunks_embedded == 0 and outputs(svc) == original
    assert (
        svc.sync(SyncRequest(full=True)).chunks_embedded == 0
    )  # re-chunked with the index's own model: nothing to embed
    assert {read(svc.root / e.output).metadata["model"]["name"] for e in svc.ws.state()[0].files.values()} == {
        BUNDLED_MODEL_ID
    }


def test_the_live_sync_leaves_the_model_trees_alone(
    workspace: Callable[..., MemoryService], second_model: Path
) -> None:
    """A sync after a killed one sweeps outputs no state entry owns and stale temp files: never another model's."""
    assert workspace(model=str(second_model)).ws.migrate() is not None
    svc = workspace(model=str(second_model))
    kept = svc.output_dir / MODELS_DIR / tree_name(BUNDLED_MODEL_ID)
    files = sorted(p.relative_to(kept) for p in kept.rglob("*.aif-bin"))
    assert files
    (svc.output_dir / JOURNAL_FILE).write_text("killed\n")
    svc.sync()
    assert sorted(p.relative_to(kept) for p in kept.rglob("*.aif-bin")) == files
    back = workspace().ws.migrate()
    assert back is not None and back.chunks_embedded == 0


def test_a_note_added_during_the_migration_is_in_the_new_index(
    workspace: Callable[..., MemoryService], second_model: Path
) -> None:
    svc = workspace(model=str(second_model))
    write_notes(svc.root, {"notes/late.md": "# Late\n\nThe archive moved to cold storage in December.\n"})
    report = svc.ws.migrate()  # its last pass, under the workspace lock, takes the note the live index lacks
    assert report is not None and report.switched
    assert "notes/late.md" in svc.ws.state()[0].files
    hit = svc.search(ask("where did the archive move", 1), reinforce=False).hits[0]
    assert hit.path == "notes/late.md"
    assert np.isfinite(hit.cosine)


def test_an_encrypted_store_migrates_sealed_and_back(synced_topics: Path, tmp_path: Path, second_model: Path) -> None:
    """The new model's tree is encrypted with the store's own key from its first file; no plaintext cache of either
    model is left; switching back embeds nothing."""
    import shutil

    from botbin.aifbin import FLAG_ENCRYPTED
    from botbin.sync.spare import SPARE_FILE

    root = tmp_path / "sealed"
    shutil.copytree(synced_topics, root)
    sealed = {**SETTINGS, "encryption": True, "kdf_time_cost": 1, "kdf_memory_kib": 8192, "kdf_parallelism": 1}

    def open_service(**more: object) -> MemoryService:
        return MemoryService(root, {**sealed, **more}, env={}, passphrase=lambda: "correct horse battery staple")

    first = open_service()
    assert first.sync().chunks_embedded == 0
    old_answer = found(first.search(ask(), reinforce=False))
    svc = open_service(model=str(second_model))
    tree = svc.output_dir / MODELS_DIR / tree_name(model_id(second_model))
    report = svc.ws.migrate()
    assert report is not None and report.switched
    kept = svc.output_dir / MODELS_DIR / tree_name(BUNDLED_MODEL_ID)
    for folder in (svc.output_dir, kept):
        files = list(folder.glob("notes/*.aif-bin"))
        assert files and all(p.read_bytes()[5] & FLAG_ENCRYPTED for p in files)
        assert not (folder / SPARE_FILE).exists()
    for name in ("index-cache.npz", "ann.usearch"):
        assert not list(svc.output_dir.rglob(name))
    assert b"TimescaleDB" not in b"".join(p.read_bytes() for p in svc.output_dir.rglob("*") if p.is_file())
    assert not list(tree.glob("notes/*.aif-bin"))
    assert found(svc.search(ask(), reinforce=False)) != old_answer
    back = open_service().ws.migrate()
    assert back is not None and back.switched and back.chunks_embedded == 0
    assert found(open_service().search(ask(), reinforce=False)) == old_answer
