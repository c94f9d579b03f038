"""Per-model output trees: where a model migration builds the new model's AIF-BIN files while the current ones
keep answering, and where the previous model's files stay afterwards (so that switching back embeds nothing);
the migration's progress record; a file put in place by a hard link.

Layout, inside the output folder (a dot folder: the scan never walks it, so no note's output can land there)::

    memory/aifbin/                     the live tree: the model searches use (sync-state.json says which)
    memory/aifbin/.models/
        .botbin.lock                   held by the process that migrates
        migration.json                 progress of the migration under way (MigrationRecord)
        switch.json                    present while the live tree is being switched (sync/tree_switch.py)
        <tree name>/                   one model's tree: its own sync-state.json, outputs mirrored as in the live one

Every file here is read back, so untrusted: records are checked field by field (a bad one is ignored) and tree
names are derived from model ids, never read from a file.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from botbin.sync.atomic import TEMP_PREFIX, atomic_write, make_private_dirs
from botbin.sync.confine import read_confined

MODELS_DIR = ".models"
"""The folder of per-model trees inside the output folder."""
PROGRESS_FILE = "migration.json"
SWITCH_FILE = "switch.json"
RECORD_VERSION = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def tree_name(model_id: str) -> str:
    """The folder name of ``model_id``'s tree: the model folder's last name (readable) and a hash of the whole id
    (unique), e.g. ``all-MiniLM-L6-v2-3f2a9c1d0b``; only ``[A-Za-z0-9._-]``, never a dot first."""
    tail = _UNSAFE.sub("-", model_id.rstrip("/").rsplit("/", 1)[-1]).strip(".-")[:48] or "model"
    return f"{tail}-{hashlib.sha256(model_id.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


def models_rel(output_dir: str) -> str:
    """The ``.models`` folder relative to the workspace (POSIX)."""
    return f"{output_dir.strip('/')}/{MODELS_DIR}"


def tree_rel(output_dir: str, model_id: str) -> str:
    """``model_id``'s tree relative to the workspace (POSIX): an ``output_dir`` for that model's sync."""
    return f"{models_rel(output_dir)}/{tree_name(model_id)}"


def in_model_trees(out_dir: Path, path: Path) -> bool:
    """True if ``path`` (found under the output folder ``out_dir``) lies in its ``.models`` folder: a walk of the
    live tree (orphan sweep, stale temp files) leaves those files to the migration that owns them."""
    try:
        return path.relative_to(out_dir).parts[:1] == (MODELS_DIR,)
    except ValueError:
        return False


@dataclass(frozen=True)
class MigrationRecord:
    """``migration.json``: what the migration under way (or stopped) is doing, for ``botbin status`` in any
    process."""

    to_model: str
    """The model id being migrated to (the ``model`` setting)."""
    from_model: str
    """The model id the live index was built with."""
    phase: str
    """'embedding' (the new tree is being built), 'switching' (the live tree is being replaced), 'failed'."""
    notes_done: int = 0
    """Notes written in the new tree so far, this run and earlier ones."""
    notes_total: int = 0
    """Notes of the live index (what the new tree must hold)."""
    chunks_embedded: int = 0
    """Chunks embedded by this run so far."""
    chunks_to_embed: int = 0
    """Chunks this run has counted to embed (grows while notes are read)."""
    started_at: str = ""
    """When the migration first started (ISO 8601 UTC); kept across resumed runs."""
    updated_at: str = ""
    """When this record was last written (ISO 8601 UTC)."""
    message: str = ""
    """Why it failed or waits (a note the new model could not index, a lock held elsewhere), else empty."""
    pid: int = 0
    """The process that wrote it."""


def write_record(models_dir: Path, record: MigrationRecord) -> None:
    """Write ``migration.json`` atomically. Raises OSError."""
    data = {"version": RECORD_VERSION, **asdict(record)}
    atomic_write(models_dir / PROGRESS_FILE, json.dumps(data, ensure_ascii=False).encode("utf-8"))


def read_record(models_dir: Path) -> MigrationRecord | None:
    """The progress record, or None when there is none or it is not one this botbin wrote (a wrong field type,
    another version): it is only a report, the trees themselves say what is done."""
    try:
        raw = json.loads(read_confined(models_dir, models_dir / PROGRESS_FILE))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(raw, dict) or raw.pop("version", None) != RECORD_VERSION:
        return None
    fields = MigrationRecord.__dataclass_fields__
    if set(raw) != set(fields):
        return None
    for name, value in raw.items():
        if fields[name].type in (int, "int"):
            if type(value) is not int or not 0 <= value < 2**53:
                return None
        elif type(value) is not str:
            return None
    return MigrationRecord(**raw)


def drop_record(models_dir: Path) -> None:
    """Remove ``migration.json`` (the migration is done)."""
    with contextlib.suppress(FileNotFoundError):
        (models_dir / PROGRESS_FILE).unlink()


@dataclass(frozen=True)
class SwitchRecord:
    """``switch.json``: the live tree is being replaced by ``to_model``'s tree (tree names come from the ids)."""

    from_model: str
    to_model: str


def write_switch(models_dir: Path, record: SwitchRecord) -> None:
    """Write ``switch.json`` atomically (before the first live output is replaced). Raises OSError."""
    data = {"version": RECORD_VERSION, "from_model": record.from_model, "to_model": record.to_model}
    atomic_write(models_dir / SWITCH_FILE, json.dumps(data, ensure_ascii=False).encode("utf-8"))


def read_switch(models_dir: Path) -> SwitchRecord | None:
    """The switch under way, or None (none, or not a record this botbin wrote)."""
    try:
        raw = json.loads(read_confined(models_dir, models_dir / SWITCH_FILE))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(raw, dict) or raw.get("version") != RECORD_VERSION:
        return None
    old, new = raw.get("from_model"), raw.get("to_model")
    if not (isinstance(old, str) and isinstance(new, str) and old and new and old != new):
        return None
    return SwitchRecord(old, new)


def drop_switch(models_dir: Path) -> None:
    """Remove ``switch.json`` once the live state file names the new model."""
    with contextlib.suppress(FileNotFoundError):
        (models_dir / SWITCH_FILE).unlink()


#: What os.link raises on a filesystem without hard links (FAT, exFAT, some network shares) or across devices.
_NO_LINKS = frozenset({errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS})


def link_over(src: str, dst: str) -> None:
    """Make ``dst`` the file ``src`` is, atomically (a reader sees the old file or the new one): a hard link
    under a temporary name renamed over ``dst`` (no copy; both names then share the file), or a copy where the
    filesystem has no hard links. Both paths are real paths the caller checked. Raises OSError."""
    make_private_dirs(Path(dst).parent)
    tmp = os.path.join(os.path.dirname(dst), f"{TEMP_PREFIX}{os.path.basename(dst)}.link")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    try:
        os.link(src, tmp, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        atomic_write(Path(dst), Path(src).read_bytes(), sync_dir=False)
        return
    os.replace(tmp, dst)
