"""The sync state file (Bot-BIN paper §3.3 structure plus what incremental sync needs), as JSON.

Shape: ``{"version", "last_sync", "model", "chunker", "files": {rel: {"hash", "synced_at", "chunks",
"output", "size", "mtime_ns", "created_at", "output_bytes", "output_ctime_ns", "ino", "ctime_ns"}}, "encrypted",
"log_id"}``. ``hash`` is the MD5 hex of the note's bytes. The file is untrusted when read back (the output folder
is shared): every field is checked (sync/state_check.py) and one bad value means the state is rebuilt. A
note-level sync appends its entries to the journal beside the file instead of rewriting it (sync/state_log.py);
reading the state replays that journal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botbin.aifbin import FLAG_ENCRYPTED
from botbin.errors import AifBinFormatError
from botbin.sync import state_log
from botbin.sync.atomic import atomic_write
from botbin.sync.confine import read_confined
from botbin.sync.documents import output_rel
from botbin.sync.output_header import guess_output_rel, read_header
from botbin.sync.output_paths import mirrored as mirror
from botbin.sync.output_paths import unescaped_output_rel
from botbin.sync.state_check import BadValue, Fields, note_key, pinned_output, plain_entry

STATE_FILE = "sync-state.json"
#: Present while a sync is writing; found by the next sync, it says the last one was killed mid-way.
JOURNAL_FILE = ".botbin-sync-incomplete"
STATE_VERSION = 2


@dataclass
class FileEntry:
    """What the last sync recorded for one note."""

    hash: str
    """MD5 hex of the note's bytes."""
    synced_at: str
    """ISO 8601 UTC time of the sync that wrote the output."""
    chunks: int
    """Chunks in the output file."""
    output: str
    """The output file, relative to the workspace (POSIX)."""
    size: int
    """Note size in bytes at that sync."""
    mtime_ns: int
    """Note modification time (ns) at that sync."""
    created_at: str = ""
    """When the note's first output was written (ISO 8601 UTC)."""
    output_bytes: int = -1
    """Size of the output file as written; a different size means it was damaged and is rewritten."""
    ino: int = -1
    """Note inode number at that sync (-1: unknown, the next sync hashes the note)."""
    ctime_ns: int = -1
    """Note inode change time (ns) at that sync (-1: unknown, the next sync hashes the note); stored only
    when it differs from ``mtime_ns``."""
    output_ctime_ns: int = -1
    """The output file's inode change time (ns) once written (-1: unknown). Any other value later means something
    wrote or touched it since (even a same-size edit with its mtime put back): the next sync decodes it and
    rewrites it unless it is still this note's whole output."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this entry; ``ctime_ns`` is left out when it equals ``mtime_ns`` (a note last
        written, not restored: most of them), which keeps the state file of a big vault small."""
        data = dict(vars(self))
        if self.ctime_ns == self.mtime_ns:
            del data["ctime_ns"]
        return data

    def matches(self, size: int, mtime_ns: int, ino: int, ctime_ns: int) -> bool:
        """True if a note with this stat is, without reading it, the one recorded here."""
        return (self.size, self.mtime_ns, self.ino, self.ctime_ns) == (size, mtime_ns, ino, ctime_ns)

    def restat(self, size: int, mtime_ns: int, ino: int, ctime_ns: int) -> None:
        """Record a new stat of the same bytes (a touch, a copy, a restore)."""
        self.size, self.mtime_ns, self.ino, self.ctime_ns = size, mtime_ns, ino, ctime_ns


@dataclass
class SyncState:
    """The whole state file."""

    model: str = ""
    """Model id the outputs were embedded with."""
    chunker: dict[str, int] = field(default_factory=dict)
    """Chunker parameters the outputs were cut with."""
    last_sync: str | None = None
    """ISO 8601 UTC time of the last completed sync."""
    files: dict[str, FileEntry] = field(default_factory=dict)
    """Relative note path -> entry."""
    version: int = STATE_VERSION
    encrypted: bool = False
    """True once every output is encrypted (a conversion in either direction ends by setting this)."""
    log_id: str = ""
    """Id of this file's version: journal lines carrying it apply to it (sync/state_log.py)."""

    def header(self) -> dict[str, Any]:
        """Everything but the file entries."""
        return {
            "version": self.version,
            "model": self.model,
            "chunker": self.chunker,
            "last_sync": self.last_sync,
            "encrypted": self.encrypted,
        }

    def apply_header(self, raw: dict[str, Any], where: str = "header") -> None:
        """Take the header fields of ``raw`` (a state file or a journal line's header). Raises BadValue naming
        ``where`` for a field of the wrong type or range."""
        fields = Fields(raw, where)
        self.chunker = fields.int_map("chunker") if "chunker" in raw else self.chunker
        self.model = fields.text("model", self.model)
        self.last_sync = fields.optional_text("last_sync") if "last_sync" in raw else self.last_sync
        self.version = fields.integer("version", self.version, 0, 2**31 - 1)
        self.encrypted = fields.flag("encrypted")

    def to_json(self) -> str:
        """Compact JSON (the file of a 10,000-note vault is ~3 MB; pretty-printing doubles its cost)."""
        data = {
            **self.header(),
            "files": {rel: entry.to_dict() for rel, entry in self.files.items()},
            "log_id": self.log_id,
        }
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _entries(items: Iterable[tuple[object, object]], output_dir: str | None) -> Iterator[tuple[str, FileEntry]]:
    """(note path, entry) of each ``files`` item read back (``_entry``); the entries exactly as this botbin
    writes them pass a cheap check first (``plain_entry``: 10,000 of them in about 15 ms). Raises BadValue."""
    prefix = output_dir.strip("/") + "/" if output_dir is not None else None
    for rel, raw in items:
        fields = plain_entry(rel, raw, prefix) if prefix is not None and type(rel) is str else None
        yield (rel, FileEntry(*fields)) if fields is not None else _entry(rel, raw, output_dir)  # type: ignore[misc]


def _entry(rel: object, raw: object, output_dir: str | None) -> tuple[str, FileEntry]:
    """(note path, entry) of one ``files`` item read back; ``output_dir`` (None: not known) pins its output.
    Raises BadValue naming the field."""
    where = f"files[{str(rel)[:80]!r}]"
    note = note_key(rel, where)
    f = Fields(raw, where)
    mtime_ns = f.integer("mtime_ns", -1)
    stat_field = {"default": -1, "low": -1}
    return note, FileEntry(
        hash=f.md5("hash"),
        synced_at=f.text("synced_at"),
        chunks=f.integer("chunks", low=0, high=2**31 - 1),
        output=pinned_output(f, note, _outputs(note, output_dir)),
        size=f.integer("size", **stat_field),
        mtime_ns=mtime_ns,
        created_at=f.text("created_at", ""),
        output_bytes=f.integer("output_bytes", **stat_field),
        ino=f.integer("ino", **stat_field),
        ctime_ns=f.integer("ctime_ns", mtime_ns),
        output_ctime_ns=f.integer("output_ctime_ns", -1),
    )


def _outputs(rel: str, output_dir: str | None) -> tuple[str, ...]:
    """Where note ``rel``'s output may be, relative to the workspace: its mirrored path, or the one it had before
    folders named like outputs were escaped (sync/output_paths.py); () when the output folder is not known."""
    if output_dir is None:
        return ()
    return tuple(dict.fromkeys((output_rel(rel, output_dir), unescaped_output_rel(rel, output_dir))))


_Stamp = tuple[int, int, int, int, int]
_written: dict[Path, tuple[_Stamp, SyncState]] = {}
_written_lock = threading.Lock()


def state_stamp(path: Path) -> _Stamp | None:
    """(inode, mtime_ns, size) of the state file and (mtime_ns, size) of its journal ((-1, -1) without one),
    None without a state file: a stat of each, which changes whenever either is written."""
    try:
        st = path.stat()
    except OSError:
        return None
    try:
        logged = state_log.log_path(path).stat()
        extra = (logged.st_mtime_ns, logged.st_size)
    except OSError:
        extra = (-1, -1)
    return (st.st_ino, st.st_mtime_ns, st.st_size, *extra)


def remember_state(path: Path, state: SyncState) -> None:
    """After a sync saved ``state`` at ``path`` and is done with it: the next ``load_state(path, reuse=True)`` of
    this process takes this object instead of parsing the file again (at 10,000 notes the parse is most of a
    one-note sync), as long as the file is still the one written (inode, mtime and size; every write is an
    atomic rename, so another writer changes the inode)."""
    stamp = state_stamp(path)
    if stamp is not None:
        with _written_lock:
            _written[path] = (stamp, state)


def load_state(path: Path, output_dir: str | None = None, reuse: bool = False) -> tuple[SyncState, list[str]]:
    """Read the state file at ``path`` (in the output folder ``output_dir``, relative to the workspace;
    guessed when None). ``reuse`` (the sync engine, under the workspace lock): take the state this process
    last saved there (``remember_state``) when the file has not changed since; the object is handed out once.

    Never raises for bad content: a damaged file, or a missing one beside existing outputs, is rebuilt from
    the AIF-BIN files with a warning (rebuild_state below; the next sync re-checks each note by hash and
    re-embeds nothing); with no output to rebuild from, the state is empty.
    """
    if reuse:
        with _written_lock:
            kept = _written.pop(path, None)
        if kept is not None and kept[0] == state_stamp(path):
            return kept[1], []
    try:
        raw = json.loads(read_confined(path.parent, path).decode("utf-8"))
    except FileNotFoundError:
        return _rebuilt(path, output_dir, "state file missing")
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:  # ValueError: a 4,300-digit integer too
        return _rebuilt(path, output_dir, f"state file unreadable ({type(exc).__name__}: {str(exc)[:200]})")
    if not isinstance(raw, dict) or not isinstance(raw.get("files"), dict):
        return _rebuilt(path, output_dir, "state file has no 'files' map")
    try:
        state = _parsed(path, raw, output_dir if output_dir is not None else guess_output_rel(path.parent))
    except BadValue as exc:
        return _rebuilt(path, output_dir, f"state file holds a bad value ({exc})")
    except state_log.BadLine as exc:
        return _rebuilt(path, output_dir, str(exc))
    return state, []


def _parsed(path: Path, raw: dict[str, Any], output_dir: str | None) -> SyncState:
    """The state of the file's JSON ``raw`` with its journal replayed. Raises BadValue for a bad field of the
    file, state_log.BadLine for a bad line of the journal."""
    files = dict(_entries(raw["files"].items(), output_dir))
    state = SyncState(files=files, log_id=Fields(raw, "state").log_id("log_id"))
    state.apply_header(raw)
    if not state.log_id:
        return state
    for number, line in state_log.replay(path, state.log_id):
        try:
            if "header" in line:
                state.apply_header(line["header"], "header")
            for rel, value in line["files"].items():
                if value is None:
                    state.files.pop(note_key(rel, f"files[{str(rel)[:80]!r}]"), None)
                else:
                    state.files.update(_entries([(rel, value)], output_dir))
        except BadValue as exc:
            raise state_log.BadLine(path, number, exc) from None
    return state


def _rebuilt(path: Path, output_dir: str | None, problem: str) -> tuple[SyncState, list[str]]:
    """The state rebuilt from the outputs beside ``path``, with a warning naming ``problem``; an empty state
    (with the warning unless the file is simply missing) when there is nothing to rebuild from."""
    missing = problem == "state file missing"
    if not path.parent.is_dir():
        return SyncState(), []
    rel = output_dir if output_dir is not None else guess_output_rel(path.parent)
    state = rebuild_state(path.parent, rel) if rel is not None else SyncState()
    if state.files:
        return state, [
            f"{path}: {problem}; rebuilt from {len(state.files)} AIF-BIN files (each note is "
            "re-checked by hash; nothing is re-embedded)"
        ]
    if missing:
        return SyncState(), []
    return SyncState(), [f"{path}: {problem}; every note will be re-checked"]


def save_state(path: Path, state: SyncState, only: Collection[str] | None = None) -> None:
    """Record ``state`` at ``path``. ``only``: the notes a note-level sync named (no other entry can have
    changed): their entries are appended to the journal, in proportion to them, unless the journal is due
    to be folded in; otherwise the whole file is written atomically and the journal dropped. Raises OSError
    if it cannot be written."""
    if only is not None and state.log_id and path.is_file() and not state_log.needs_compaction(path):
        files = {rel: (e.to_dict() if (e := state.files.get(rel)) is not None else None) for rel in only}
        state_log.append(path, state.log_id, state.header(), files)
        return
    state.log_id = secrets.token_hex(8)
    atomic_write(path, state.to_json().encode("utf-8"))
    state_log.remove(path)


def mark_interrupted(output_dir: Path) -> None:
    """Create the journal file before a sync's first write (cheap when it exists already)."""
    path = output_dir / JOURNAL_FILE
    if not path.exists():
        atomic_write(path, b"a botbin sync is writing; if no sync runs, the last one was killed\n")


def was_interrupted(output_dir: Path) -> bool:
    """True if the last sync that wrote was killed before it finished."""
    return (output_dir / JOURNAL_FILE).exists()


def mark_complete(output_dir: Path) -> None:
    """Remove the journal file once the state file records everything written."""
    (output_dir / JOURNAL_FILE).unlink(missing_ok=True)


def distrust_mismatched_outputs(root: Path, output_dir: Path, state: SyncState) -> int:
    """After a killed sync: mark for rewriting each entry whose output's ``source_md5`` (public metadata,
    read without the chunk block) is not the entry's hash, e.g. a newer version written before the kill.
    Returns how many were marked."""
    marked = 0
    for entry in state.files.values():
        try:
            same = read_header(root / entry.output, output_dir)[2].get("source_md5") == entry.hash
        except (OSError, AifBinFormatError):
            same = False
        if not same:
            entry.output_bytes = -1
            marked += 1
    return marked


# -- a lost or damaged state file, rebuilt from the AIF-BIN files (their public metadata holds the source
# path, its MD5 and size, the model and the chunker), so it is never read as "nothing indexed" ----------------
log = logging.getLogger(__name__)


def _output_entry(path: Path, out_dir: Path, output_rel: str) -> tuple[str, FileEntry, dict[str, Any], bool] | None:
    """(note path, entry, metadata, encrypted) for one output, or None if it is not a botbin output of the
    note its own path names."""
    try:
        flags, count, meta = read_header(path, out_dir)
        size = path.stat().st_size
    except (OSError, AifBinFormatError) as exc:
        log.info("state rebuild skips %s: %s", path, exc)
        return None
    source, md5, source_bytes = meta.get("source"), meta.get("source_md5"), meta.get("source_bytes")
    mirrored = path.relative_to(out_dir).as_posix()
    if not (
        isinstance(source, str)
        and isinstance(md5, str)
        and isinstance(source_bytes, int)
        and source.endswith(".md")
        and mirrored in (mirror(source), source[:-3] + ".aif-bin")  # (the second: before folders were escaped)
    ):
        return None
    synced = meta.get("synced_at") if isinstance(meta.get("synced_at"), str) else ""
    created = meta.get("created_at") if isinstance(meta.get("created_at"), str) else synced
    # mtime_ns -1: the next sync hashes the note once (its bytes decide; nothing is re-embedded).
    entry = FileEntry(md5, str(synced), count, f"{output_rel}/{mirrored}", source_bytes, -1, str(created), size)
    try:  # what is rebuilt must read back: a header or metadata value out of range leaves this file out
        _entry(source, entry.to_dict(), output_rel)
    except BadValue as exc:
        log.info("state rebuild skips %s: %s", path, exc)
        return None
    return source, entry, meta, bool(flags & FLAG_ENCRYPTED)


def rebuild_state(out_dir: Path, output_rel: str) -> SyncState:
    """A state holding every valid output under ``out_dir`` (``output_rel``: that folder relative to the
    workspace, POSIX). Files that are not outputs of the note their path names are left out."""
    state = SyncState()
    models: Counter[str] = Counter()
    encrypted = []
    for path in sorted(out_dir.rglob("*.aif-bin")):
        found = _output_entry(path, out_dir, output_rel.strip("/"))
        if found is None:
            continue
        rel, entry, meta, locked = found
        state.files[rel] = entry
        model, chunker = meta.get("model"), meta.get("chunker")
        if isinstance(model, dict) and isinstance(model.get("name"), str):
            models[model["name"]] += 1
        if isinstance(chunker, dict) and not state.chunker:
            with contextlib.suppress(BadValue):
                state.chunker = Fields({"chunker": chunker}, str(path)).int_map("chunker")
        encrypted.append(locked)
    state.model = models.most_common(1)[0][0] if models else ""
    state.encrypted = bool(encrypted) and all(encrypted)
    stamps = [e.synced_at for e in state.files.values() if e.synced_at]
    state.last_sync = max(stamps) if stamps else None
    return state
