"""Issue 20, item 1: settings that change the tracked set never throw the index away; "deleted" (gone from
disk) and "excluded" (on disk, no longer tracked) are separate; an untracked vault gets one hint line."""

from __future__ import annotations

import io
import json
from pathlib import Path

from botbin.cli.output import print_hits
from botbin.service import MemoryService
from botbin.sync.engine import SyncReport
from botbin.sync.spare import SPARE_FILE
from botbin.wire.requests import SearchRequest, SyncRequest
from conftest import FakeEmbedder, write_notes

VAULT = {
    "Start here.md": "# Start here\n\nThe vault keeps notes about herons and lakes.\n",
    "Birds/Heron.md": "# Heron\n\nHerons nest in tall trees near the water.\n",
    "Birds/Quokka.md": "# Quokka\n\nThe quokka is a small marsupial of Rottnest Island.\n",
    "Archive/Old plan.md": "# Old plan\n\nWe once planned a zebrafish aquarium in the hall.\n",
    "Archive/Older plan.md": "# Older plan\n\nAn even older plan involved telescopes on the roof.\n",
}


def _sync(service: MemoryService, prune: bool = False) -> SyncReport:
    return service.sync(SyncRequest(prune=prune))


def _outputs(service: MemoryService) -> list[str]:
    return sorted(p.relative_to(service.output_dir).as_posix() for p in service.output_dir.rglob("*.aif-bin"))


def test_plain_sync_after_vault_sync_keeps_the_index_and_asks_for_prune(
    tmp_path: Path, fake_embedder: FakeEmbedder
) -> None:
    root = write_notes(tmp_path / "vault", VAULT)
    vault = MemoryService(root, {"vault": True}, embedder=fake_embedder, env={})
    assert len(vault.sync().added) == 5
    outputs = _outputs(vault)
    plain = MemoryService(root, embedder=fake_embedder, env={})  # the README's plain `botbin sync`
    report = _sync(plain)
    assert report.deleted == () and report.excluded == () and not report.changed
    assert sorted(report.kept_excluded) == sorted(VAULT)
    assert any("--prune" in w and "--vault" in w and "5 of 5" in w for w in report.warnings)
    assert _outputs(plain) == outputs
    assert len(json.loads(plain.ws.state_path.read_text())["files"]) == 5
    assert vault.search(
        SearchRequest(query="herons nest", k=1, show_all=True)
    ).hits  # still searchable with the settings that track them
    hidden = plain.search(
        SearchRequest(query="herons nest", k=1, show_all=True)
    )  # the plain settings exclude them: not returned, and it says why
    assert not hidden.hits and hidden.stale and any("excluded" in w for w in hidden.warnings)
    shown = io.StringIO()
    print_hits(hidden.hits, out=shown, stale=hidden.stale)  # what `botbin search` prints on stdout then
    assert "left out" in shown.getvalue() and "--vault" in shown.getvalue()


def test_status_calls_untracked_notes_excluded_not_deleted(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    root = write_notes(tmp_path / "vault", VAULT)
    MemoryService(root, {"vault": True}, embedder=fake_embedder, env={}).sync()
    (root / "Birds/Quokka.md").unlink()
    reasons = {s.path: s.reason for s in MemoryService(root, embedder=fake_embedder, env={}).status().stale}
    assert reasons["Birds/Quokka.md"] == "deleted, still indexed"
    assert reasons["Birds/Heron.md"].startswith("excluded")
    assert "deleted" not in reasons["Birds/Heron.md"]


def test_prune_removes_excluded_notes_and_keeps_their_embeddings(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    root = write_notes(tmp_path / "vault", VAULT)
    MemoryService(root, {"vault": True}, embedder=fake_embedder, env={}).sync()
    (root / "Birds/Quokka.md").unlink()
    report = _sync(MemoryService(root, embedder=fake_embedder, env={}), prune=True)
    assert report.deleted == ("Birds/Quokka.md",)
    assert sorted(report.excluded) == sorted(set(VAULT) - {"Birds/Quokka.md"})
    assert set(report.removed) == set(VAULT)
    plain = MemoryService(root, embedder=fake_embedder, env={})
    assert _outputs(plain) == [] and (plain.output_dir / SPARE_FILE).is_file()
    before = fake_embedder.embedded
    (root / "Birds/Quokka.md").write_text(VAULT["Birds/Quokka.md"], encoding="utf-8")
    again = MemoryService(root, {"vault": True}, embedder=fake_embedder, env={}).sync()
    assert len(again.added) == 5 and again.chunks_embedded == 0  # every vector came from the spare file
    assert fake_embedder.embedded == before


def test_excluding_a_few_notes_removes_them_as_excluded(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    root = write_notes(tmp_path / "vault", VAULT)
    MemoryService(root, {"vault": True}, embedder=fake_embedder, env={}).sync()
    report = MemoryService(root, {"vault": True, "exclude": ["Archive/**"]}, embedder=fake_embedder, env={}).sync()
    assert report.deleted == () and report.kept_excluded == ()
    assert sorted(report.excluded) == ["Archive/Old plan.md", "Archive/Older plan.md"]
    assert report.changed


def test_fresh_vault_without_vault_mode_names_the_flag(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    root = write_notes(tmp_path / "vault", VAULT)
    service = MemoryService(root, embedder=fake_embedder, env={})
    report = service.sync()
    assert report.added == ()
    hints = [w for w in report.warnings if "--vault" in w]
    assert len(hints) == 1 and "5 markdown notes" in hints[0] and "vault = true" in hints[0]
    assert any("--vault" in w for w in service.status().warnings)


def test_no_hint_when_notes_are_tracked_or_there_are_none(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    tracked = write_notes(tmp_path / "ws", {"MEMORY.md": "# M\n\nA rule.\n", "README.md": "# R\n\nText.\n"})
    assert not any("--vault" in w for w in MemoryService(tracked, embedder=fake_embedder, env={}).sync().warnings)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert MemoryService(empty, embedder=fake_embedder, env={}).sync().warnings == ()


def test_full_sync_of_unchanged_notes_reports_rechunked_not_modified(
    tmp_path: Path, fake_embedder: FakeEmbedder
) -> None:
    root = write_notes(tmp_path / "vault", VAULT)
    service = MemoryService(root, {"vault": True}, embedder=fake_embedder, env={})
    service.sync()
    report = service.sync(SyncRequest(full=True))
    assert report.modified == () and report.added == () and report.chunks_embedded == 0
    assert sorted(report.rechunked) == sorted(VAULT) and report.unchanged == 5
