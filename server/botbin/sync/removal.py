"""Notes that left the tracked set: "deleted" (gone from disk) or "excluded" (on disk, no longer tracked),
the guard against a settings change that would empty the index, and the removal of their outputs."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from botbin.config import Settings
from botbin.sync.atomic import remove_empty_dirs
from botbin.sync.cache import vectors_of
from botbin.sync.confine import Confined, is_output, remove_output
from botbin.sync.model_trees import in_model_trees
from botbin.sync.output_paths import note_of
from botbin.sync.spare import Vectors, add_spare
from botbin.sync.state import SyncState


@dataclass(frozen=True)
class Removal:
    """What a sync removes from the index, and what it keeps although it is no longer tracked."""

    deleted: tuple[str, ...] = ()
    """Indexed notes gone from disk: removed."""
    excluded: tuple[str, ...] = ()
    """Indexed notes still on disk that the include/exclude globs no longer match: removed."""
    kept: tuple[str, ...] = ()
    """Indexed notes still on disk that the globs no longer match, kept because removing them would drop
    most of the index (a forgotten ``--vault`` or a wrong glob); ``prune`` removes them."""
    warnings: tuple[str, ...] = ()
    """The line that says why ``kept`` were kept and how to prune them."""


def on_disk(root: Path, rel: str) -> bool:
    """True if note ``rel`` is still a file under ``root`` (a stat; a link is followed)."""
    try:
        return os.path.isfile(root / rel)
    except (OSError, ValueError):
        return False


def prune_hint(settings: Settings) -> str:
    """How to keep or drop notes that the globs no longer match."""
    keep = "" if settings.vault else "; to keep every note indexed, use `botbin sync --vault` or set `vault = true`"
    return f"run `botbin sync --prune` to remove them from the index{keep}"


def plan_removal(root: Path, settings: Settings, gone: list[str], indexed: int, prune: bool) -> Removal:
    """Sort ``gone`` (indexed notes the scan did not find) into deleted and excluded ones.

    ``indexed``: notes the index held before this sync. Excluded notes are removed unless they are most of
    it (more than half) and ``prune`` is False: then they are kept and one warning says how to prune.
    """
    present = {rel: on_disk(root, rel) for rel in gone}
    deleted = tuple(rel for rel in gone if not present[rel])
    excluded = tuple(rel for rel in gone if present[rel])
    if prune or not excluded or len(excluded) * 2 <= indexed:
        return Removal(deleted, excluded)
    globs = ", ".join(settings.tracked_globs)
    exclude = f", exclude: {', '.join(settings.exclude)}" if settings.exclude else ""
    warning = (
        f"{len(excluded)} of {indexed} indexed notes are still on disk but no longer match the tracked "
        f"globs (include: {globs}{exclude}); they stay indexed and nothing was deleted: "
        f"{prune_hint(settings)}"
    )
    return Removal(deleted, (), excluded, (warning,))


@dataclass(frozen=True)
class SpareTarget:
    """Where the vectors of removed outputs go (sync/spare.py)."""

    path: Path
    """The spare file."""
    model_id: str
    dim: int


def remove_outputs(
    root: Path, out_dir: Path, state: SyncState, rels: list[str], spare: SpareTarget | None, warnings: list[str]
) -> None:
    """Drop ``rels`` from ``state`` and remove their outputs (and folders left empty), first moving their
    vectors into the spare file when ``spare`` is given. Problems are appended to ``warnings``."""
    guard = Confined(out_dir)  # an output named by a tampered entry or reached through a planted link stays
    if spare is not None:  # saved before any output goes: a kill in between loses no vector
        saved: Vectors = {}
        for rel in rels:
            saved.update(vectors_of(root / state.files[rel].output, spare.model_id, None, guard, spare.dim))
        try:
            add_spare(spare.path, spare.model_id, spare.dim, saved)
        except OSError as exc:
            warnings.append(f"{spare.path}: cannot keep the removed notes' embeddings ({exc.strerror})")
    for rel in rels:
        target = root / state.files.pop(rel).output
        if (problem := remove_output(guard, target)) is not None:
            warnings.append(problem)
        remove_empty_dirs(target.parent, out_dir)


def sweep_orphans(
    root: Path,
    output_dir: str,
    state: SyncState,
    covers: Callable[[str], bool],
    spare: SpareTarget | None,
    warnings: list[str],
) -> None:
    """Remove ``.aif-bin`` files that no state entry owns (after a lost state file, a note deleted meanwhile
    would otherwise keep its output forever), their vectors first moved to the spare file. Only botbin's own
    output folder (``output_dir``, relative to ``root``) is touched; ``covers(note)`` is True for notes under
    a folder that could not be read (their outputs stay)."""
    out_dir = root / output_dir
    guard = Confined(out_dir)
    owned = {entry.output for entry in state.files.values()}
    orphans = []
    for path in out_dir.rglob("*.aif-bin"):
        if in_model_trees(out_dir, path):  # another model's tree: its own sync keeps it (sync/model_trees.py)
            continue
        rel = path.relative_to(root).as_posix()
        source = note_of(rel[len(output_dir.strip("/")) + 1 :])
        if rel not in owned and not covers(source) and guard.real_path(path) is not None and is_output(path):
            orphans.append(path)  # only what botbin wrote: a link, or a file without the AIF-BIN magic, stays
    if spare is not None and orphans:
        try:
            add_spare(
                spare.path,
                spare.model_id,
                spare.dim,
                {k: v for path in orphans for k, v in vectors_of(path, spare.model_id, None, guard, spare.dim).items()},
            )
        except OSError as exc:
            warnings.append(f"{spare.path}: cannot keep the removed notes' embeddings ({exc.strerror})")
    for path in orphans:
        problem = remove_output(guard, path)
        warnings.append(problem or f"{path}: removed an output no note owns any more")
        remove_empty_dirs(path.parent, out_dir)
