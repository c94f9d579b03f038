"""One sync run's working state: check each candidate note, embed what changed (from the cache first), write its
AIF-BIN file and keep the state file's entries (what ``engine.sync_workspace`` drives)."""

from __future__ import annotations

import errno
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from botbin.aifbin import AifBinDocument, encode
from botbin.chunking import Chunk, ChunkerParams, TokenCounter
from botbin.config import Settings
from botbin.embedding import Embedder
from botbin.errors import BotbinError
from botbin.sync.atomic import atomic_write, fsync_dir, remove_empty_dirs
from botbin.sync.cache import EmbeddingCache
from botbin.sync.candidates import OutputCheck, output_change, output_problem
from botbin.sync.confine import Confined, remove_output
from botbin.sync.documents import ModelMeta, PreparedNote, build_document, output_rel, prepare_note, utc_now
from botbin.sync.encryption import PassphraseFn, StoreKeys
from botbin.sync.output_paths import output_moved, unescaped_output_rel
from botbin.sync.progress import ChunkProgress, ProgressFn, embed_in_steps
from botbin.sync.removal import SpareTarget
from botbin.sync.report import NoteFailure
from botbin.sync.scan import FileStat, read_note
from botbin.sync.spare import SPARE_FILE, read_spare
from botbin.sync.state import STATE_FILE, FileEntry, SyncState, mark_interrupted, save_state

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


class SyncRun:
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
        self.cache = EmbeddingCache(
            ctx.model.name, keys.keyring if keys is not None else None, ctx.output_dir, ctx.model.dim
        )
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
        self.only: frozenset[str] | None = None
        """A note-level sync's notes (no other state entry can change): saves append them to the journal."""
        self.new_model = bool(state.files) and state.model != ctx.model.name
        """The outputs were embedded with another model: every note is re-embedded ("modified")."""
        self.expect = OutputCheck(Confined(ctx.output_dir), ctx.model.name, ctx.model.dim, self.cache.keyring)
        """What an output read back must be: in the output folder, this model's."""

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
            and not output_moved(rel, entry.output)
            and self._output_kept(rel, entry)
        ):
            entry.restat(len(data), st.mtime_ns, st.ino, st.ctime_ns)
            self.dirty = True
            return True
        try:
            prep = prepare_note(
                rel, data, self.ctx.counter(), self.ctx.params, md5, self.ctx.settings.instruction_globs
            )
        except BotbinError as exc:
            self.failed.append(NoteFailure(rel, exc.reason))
            return True
        self.warnings.extend(prep.warnings)
        # Same bytes under ``full`` (or an output moving to its escaped path): re-chunked (vectors reused), unless
        # another model re-embeds every chunk.
        moved = entry is not None and output_moved(rel, entry.output)
        same = entry is not None and entry.hash == md5 and (self.full or moved) and not self.new_model
        changed = self.added if entry is None else self.rechunked if same else self.modified
        changed.append(rel)
        self.cache.add_file(self.ctx.root / output_rel(rel, self.ctx.settings.output_dir))
        if moved:  # its vectors are at the old path
            self.cache.add_file(self.ctx.root / unescaped_output_rel(rel, self.ctx.settings.output_dir))
        self.group.append((prep, st))
        self.group_chunks += len(prep.chunks)
        self._plan(prep)
        if self.group_chunks >= PLAN_CHUNKS:
            self.flush()
        return True

    def _output_kept(self, rel: str, entry: FileEntry) -> bool:
        """True if note ``rel``'s output is still the one written for ``entry``: by a stat, or, when the file was
        touched or rewritten since (even at the same size), by decoding it in full. A damaged one is named in a
        warning; False then, and the note is written again."""
        path = self.ctx.root / entry.output
        change = output_change(path, entry)
        if change != "changed":
            return change is None
        problem = output_problem(path, rel, entry, self.expect)
        if problem is None:
            entry.output_ctime_ns = os.lstat(path).st_ctime_ns  # what the next sync's stat compares with
            return True
        self.warnings.append(f"{problem}; its output is written again from the note")
        return False

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
            chunks = list(missing.values())
            texts, sizes = [c.embed_text for c in chunks], [c.tokens for c in chunks]
            vectors = embed_in_steps(self.ctx.embedder(), texts, self.progress, sizes)
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

    def _missing(self, notes: list[PreparedNote]) -> dict[str, Chunk]:
        """text_md5 -> the first chunk of that text that the cache lacks."""
        missing: dict[str, Chunk] = {}
        for prep in notes:
            for chunk in prep.chunks:
                if self.cache.get(chunk.text_md5) is None:
                    missing.setdefault(chunk.text_md5, chunk)
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
                target = self._target(out_rel)
                atomic_write(target, blob, sync_dir=False)
                written_ctime = os.lstat(target).st_ctime_ns
                folders.add(target.parent)
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
                written_ctime,
            )
            if old is not None and output_moved(prep.rel, old.output):
                self._drop_unescaped(prep.rel)
            if self.keep_documents:
                self.documents[prep.rel] = doc
            if self.written is not None:
                self.written(prep.rel, doc)
            self.dirty = True
        for folder in folders:
            fsync_dir(folder)
        if time.monotonic() - self.saved_at >= CHECKPOINT_S:
            self.save()

    def _target(self, out_rel: str) -> Path:
        """Where output ``out_rel`` is written: under the real output folder, never through a folder link that
        leads out of it (a link at the file itself is replaced). Raises OSError (EXDEV) for such a link."""
        real = self.expect.guard.real_path(self.ctx.root / out_rel, follow=False)
        if real is None:
            raise OSError(errno.EXDEV, "a symbolic link leads out of the output folder; not followed")
        return Path(real)

    def _drop_unescaped(self, rel: str) -> None:
        """Remove note ``rel``'s output at the path it had before its folder was escaped (``documents.mirrored``):
        the path comes from the note's own, never from the state file, and its folder, once empty, would be the
        very name a sibling note's output needs."""
        old = self.ctx.root / unescaped_output_rel(rel, self.ctx.settings.output_dir)
        if (problem := remove_output(self.expect.guard, old)) is not None:  # only what botbin wrote, inside
            self.warnings.append(problem)
            return
        remove_empty_dirs(old.parent, self.ctx.output_dir)

    def save(self) -> None:
        save_state(self.ctx.output_dir / STATE_FILE, self.state, self.only)
        self.dirty, self.saved_at, self.saved_during_run = False, time.monotonic(), True
