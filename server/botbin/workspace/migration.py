"""Model migration, the Bot-BIN paper's "incremental re-indexing when better models become available": when the
``model`` setting names another model than the index was built with, the new model's tree of AIF-BIN files is
built beside the live one (sync/model_trees.py) by the sync engine itself, while the live index keeps answering;
a kill leaves what was written, and the next run goes on from there. Once that tree holds every note, the live
tree is switched to it (sync/tree_switch.py) and this process's index and models follow in one step under the
index lock. The previous model's files stay in its own tree, so switching back embeds only what changed since.

A long-lived process (a server, ``botbin watch``) migrates in the background after its syncs (``background``);
``botbin sync`` migrates in the foreground, at full speed (``run``).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from botbin.embedding import AutoEmbedder, Embedder, ModelSpec, spec_for_id
from botbin.embedding.paced import PacedEmbedder
from botbin.errors import BotbinError, LockedError, ModelError
from botbin.sync import tree_switch
from botbin.sync.documents import utc_now
from botbin.sync.encryption import MARKER_FILE
from botbin.sync.engine import SyncContext, sync_workspace
from botbin.sync.lock import workspace_lock
from botbin.sync.model_trees import MigrationRecord, drop_record, models_rel, read_record, tree_rel, write_record
from botbin.sync.progress import ProgressFn
from botbin.sync.state import STATE_FILE, SyncState, load_state, remember_state, save_state
from botbin.workspace.migration_status import MigrationStatus, migration_status
from botbin.workspace.models import built_with, counter_of

if TYPE_CHECKING:
    from botbin.aifbin import AifBinDocument
    from botbin.config import Settings
    from botbin.sync.encryption import PassphraseFn
    from botbin.sync.report import SyncReport
    from botbin.workspace.handle import IndexHandle
    from botbin.workspace.models import Models
    from botbin.workspace.syncing import Syncer

log = logging.getLogger(__name__)

BACKGROUND_DUTY = 0.5
"""Share of the time a background migration spends embedding (it sleeps the rest), so that searches of the index
in use keep their pace (bench/bench_migration.py)."""
EXPORT_WAIT_S = 900.0
"""Longest wait for the new model's one-time ONNX export (a child process) before a migration embeds with torch."""
SWITCH_TRIES = 6
"""Times a migration asks for the workspace lock to switch (each waits up to ``lock_timeout_s``) before it stops."""
RECORD_EVERY_S = 1.0
"""Least seconds between two writes of the progress record."""


class WorkspaceParts(Protocol):
    """What a migration uses of its workspace (``botbin.workspace.Workspace``, which makes the migration: a protocol
    here, so that this module does not import the package that imports it)."""

    @property
    def root(self) -> Path: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def passphrase(self) -> PassphraseFn: ...
    @property
    def models(self) -> Models: ...
    @property
    def index(self) -> IndexHandle: ...
    @property
    def syncer(self) -> Syncer: ...
    @property
    def output_dir(self) -> Path: ...
    @property
    def state_path(self) -> Path: ...
    def state(self) -> tuple[SyncState, list[str]]: ...


@dataclass(frozen=True)
class MigrationReport:
    """What one migration run did."""

    from_model: str
    to_model: str
    switched: bool
    """True when the live index is now the new model's."""
    notes: int = 0
    """Notes in the new model's index."""
    chunks_embedded: int = 0
    """Chunks embedded by this run (0 when switching back to a model whose tree was kept)."""
    chunks_reused: int = 0
    """Chunks whose vector came from the new model's tree or cache."""
    elapsed_ms: float = 0.0
    message: str = ""
    """Why it did not switch, else empty."""
    warnings: tuple[str, ...] = ()
    publish: SyncReport | None = None
    """What the publish after the switch did (workspace/syncing.py ``Syncer.publish``: backend "postgres"), None
    when it did not switch."""

    def to_dict(self) -> dict[str, object]:
        return {
            "fromModel": self.from_model,
            "toModel": self.to_model,
            "switched": self.switched,
            "notes": self.notes,
            "chunksEmbedded": self.chunks_embedded,
            "chunksReused": self.chunks_reused,
            "elapsedMs": round(self.elapsed_ms, 1),
            "message": self.message,
            "warnings": list(self.warnings),
        }


class Migration:
    """The migration of one workspace's index to the model its settings name."""

    def __init__(self, ws: WorkspaceParts) -> None:
        self.ws = ws
        self.background = False
        """True in a long-lived process: ``after_sync`` then starts a due migration on a daemon thread."""
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self.last: MigrationReport | None = None
        """The last run's report in this process."""

    @property
    def models_dir(self) -> Path:
        return self.ws.root / models_rel(self.ws.settings.output_dir)

    def due(self) -> ModelSpec | None:
        """The model to migrate to, None when the index is already built with the setting's model (or is empty).
        Raises ModelError when the setting names no model folder."""
        return self.ws.models.migrating_to

    def after_sync(self) -> None:
        """A sync ended: in a long-lived process, start a due migration in the background."""
        if self.background:
            self.start_background()

    def serve(self) -> None:
        """This is a long-lived process (a server, ``botbin watch``): start a due migration in the background now,
        and again after each sync while one is due."""
        self.background = True
        self.start_background()

    def start_background(self) -> bool:
        """Start the due migration on a daemon thread, paced (``BACKGROUND_DUTY``); False when none is due, one
        runs already, or the setting is wrong (``status`` says why)."""
        with self._guard:
            if self._thread is not None and self._thread.is_alive():
                return False
            try:
                if self.due() is None:
                    return False
            except ModelError:
                return False
            self._thread = threading.Thread(target=self._background, name="botbin-migrate", daemon=True)
            self._thread.start()
            return True

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the background migration ends (at most ``timeout_s``); True when none runs any more."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
        return thread is None or not thread.is_alive()

    def _background(self) -> None:
        try:
            self.run(paced=True)
        except BotbinError as exc:
            log.warning("%s: model migration stopped: %s", self.ws.root, exc)
        except Exception:  # a bug must not pass silently, nor kill the process
            log.exception("%s: model migration failed", self.ws.root)

    def status(self) -> MigrationStatus | None:
        """The due migration's phase and progress, None when none is due."""
        try:
            target = self.due()
        except ModelError as exc:
            keeps = f"the index built with {self.ws.models.built_with} keeps answering"
            return MigrationStatus(
                "refused", self.ws.settings.model or "", self.ws.models.built_with, message=f"{exc}; {keeps}"
            )
        if target is None:
            return None
        running = self._thread is not None and self._thread.is_alive()
        total = len(self.ws.state()[0].files)
        return migration_status(self.models_dir, target.model_id, self.ws.models.built_with, total, running)

    # -- one run -----------------------------------------------------------------------------------------------
    def run(self, progress: ProgressFn | None = None, paced: bool = False) -> MigrationReport | None:
        """Migrate now: build (or finish building) the new model's tree, then switch and publish (the team database
        gets the new model's vectors). None when no migration is due. ``paced``: leave the machine to searches half
        the time (a background run). Raises ModelError (a wrong setting: the current index keeps answering),
        LockedError (another process migrates, or holds the workspace lock too long), PassphraseError, StorageError."""
        target = self.due()
        if target is None:
            return None
        self._refuse(target)
        with workspace_lock(self.models_dir, 0.0):  # one migration at a time, whatever the process
            report = _Run(self, target, paced).go(progress)
        if report.switched:
            report = replace(report, publish=self.ws.syncer.publish())
        self.last = report
        return report

    def _refuse(self, target: ModelSpec) -> None:
        """Raise ModelError for a model this workspace cannot move to."""
        if self.ws.settings.backend != "postgres":
            return
        from botbin.index.postgres.schema import DIM

        dim = self.ws.models.meta_of(target).dim
        if dim != DIM:
            raise ModelError(f"the team database holds {DIM}-dimension vectors and this model gives {dim}", target.path)

    def recover(self) -> None:
        """Finish a switch a kill interrupted (the caller holds the workspace lock): the next sync's first step."""
        trees = tree_switch.pending(self.ws.root, self.ws.settings.output_dir)
        if trees is None:
            return
        state, warnings = tree_switch.recover(trees)
        for warning in warnings:
            log.warning("%s", warning)
        if state is not None:
            self.commit(trees, state)
            log.info("%s: finished the interrupted switch to %s", self.ws.root, trees.to_model)

    def commit(self, trees: tree_switch.Trees, state: SyncState) -> list[str]:
        """Write the live state file naming the new model (the switch, for every reader), with this process's
        index and models following at once (``IndexHandle.adopt``), then finish the switch. Returns warnings."""
        ws = self.ws
        path = ws.state_path

        def write() -> None:
            save_state(path, state)
            remember_state(path, state)
            ws.models.follow(state.model)

        try:
            meta = ws.models.meta_of(spec_for_id(state.model))
            warnings = ws.index.adopt(state, meta.dim, meta.name, write)
        except ModelError as exc:  # the new model's folder went away meanwhile: the next search says so
            with ws.index.lock:
                write()
                ws.index.forget()
            warnings = [str(exc)]
        tree_switch.finish(trees)
        return warnings


class _Run:
    """One migration run: the new tree's syncs, the progress record, the switch."""

    def __init__(self, migration: Migration, target: ModelSpec, paced: bool) -> None:
        self.m, self.ws, self.target, self.paced = migration, migration.ws, target, paced
        self.from_model = self.ws.models.built_with
        self.rel = tree_rel(self.ws.settings.output_dir, target.model_id)
        self.started = time.perf_counter()
        self.embedded = self.reused = 0
        earlier = read_record(migration.models_dir)
        began = earlier.started_at if earlier is not None and earlier.to_model == target.model_id else utc_now()
        self.record = MigrationRecord(target.model_id, self.from_model, "embedding", started_at=began, pid=os.getpid())
        self._recorded_at = 0.0
        self.warnings: list[str] = []

    def go(self, progress: ProgressFn | None) -> MigrationReport:
        ctx = self._context()
        live, _ = self.ws.state()
        done = len(load_state(self.ws.root / self.rel / STATE_FILE, self.rel)[0].files)
        self._note(phase="embedding", notes_total=len(live.files), notes_done=done, message="")
        try:
            self._sync_tree(ctx, progress)
            for attempt in range(SWITCH_TRIES):
                try:
                    return self._switch(ctx)
                except LockedError:
                    if attempt == SWITCH_TRIES - 1:
                        raise
                    self._note(message="waiting for the workspace lock to switch")
        except BotbinError as exc:
            self._note(phase="failed", message=str(exc), force=True)
            raise
        raise AssertionError("unreachable")

    def _context(self) -> SyncContext:
        """A sync of the new model's tree: the workspace's notes, that tree as output folder (the live one left
        out of the scan), no encryption of its own (the live store's marker is mirrored, ``_mirror_marker``)."""
        s = self.ws.settings
        settings = s.model_copy(
            update={"output_dir": self.rel, "exclude": (*s.exclude, f"{s.output_dir.strip('/')}/"), "encryption": False}
        )
        meta = self.ws.models.meta_of(self.target)
        embedder = self._embedder()
        return SyncContext(
            self.ws.root, settings, meta, lambda: counter_of(self.target.path), lambda: embedder, self.ws.passphrase
        )

    def _embedder(self) -> Embedder:
        """The new model's embedder for this run: in the background, ONNX Runtime on half the cores and paced."""
        threads = max(1, (os.cpu_count() or 2) // 2) if self.paced else 0
        auto = AutoEmbedder(self.target, self.ws.settings.batch_size, threads=threads)
        auto.export_first(EXPORT_WAIT_S)
        return PacedEmbedder(auto, BACKGROUND_DUTY if self.paced else 1.0)

    def _sync_tree(self, ctx: SyncContext, progress: ProgressFn | None) -> None:
        """Bring the new model's tree up to date with the notes (a resumed run embeds only what is missing)."""
        decrypt = self._mirror_marker()
        report = sync_workspace(
            ctx, self._progress(progress), written=self._written, encryption="decrypt" if decrypt else None
        )
        self.embedded += report.chunks_embedded
        self.reused += report.chunks_reused
        self.warnings.extend(f"{f.path}: {f.reason}" for f in report.failed)

    def _mirror_marker(self) -> bool:
        """The new tree encrypted as the live store is: its encryption marker copied (same key); True when the
        live store has none and the tree still has one (its outputs are then decrypted by its sync)."""
        live, tree = self.ws.output_dir / MARKER_FILE, self.ws.root / self.rel / MARKER_FILE
        if live.is_file():
            from botbin.sync.atomic import atomic_write

            data = live.read_bytes()
            if not tree.is_file() or tree.read_bytes() != data:
                atomic_write(tree, data)
            return False
        return tree.is_file()

    def _switch(self, ctx: SyncContext) -> MigrationReport:
        """Under this process's sync lock and the workspace lock: a last sync of the new tree, then the switch
        when it holds every note still tracked; a report saying why not otherwise."""
        ws = self.ws
        with ws.syncer.lock, workspace_lock(ws.output_dir, ws.settings.lock_timeout_s):
            self.m.recover()
            ws.models.follow(built_with(ws.output_dir, ws.settings))
            if ws.models.built_with != self.from_model:  # another process switched meanwhile
                return self._report(ws.models.built_with == self.target.model_id, "switched by another process")
            self._sync_tree(ctx, None)
            live, _ = ws.state()
            new, problems = load_state(ws.root / self.rel / STATE_FILE, self.rel)
            missing = tree_switch.missing_notes(ws.root, live, new)
            if problems or missing:
                why = "; ".join(problems) or (
                    f"{len(missing)} indexed notes are not in the new model's index (first: {missing[0]}): "
                    "a note it could not index (see `botbin sync`), or one no longer tracked that the index keeps "
                    "(`botbin sync --prune` drops those); the switch waits, the current index answers"
                )
                self._note(phase="failed", message=why, force=True)
                return self._report(False, why)
            self._note(phase="switching", notes_done=len(new.files), force=True)
            trees = tree_switch.Trees(ws.root, ws.settings.output_dir, self.from_model, self.target.model_id)
            self.warnings.extend(tree_switch.keep_live(trees, live))
            tree_switch.begin(trees)
            state, warnings = tree_switch.put_new(trees, live, new)
            self.warnings.extend(warnings)
            self.warnings.extend(self.m.commit(trees, state))
            drop_record(self.m.models_dir)
            log.info("%s: index switched from %s to %s", ws.root, self.from_model, self.target.model_id)
            return self._report(True, "", len(state.files))

    def _report(self, switched: bool, message: str, notes: int = 0) -> MigrationReport:
        return MigrationReport(
            self.from_model,
            self.target.model_id,
            switched,
            notes,
            self.embedded,
            self.reused,
            (time.perf_counter() - self.started) * 1000,
            message,
            tuple(self.warnings),
        )

    # -- progress ----------------------------------------------------------------------------------------------
    def _progress(self, outer: ProgressFn | None) -> ProgressFn:
        def report(done: int, total: int) -> None:
            self._note(chunks_embedded=self.embedded + done, chunks_to_embed=self.embedded + total)
            if outer is not None:
                outer(done, total)

        return report

    def _written(self, rel: str, doc: AifBinDocument) -> None:
        self._note(notes_done=min(self.record.notes_done + 1, max(self.record.notes_total, 1)))

    def _note(self, force: bool = False, **changes: object) -> None:
        """Update the progress record, and write it at most every RECORD_EVERY_S (``force``: now)."""
        self.record = replace(self.record, **changes, updated_at=utc_now())  # type: ignore[arg-type]
        now = time.monotonic()
        if force or now - self._recorded_at >= RECORD_EVERY_S:
            self._recorded_at = now
            try:
                write_record(self.m.models_dir, self.record)
            except OSError as exc:  # only a report: the trees say what is done
                log.info("cannot write the migration record: %s", exc)
