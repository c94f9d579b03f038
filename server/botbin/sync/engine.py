"""The sync engine: scan, detect changes (size+mtime+inode+ctime fast path, then MD5), embed what changed, write.

Every note is handled on its own: a failing note is reported with its path and reason and keeps its
previous output, while every other note syncs. Nothing under the workspace but the output folder is
ever written.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from botbin.aifbin import AifBinDocument, encode
from botbin.chunking import ChunkerParams, TokenCounter
from botbin.config import Settings
from botbin.embedding import Embedder
from botbin.errors import BotbinError, WorkspaceError
from botbin.sync.atomic import atomic_write, fsync_dir, remove_stale_temps
from botbin.sync.cache import EmbeddingCache
from botbin.sync.candidates import candidates, needs_full_check, renames
from botbin.sync.candidates import output_intact as output_intact  # re-exported
from botbin.sync.documents import ModelMeta, PreparedNote, build_document, output_rel, prepare_note, utc_now
from botbin.sync.encryption import PassphraseFn, StoreKeys, convert_outputs, finish_decryption, writer_keys
from botbin.sync.lock import workspace_lock
from botbin.sync.progress import ChunkProgress, embed_in_steps
from botbin.sync.progress import ProgressFn as ProgressFn  # re-exported
from botbin.sync.removal import SpareTarget, plan_removal, remove_outputs, sweep_orphans
from botbin.sync.report import NoteFailure as NoteFailure  # re-exported: callers import them from here
from botbin.sync.report import SyncReport as SyncReport
from botbin.sync.scan import (
    FileStat,
    check_root,
    outside_target,
    read_note,
    scan_notes,
    scan_workspace,
    untracked_notes_hint,
)
from botbin.sync.spare import SPARE_FILE, read_spare
from botbin.sync.state import (
    STATE_FILE,
    FileEntry,
    SyncState,
    distrust_mismatched_outputs,
    load_state,
    mark_complete,
    mark_interrupted,
    save_state,
    was_interrupted,
)

log = logging.getLogger(__name__)

#: Chunks embedded and written per group; the state file is saved after each group, so a killed
#: cold sync keeps what it finished.
GROUP_CHUNKS = 512

#: Chunks of changed notes prepared and counted before their embedding starts (progress then knows the
#: whole cold sync of a vault this size; a bigger one is embedded in rounds of this many, held in memory).
PLAN_CHUNKS = 20_000

#: Least seconds between two saves of the state file during a long sync (it is always saved at the end);
#: a killed sync loses at most this much bookkeeping, never embeddings (they are in the written files).
CHECKPOINT_S = 5.0

#: written(note_path, document): called after each document is durably written (to patch an index live)
WrittenFn = Callable[[str, AifBinDocument], None]


@dataclass
class SyncContext:
    """Everything a sync needs; the tokenizer and model are created only when a note changed."""

    root: Path
    settings: Settings
    model: ModelMeta
    counter: Callable[[], TokenCounter]
    embedder: Callable[[], Embedder]
    passphrase: PassphraseFn = lambda: None
    """Asked only when the store is encrypted (or encryption is on), never stored."""

    @property
    def output_dir(self) -> Path:
        return self.root / self.settings.output_dir

    @property
    def params(self) -> ChunkerParams:
        s = self.settings
        return ChunkerParams(min(s.target_tokens, self.model.max_tokens), s.overlap_tokens, s.min_tokens)


class _Run:
    """One sync run's working state."""

    def __init__(
        self,
        ctx: SyncContext,
        state: SyncState,
        keep_documents: bool,
        written: WrittenFn | None,
        keys: StoreKeys | None,
        progress: ProgressFn | None = None,
    ) -> None:
        self.ctx, self.state, self.keep_documents, self.written = ctx, state, keep_documents, written
        self.progress = ChunkProgress(progress)
        self.planned: set[str] = set()
        """text_md5 of the queued chunks counted as to embed."""
        self.cipher = keys.cipher if keys is not None else None
        self.cache = EmbeddingCache(ctx.model.name, keys.keyring if keys is not None else None)
        self.added: list[str] = []
        self.modified: list[str] = []
        self.rechunked: list[str] = []
        self.failed: list[NoteFailure] = []
        self.warnings: list[str] = []
        self.documents: dict[str, AifBinDocument] = {}
        self.embedded = self.reused = 0
        self.group: list[tuple[PreparedNote, FileStat]] = []
        """Notes waiting for embeddings, each with its stat."""
        self.group_chunks = 0
        """Chunks in ``group``."""
        self.dirty = False
        """True once the state differs from the state file."""
        self.saved_during_run = False
        self.saved_at = time.monotonic()
        self.cache_sources: list[Path] = []
        """Outputs of deleted notes: read into the cache only if something needs embedding (renames)."""
        self.spare = (
            None if keys is not None else SpareTarget(ctx.output_dir / SPARE_FILE, ctx.model.name, ctx.model.dim)
        )
        """Where removed notes' vectors go; None for an encrypted store (vectors reveal the text)."""
        self.spare_read = False
        self.full = False
        """The caller asked for a full sync."""
        self.new_model = bool(state.files) and state.model != ctx.model.name
        """The outputs were embedded with another model: every note is re-embedded ("modified")."""

    def handle(self, rel: str, st: FileStat, force: bool) -> bool:
        """Check one candidate note; queue it if its content changed. False if it vanished meanwhile."""
        limit, size = self.ctx.settings.max_note_bytes, st.size
        if size > limit:
            self.failed.append(
                NoteFailure(
                    rel, f"{size:,} bytes is over max_note_bytes ({limit:,}); skipped, raise max_note_bytes to index it"
                )
            )
            return True
        try:  # refuses a note that became a link outside the workspace after the scan
            data = read_note(self.ctx.root, rel, self.ctx.settings.follow_symlinks)
        except FileNotFoundError:
            return False
        except OSError as exc:
            self.failed.append(NoteFailure(rel, f"cannot read ({exc.strerror or exc})"))
            return True
        entry = self.state.files.get(rel)
        md5 = hashlib.md5(data).hexdigest()
        if (
            entry is not None
            and entry.hash == md5
            and not force
            and output_intact(self.ctx.root / entry.output, entry.output_bytes)
        ):
            entry.restat(len(data), st.mtime_ns, st.ino, st.ctime_ns)
            self.dirty = True
            return True
        try:
            prep = prepare_note(
                rel, data, self.ctx.counter(), self.ctx.params, md5, self.ctx.settings.instruction_notes
            )
        except BotbinError as exc:
            self.failed.append(NoteFailure(rel, exc.reason))
            return True
        self.warnings.extend(prep.warnings)
        # Same bytes under ``full``: re-chunked (vectors reused), unless another model re-embeds every chunk.
        same = entry is not None and entry.hash == md5 and self.full and not self.new_model
        changed = self.added if entry is None else self.rechunked if same else self.modified
        changed.append(rel)
        self.cache.add_file(self.ctx.root / output_rel(rel, self.ctx.settings.output_dir))
        self.group.append((prep, st))
        self.group_chunks += len(prep.chunks)
        self._plan(prep)
        if self.group_chunks >= PLAN_CHUNKS:
            self.flush()
        return True

    def _plan(self, prep: PreparedNote) -> None:
        """Count the chunks of ``prep`` that the cache lacks (renames and spare vectors may lower it)."""
        new = {c.text_md5 for c in prep.chunks if c.text_md5 not in self.planned and self.cache.get(c.text_md5) is None}
        self.planned |= new
        self.progress.plan(len(new))

    def embed(self, notes: list[PreparedNote]) -> list[npt.NDArray[np.float32]]:
        missing = self._missing(notes)
        if missing and self.cache_sources:
            for path in self.cache_sources:
                self.cache.add_file(path)
            self.cache_sources = []
            missing = self._missing(notes)
        if missing and self.spare is not None and not self.spare_read:
            self.spare_read = True
            self.cache.add_vectors(read_spare(self.spare.path, self.spare.model_id, self.spare.dim))
            missing = self._missing(notes)
        if missing:
            vectors = embed_in_steps(self.ctx.embedder(), list(missing.values()), self.progress)
            for key, vector in zip(missing, vectors, strict=True):
                self.cache.put(key, vector)
        self.embedded += len(missing)
        self.reused += sum(len(p.chunks) for p in notes) - len(missing)
        out = []
        for prep in notes:
            rows = [self.cache.get(c.text_md5) for c in prep.chunks]
            present = [r for r in rows if r is not None]
            if len(present) != len(rows):
                raise AssertionError("embedding cache lost a vector it was just given")
            out.append(np.stack(present) if present else np.zeros((0, self.ctx.model.dim), dtype=np.float32))
        return out

    def _missing(self, notes: list[PreparedNote]) -> dict[str, str]:
        """text_md5 -> embed_text of the chunks the cache lacks."""
        missing: dict[str, str] = {}
        for prep in notes:
            for chunk in prep.chunks:
                if self.cache.get(chunk.text_md5) is None:
                    missing.setdefault(chunk.text_md5, chunk.embed_text)
        return missing

    def flush(self) -> None:
        """Embed and write the queued notes, ``GROUP_CHUNKS`` chunks at a time."""
        queued, self.group, self.group_chunks, self.planned = self.group, [], 0, set()
        group: list[tuple[PreparedNote, FileStat]] = []
        size = 0
        for item in queued:
            group.append(item)
            size += len(item[0].chunks)
            if size >= GROUP_CHUNKS:
                self._write_group(group)
                group, size = [], 0
        if group:
            self._write_group(group)

    def _write_group(self, queued: list[tuple[PreparedNote, FileStat]]) -> None:
        """Embed and write ``queued``, then save the state file (at most every ``CHECKPOINT_S``)."""
        mark_interrupted(self.ctx.output_dir)
        notes = [prep for prep, _ in queued]
        now = utc_now()
        folders: set[Path] = set()
        for (prep, st), vectors in zip(queued, self.embed(notes), strict=True):
            old = self.state.files.get(prep.rel)
            doc = build_document(prep, vectors, self.ctx.model, self.ctx.params, old.created_at if old else now, now)
            out_rel = output_rel(prep.rel, self.ctx.settings.output_dir)
            blob = encode(doc, compress=self.ctx.settings.compress, cipher=self.cipher)
            try:
                atomic_write(self.ctx.root / out_rel, blob, sync_dir=False)
                folders.add((self.ctx.root / out_rel).parent)
            except OSError as exc:
                self.failed.append(NoteFailure(prep.rel, f"cannot write {out_rel} ({exc.strerror or exc})"))
                for changed in (self.added, self.modified, self.rechunked):
                    if prep.rel in changed:
                        changed.remove(prep.rel)
                continue
            self.state.files[prep.rel] = FileEntry(
                prep.md5,
                now,
                len(prep.chunks),
                out_rel,
                len(prep.data),
                st.mtime_ns,
                old.created_at if old and old.created_at else now,
                len(blob),
                st.ino,
                st.ctime_ns,
            )
            if self.keep_documents:
                self.documents[prep.rel] = doc
            if self.written is not None:
                self.written(prep.rel, doc)
            self.dirty = True
        for folder in folders:
            fsync_dir(folder)
        if time.monotonic() - self.saved_at >= CHECKPOINT_S:
            self.save()

    def save(self) -> None:
        save_state(self.ctx.output_dir / STATE_FILE, self.state)
        self.dirty, self.saved_at, self.saved_during_run = False, time.monotonic(), True


def sync_workspace(
    ctx: SyncContext,
    progress: ProgressFn | None = None,
    full: bool = False,
    keep_documents: bool = False,
    written: WrittenFn | None = None,
    force_paths: frozenset[str] = frozenset(),
    encryption: str | None = None,
    locked: Callable[[], None] | None = None,
    prune: bool = False,
    only: frozenset[str] | None = None,
) -> SyncReport:
    """Bring the output folder in line with the tracked notes of ``ctx.root``.

    ``full`` re-reads and re-chunks every note (embeddings still come from the cache when the text is
    unchanged); ``force_paths`` does that for some notes only (e.g. those whose output failed to decode).
    ``keep_documents`` returns the written documents in the report (to patch an index in memory);
    otherwise none are held, so a cold sync of a big vault stays small. ``written`` is called after each
    document is written, while the sync goes on. ``encryption``: "encrypt" or "decrypt" converts every
    output in place (``botbin encrypt`` / ``decrypt``); an encrypted store's outputs stay encrypted.
    ``locked`` is called once the workspace lock is held, before the scan (to reload what another process
    synced meanwhile), and again at the end when excluded notes were removed (an index loaded in memory
    that drops only ``deleted`` notes then reloads from the new state file; see ``SyncReport.removed``).
    ``only``: sync just these notes (relative POSIX paths; content-hashed as always), with no folder scan: a
    named note that is gone or no longer tracked is removed. A full scan is done instead when the store must
    be checked whole (another model or chunker, a killed sync, a lost state file, an encryption change).
    Indexed notes still on disk that the include/exclude globs no longer match are removed ("excluded")
    unless they are most of the index: then they are kept, with a warning, until a sync with ``prune``.
    Removed notes' vectors are kept in a bounded spare file (sync/spare.py), so a note that comes back is
    not re-embedded.

    Crash safety: every write is atomic, and a journal file marks a sync that writes; when the next sync
    finds it (the last one was killed), it distrusts outputs whose ``source_md5`` disagrees with the state
    file and removes outputs that no entry owns, so it converges to what an uninterrupted sync gives.

    Raises PassphraseError if the store is encrypted (or encryption is on) and the passphrase is missing
    or wrong, WorkspaceError if the workspace cannot be read (nothing is changed then), LockedError if
    another process is syncing, ModelError if the model cannot embed.
    """
    started = time.perf_counter()
    check_root(ctx.root)
    target = outside_target(ctx.root, ctx.settings.output_dir)
    if target is not None and not ctx.settings.follow_symlinks:
        raise WorkspaceError(
            f"output_dir is a link to {target}, outside the workspace; nothing was written "
            "(set follow_symlinks = true to write there)",
            ctx.output_dir,
        )
    with workspace_lock(ctx.output_dir, ctx.settings.lock_timeout_s):
        if locked is not None:
            locked()
        state, warnings = load_state(ctx.output_dir / STATE_FILE, ctx.settings.output_dir)
        interrupted = was_interrupted(ctx.output_dir)
        if only is not None and (
            full
            or warnings
            or interrupted
            or encryption
            or needs_full_check(state, ctx.model.name, ctx.params.as_dict())
        ):
            only = None  # the whole store needs a look
        # Scanned under the lock: a scan taken before waiting would undo what the lock's holder synced.
        scan = scan_workspace(ctx.root, ctx.settings) if only is None else scan_notes(ctx.root, ctx.settings, only)
        if only is None:  # a walk of the whole store; a killed writer marks the store interrupted: no ``only``
            remove_stale_temps(ctx.output_dir)
        if interrupted:  # outputs may be newer than the state file says: trust none that disagrees
            distrust_mismatched_outputs(ctx.root, state)
        keys = writer_keys(ctx.output_dir, ctx.settings, ctx.passphrase, encryption)
        force = full or needs_full_check(state, ctx.model.name, ctx.params.as_dict())
        run = _Run(ctx, state, keep_documents, written, keys, progress)
        run.full = full
        run.dirty = force or interrupted or not (ctx.output_dir / STATE_FILE).is_file()
        if state.encrypted != (run.cipher is not None) or (keys is not None and run.cipher is None):
            mark_interrupted(ctx.output_dir)
            run.warnings.extend(convert_outputs(ctx.root, state, keys, ctx.settings.compress))
            run.dirty = True
        state.model, state.chunker = ctx.model.name, ctx.params.as_dict()
        run.warnings.extend([*scan.warnings, *warnings])
        if only is None and (hint := untracked_notes_hint(ctx.root, ctx.settings, scan)) is not None:
            run.warnings.append(hint)
        indexed = len(state.files)
        changed, unchanged = candidates(scan, state, ctx.root, force, force_paths)
        named = state.files.keys() if only is None else only & state.files.keys()
        run.cache_sources = [ctx.root / state.files[rel].output for rel in named if rel not in scan.files]
        vanished: set[str] = set()
        for rel in changed:
            if not run.handle(rel, scan.files[rel], force or rel in force_paths):
                vanished.add(rel)
        run.flush()
        run.progress.finish()
        gone = sorted(rel for rel in named if (rel not in scan.files or rel in vanished) and not scan.covers(rel))
        removal = plan_removal(ctx.root, ctx.settings, gone, indexed, prune)
        run.warnings.extend(removal.warnings)
        gone = [*removal.deleted, *removal.excluded]
        old_hashes = {rel: state.files[rel].hash for rel in gone}
        if gone:
            mark_interrupted(ctx.output_dir)
        remove_outputs(ctx.root, ctx.output_dir, state, gone, run.spare, run.warnings)
        if warnings or interrupted:  # outputs written by a killed run, or after a lost state file: no entry owns them
            sweep_orphans(ctx.root, ctx.settings.output_dir, state, scan.covers, run.spare, run.warnings)
        if run.spare is None:
            (ctx.output_dir / SPARE_FILE).unlink(missing_ok=True)  # an encrypted store keeps no plain vectors
        renamed = renames(gone, run.added, old_hashes, state)
        if run.dirty or gone or run.saved_during_run:
            # last_sync is the last sync that changed the index; a no-op sync writes nothing.
            state.last_sync = utc_now()
            run.save()
        finish_decryption(ctx.output_dir, keys)
        mark_complete(ctx.output_dir)
    # A re-chunked note is also counted unchanged: its bytes are what they were.
    unchanged += len(changed) - len(run.added) - len(run.modified) - len(run.failed) - len(vanished)
    return SyncReport(
        added=tuple(run.added),
        modified=tuple(run.modified),
        deleted=removal.deleted,
        excluded=removal.excluded,
        kept_excluded=removal.kept,
        rechunked=tuple(run.rechunked),
        renamed=tuple(renamed),
        unchanged=unchanged,
        failed=tuple(run.failed),
        warnings=tuple(run.warnings),
        chunks_embedded=run.embedded,
        chunks_reused=run.reused,
        elapsed_ms=(time.perf_counter() - started) * 1000,
        synced_at=state.last_sync,
        documents=run.documents,
    )
