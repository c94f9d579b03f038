"""The sync engine: scan, detect changes (size+mtime+inode+ctime fast path, then MD5), embed what changed, write.

Every note is handled on its own: a failing note is reported with its path and reason and keeps its
previous output, while every other note syncs. Nothing under the workspace but the output folder is
ever written.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from botbin.errors import WorkspaceError
from botbin.sync.atomic import remove_stale_temps
from botbin.sync.candidates import candidates, needs_full_check, renames
from botbin.sync.candidates import output_intact as output_intact  # re-exported
from botbin.sync.documents import utc_now
from botbin.sync.encryption import convert_outputs, finish_decryption, writer_keys
from botbin.sync.lock import workspace_lock
from botbin.sync.model_trees import MODELS_DIR
from botbin.sync.names import BAD_NAME_REASON
from botbin.sync.progress import ProgressFn as ProgressFn  # re-exported
from botbin.sync.removal import plan_removal, remove_outputs, sweep_orphans
from botbin.sync.report import NoteFailure as NoteFailure  # re-exported: callers import them from here
from botbin.sync.report import SyncReport as SyncReport
from botbin.sync.run import SyncContext as SyncContext  # re-exported
from botbin.sync.run import SyncRun, WrittenFn
from botbin.sync.scan import check_root, outside_target, scan_notes, scan_workspace, untracked_notes_hint
from botbin.sync.spare import SPARE_FILE
from botbin.sync.state import (
    STATE_FILE,
    distrust_mismatched_outputs,
    load_state,
    mark_complete,
    mark_interrupted,
    remember_state,
    was_interrupted,
)

log = logging.getLogger(__name__)


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
        state, warnings = load_state(ctx.output_dir / STATE_FILE, ctx.settings.output_dir, reuse=True)
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
            remove_stale_temps(ctx.output_dir, keep_dirs=(MODELS_DIR,))  # a migration's trees are its own
        if interrupted:  # outputs may be newer than the state file says: trust none that disagrees
            distrust_mismatched_outputs(ctx.root, ctx.output_dir, state)
        keys = writer_keys(ctx.output_dir, ctx.settings, ctx.passphrase, encryption)
        force = full or needs_full_check(state, ctx.model.name, ctx.params.as_dict())
        run = SyncRun(ctx, state, keep_documents, written, keys, progress)
        run.full, run.only = full, only
        run.dirty = force or interrupted or not (ctx.output_dir / STATE_FILE).is_file()
        if state.encrypted != (run.cipher is not None) or (keys is not None and run.cipher is None):
            mark_interrupted(ctx.output_dir)
            run.warnings.extend(convert_outputs(ctx.root, ctx.output_dir, state, keys, ctx.settings.compress))
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
        remember_state(ctx.output_dir / STATE_FILE, state)  # saved, or as read: the next sync skips the parse
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
        failed=(*run.failed, *(NoteFailure(name, BAD_NAME_REASON) for name in scan.bad_names)),
        warnings=tuple(run.warnings),
        chunks_embedded=run.embedded,
        chunks_reused=run.reused,
        elapsed_ms=(time.perf_counter() - started) * 1000,
        synced_at=state.last_sync,
        documents=run.documents,
    )
