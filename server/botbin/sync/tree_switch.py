"""The switch of a model migration: the live tree of AIF-BIN files becomes the new model's, in steps that a kill at
any point leaves recoverable, and readers never mix two models.

Under the workspace lock, with the new model's tree complete (sync/model_trees.py):

1. **keep** the live files: each is hard-linked into the old model's tree, whose state file is written at step 4
   (switching back later re-embeds nothing: that tree is then brought up to date like any sync);
2. ``switch.json`` is written;
3. **put** each new file in its live place, a hard link renamed over the old name (``link_over``); notes the new
   tree lacks (deleted since) leave the live tree;
4. the old tree's state file is written; the new tree's names are removed (the live names keep the files);
5. the caller writes the live state file, naming the new model: that write is the switch for every reader;
6. ``finish``: ``switch.json`` and the new tree's state file go.

A reader between 3 and 5 reads the old state file; a live file of the new model is then read from the old tree
instead (index/load.py ``Owner.elsewhere``). A kill between 2 and 5 is finished by the next sync or migration
(``recover``): every step is idempotent.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from botbin.sync import state_log
from botbin.sync.atomic import atomic_write, fsync_dir, remove_empty_dirs
from botbin.sync.confine import Confined, is_output, remove_output
from botbin.sync.documents import output_rel, utc_now
from botbin.sync.encryption import MARKER_FILE
from botbin.sync.model_trees import (
    SwitchRecord,
    drop_switch,
    link_over,
    models_rel,
    read_switch,
    tree_rel,
    write_switch,
)
from botbin.sync.removal import on_disk
from botbin.sync.spare import SPARE_FILE
from botbin.sync.state import STATE_FILE, FileEntry, SyncState, load_state, save_state

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Trees:
    """The trees of one switch, each relative to the workspace (POSIX)."""

    root: Path
    """The workspace folder."""
    live: str
    """The output folder (the ``output_dir`` setting)."""
    from_model: str
    """The model id the live tree holds now."""
    to_model: str
    """The model id it is switched to."""

    @property
    def old(self) -> str:
        """Where the live files go: ``from_model``'s tree."""
        return tree_rel(self.live, self.from_model)

    @property
    def new(self) -> str:
        """Where the new files come from: ``to_model``'s tree."""
        return tree_rel(self.live, self.to_model)

    @property
    def models_dir(self) -> Path:
        return self.root / models_rel(self.live)

    def folder(self, rel: str) -> Path:
        return self.root / rel


def missing_notes(root: Path, live: SyncState, new: SyncState) -> list[str]:
    """Notes of the live index still on disk that the new tree lacks (one the new model could not index, or one no
    longer tracked that the live index keeps until ``--prune``): a switch now would lose them."""
    return sorted(rel for rel in live.files if rel not in new.files and on_disk(root, rel))


def keep_live(trees: Trees, live: SyncState) -> list[str]:
    """Step 1: hard-link every live output into the old model's tree (and its spare vectors and encryption
    marker); an output the old tree had of a note no longer live is removed. Returns warnings naming files."""
    old = trees.folder(trees.old)
    guard_live, guard_old = Confined(trees.folder(trees.live)), Confined(old)
    warnings: list[str] = []
    owned = set()
    for rel, entry in live.files.items():
        target = guard_old.real_path(old / _mirror(rel), follow=False)
        if target is None:
            warnings.append(guard_old.why_not(old / _mirror(rel)))
            continue
        owned.add(target)
        _link_output(guard_live, trees.root / entry.output, target, warnings)
    for path in old.rglob("*.aif-bin") if old.is_dir() else ():
        if os.fspath(path) not in owned and (problem := remove_output(guard_old, path)) is not None:
            warnings.append(problem)
    _carry(trees.folder(trees.live), old, warnings)
    return warnings


def begin(trees: Trees) -> None:
    """Step 2: record the switch. Raises OSError."""
    write_switch(trees.models_dir, SwitchRecord(trees.from_model, trees.to_model))


def put_new(trees: Trees, live: SyncState, new: SyncState) -> tuple[SyncState, list[str]]:
    """Steps 3 and 4: the new tree's outputs in their live places, the old tree's state file written, the new
    tree's names removed. Returns the live state to write (the new model's entries at their live paths) and
    warnings. Idempotent: a new output already moved (its name removed by an earlier, killed run) is skipped."""
    live_dir, new_dir, old_dir = (trees.folder(r) for r in (trees.live, trees.new, trees.old))
    guard_live, guard_new = Confined(live_dir), Confined(new_dir)
    warnings: list[str] = []
    folders: set[Path] = set()
    for rel, entry in new.files.items():
        target = guard_live.real_path(trees.root / output_rel(rel, trees.live), follow=False)
        if target is None:
            warnings.append(guard_live.why_not(trees.root / output_rel(rel, trees.live)))
            continue
        if os.path.lexists(trees.root / entry.output):
            _link_output(guard_new, trees.root / entry.output, target, warnings)
        folders.add(Path(target).parent)
    for rel, entry in live.files.items():
        if rel not in new.files or entry.output != output_rel(rel, trees.live):
            if (problem := remove_output(guard_live, trees.root / entry.output)) is not None:
                warnings.append(problem)
            remove_empty_dirs((trees.root / entry.output).parent, live_dir)
    _carry(new_dir, live_dir, warnings, drop_missing=True)
    for folder in folders:
        fsync_dir(folder)
    kept = _restated(live, lambda rel: f"{trees.old}/{_mirror(rel)}", trees.root)
    save_state(old_dir / STATE_FILE, kept)
    for entry in new.files.values():
        remove_output(guard_new, trees.root / entry.output)
    (new_dir / SPARE_FILE).unlink(missing_ok=True)
    switched = _restated(new, lambda rel: output_rel(rel, trees.live), trees.root)
    switched.last_sync = utc_now()
    return switched, warnings


def finish(trees: Trees) -> None:
    """Step 6: the switch is over (the live state file names the new model); the new tree's leftovers go."""
    drop_switch(trees.models_dir)
    new_dir = trees.folder(trees.new)
    for path in (new_dir / STATE_FILE, state_log.log_path(new_dir / STATE_FILE), new_dir / MARKER_FILE):
        path.unlink(missing_ok=True)
    for folder, _, _ in os.walk(new_dir, topdown=False):  # deepest first: a folder empties before its parent
        remove_empty_dirs(Path(folder), new_dir.parent)


def pending(root: Path, output_dir: str) -> Trees | None:
    """The switch a killed process left unfinished in this workspace, or None."""
    record = read_switch(root / models_rel(output_dir))
    return None if record is None else Trees(root, output_dir, record.from_model, record.to_model)


def recover(trees: Trees) -> tuple[SyncState | None, list[str]]:
    """Finish a switch a kill interrupted (the caller holds the workspace lock and saves the returned live state,
    then calls ``finish``): (None, warnings) when there is nothing left to do or the new tree cannot finish it
    (the record is then dropped: the next sync rewrites the live outputs of the wrong model from their notes)."""
    live, _ = load_state(trees.folder(trees.live) / STATE_FILE, trees.live)
    if live.model == trees.to_model:
        finish(trees)
        return None, []
    new, problems = load_state(trees.folder(trees.new) / STATE_FILE, trees.new)
    if problems or new.model != trees.to_model or live.model != trees.from_model:
        drop_switch(trees.models_dir)
        return None, [f"an interrupted switch to {trees.to_model} could not be finished; the next sync repairs it"]
    return put_new(trees, live, new)


def _mirror(rel: str) -> str:
    """Note ``rel``'s output path inside any tree."""
    return output_rel(rel, "")[1:]


def _link_output(guard: Confined, src: Path, target: str, warnings: list[str]) -> None:
    """``target`` made the output at ``src`` (which must stay in ``guard``'s folder and be an output botbin
    wrote); a warning naming it otherwise."""
    real = guard.real_path(src)
    if real is None or not is_output(real):
        warnings.append(f"{src}: not an AIF-BIN file botbin wrote in its tree; left out of the switch")
        return
    try:
        link_over(real, target)
    except OSError as exc:
        warnings.append(f"{target}: cannot be put in place ({exc.strerror or exc})")


def _carry(src_dir: Path, dst_dir: Path, warnings: list[str], drop_missing: bool = False) -> None:
    """The spare vectors and the encryption marker of one tree, given to another (``drop_missing``: one the
    source lacks is removed from the destination)."""
    for name in (SPARE_FILE, MARKER_FILE):
        src, dst = src_dir / name, dst_dir / name
        try:
            if name == MARKER_FILE and src.is_file():
                atomic_write(dst, src.read_bytes())
            elif src.is_file() and not src.is_symlink():
                link_over(os.fspath(src), os.fspath(dst))
            elif drop_missing and name == SPARE_FILE:
                dst.unlink(missing_ok=True)
        except OSError as exc:
            warnings.append(f"{dst}: cannot be carried over ({exc.strerror or exc})")


def _restated(state: SyncState, where: Callable[[str], str], root: Path) -> SyncState:
    """``state`` with each entry's output moved to ``where(rel)`` and its change time read again (a hard link
    changes a file's inode change time: without this, the next sync would decode every output to trust it)."""
    files: dict[str, FileEntry] = {}
    for rel, entry in state.files.items():
        output = where(rel)
        try:
            ctime = os.lstat(root / output).st_ctime_ns
        except OSError:
            continue  # not put in place (a warning said why): the next sync writes it from its note
        files[rel] = replace(entry, output=output, output_ctime_ns=ctime)
    return SyncState(state.model, dict(state.chunker), state.last_sync, files, encrypted=state.encrypted)
