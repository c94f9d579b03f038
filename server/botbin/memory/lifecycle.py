"""The lifecycle of one workspace's memos: seeding from the index, reinforcement, decay ranking, prune,
restore and consolidate. The composition root (``botbin.service``) makes one per workspace.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from botbin.config import path_glob as compile_glob
from botbin.memory.memos import MEMO_FILE, Memo, MemoPlace, MemoSeed, MemoStore, memo_id
from botbin.memory.retention import DecayPolicy, age_days, decay_score, ranked

if TYPE_CHECKING:
    from botbin.index.hits import ChunkRef, Hit
    from botbin.index.store import MemoryIndex
    from botbin.memory.consolidate import Candidate
    from botbin.memory.roots import ConsolidateReport
    from botbin.workspace import Workspace

log = logging.getLogger(__name__)
_MEMO_ID_SALT = b"botbin-memo-ids!"
#: Notes a person curates as durable memory (Bot-BIN's MEMORY.md): their chunks are not memos, so they never
#: decay or get archived, though they are not rules either.
CURATED_NOTES = frozenset({"memory.md"})

_MAX_PATCHED_NOTES = 256
"""Past this many notes changed since the last ``ensure``, it reconciles every memo in one pass instead."""


@dataclass(frozen=True)
class PruneReport:
    archived: tuple[Memo, ...]
    """Memos archived now (or, in a dry run, that would be)."""
    threshold: float
    live: int
    """Memos left searchable."""
    archive_note: str
    dry_run: bool


@dataclass(frozen=True)
class RestoreReport:
    restored: tuple[Memo, ...]
    unknown: tuple[str, ...]
    """Requested ids that match no archived memo."""


def _now() -> datetime:
    return datetime.now().astimezone()


def _created(ref: ChunkRef, now: datetime) -> datetime:
    """A memo's birth: when botbin first stored its note (first sync), else the note's date, else now. Not the
    note's date first: a vault's old notes would start faded on the day they are first synced."""
    for raw in (ref.created_at, ref.date):
        if raw:
            try:
                when = datetime.fromisoformat(raw)
            except ValueError:
                continue
            return when if when.tzinfo else when.astimezone()
    return now


def _place_order(m: MemoPlace) -> tuple[str, int, str]:
    """By path, then line (an edited chunk inherits from the nearest vanished memo, the first on a tie)."""
    return (m.path, m.start_line, m.id)


class Lifecycle:
    """Memo state of workspace ``ws`` (sidecar ``memos.sqlite`` in its output folder)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._store: MemoStore | None = None
        self._lock = threading.RLock()
        self._seen: tuple[int, int, str | None] | None = None
        self._mark: tuple[int, int, int] | None = None
        """(id, version, layout) of the index at the last ``ensure``: what a save-sized update starts from."""
        self._refs: dict[str, ChunkRef] = {}
        self._by_path: dict[str, list[str]] = {}
        self._key: bytes | None = None
        self._warned = False
        self._pending: list[tuple[list[str], datetime]] = []
        self._writer: threading.Thread | None = None
        self._pending_lock = threading.Lock()

    @property
    def policy(self) -> DecayPolicy:
        s = self.ws.settings
        return DecayPolicy(s.decay_half_life_days, s.reinforcement_stretch, s.decay_weight)

    @property
    def store(self) -> MemoStore:
        with self._lock:
            if self._store is None:
                self._store = MemoStore(self.ws.output_dir / MEMO_FILE)
            return self._store

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    # -- seeding --------------------------------------------------------------------------------
    def _is_memo(self, ref: ChunkRef) -> bool:
        """Episodic chunks only: instruction notes, the roots note and curated MEMORY.md never fade or prune."""
        curated = ref.path.rsplit("/", 1)[-1].lower() in CURATED_NOTES
        return not ref.instruction and not curated and ref.path != self.ws.settings.roots_note

    def ensure(self, index: MemoryIndex | None = None, now: datetime | None = None) -> dict[str, ChunkRef]:
        """Memos for every indexed chunk outside instruction notes (new ones created, moved ones updated,
        vanished ones dropped unless archived, an edited chunk inheriting its predecessor's counts), and
        archived ones hidden from search. Cheap when the index has not changed since the last call.
        Returns the live memos' chunks by memo id."""
        if index is None:
            index, _ = self.ws.index.get()
        stamp = (id(index), index.version, self.ws.index.indexed_at)  # version: an edit may keep len(index)
        with self._lock:
            if stamp == self._seen:
                return self._refs
            if not self.ws.output_dir.is_dir():
                return {}
            keys = self.ws.keys()
            self._key = keys.keyring.file_key(keys.marker.kdf, _MEMO_ID_SALT, "memo ids") if keys else None
            if self._ensure_changed(index, now or _now()):
                self._seen = stamp
                return self._refs
            refs = {memo_id(r.path, r.text_md5, self._key): r for r in index.chunk_refs() if self._is_memo(r)}
            self._reconcile(refs, now or _now())
            archived = self.store.archived_ids()
            index.set_hidden(frozenset((r.path, r.text_md5) for i, r in refs.items() if i in archived))
            self._refs = {i: r for i, r in refs.items() if i not in archived}
            self._by_path = {}
            for i, r in self._refs.items():
                self._by_path.setdefault(r.path, []).append(i)
            self._seen = stamp
            self._mark = (id(index), index.version, index.layout)
            return self._refs

    def _ensure_changed(self, index: MemoryIndex, now: datetime) -> bool:
        """``ensure`` for the notes changed since the last one only (a save: O(those notes)); False when it
        cannot tell (another index, too many changes, rows renumbered by a full assembly): ensure in full."""
        mark, self._mark = self._mark, None
        paths = None if mark is None or mark[0] != id(index) or self._seen is None else index.changed_since(mark[1])
        if mark is None or paths is None or len(paths) > _MAX_PATCHED_NOTES:
            return False
        chunks = index.chunk_refs(paths)
        if index.layout != mark[2]:
            return False
        refs = {memo_id(r.path, r.text_md5, self._key): r for r in chunks if self._is_memo(r)}
        self._reconcile(refs, now, paths)
        archived = self.store.archived_ids()
        kept = {h for h in index.hidden if h[0] not in paths}
        index.set_hidden(frozenset(kept | {(r.path, r.text_md5) for i, r in refs.items() if i in archived}))
        for path in paths:
            for i in self._by_path.pop(path, []):
                self._refs.pop(i, None)
        for i, r in refs.items():
            if i not in archived:
                self._refs[i] = r
                self._by_path.setdefault(r.path, []).append(i)
        self._mark = (id(index), index.version, index.layout)
        return True

    def _best_effort(self, exc: Exception) -> None:
        """Report once that the memo store cannot be used; search goes on without it."""
        if not self._warned:
            self._warned = True
            log.warning(
                "memo store %s unavailable (%s); searching without decay and reinforcement",
                self.ws.output_dir / MEMO_FILE,
                exc,
            )

    def hide_archived(self, index: MemoryIndex) -> None:
        """``ensure`` for a search: archived memos hidden; never raises (a read-only store is logged once)."""
        try:
            self.ensure(index)
        except Exception as exc:  # search must not fail for the sidecar's sake
            self._best_effort(exc)

    def _reconcile(self, refs: dict[str, ChunkRef], now: datetime, paths: set[str] | None = None) -> None:
        """Memos of ``refs``: every chunk of the workspace, or of the notes ``paths`` only."""
        known = {m.id: m for m in self.store.places(paths)}
        fresh = {i: r for i, r in refs.items() if i not in known}
        moved = [
            i
            for i, r in refs.items()
            if i in known
            and (known[i].start_line, known[i].end_line, known[i].path) != (r.start_line, r.end_line, r.path)
        ]
        gone = sorted((m for i, m in known.items() if i not in refs and not m.archived), key=_place_order)
        seeds = [
            MemoSeed(i, r.path, r.start_line, r.end_line, _created(r, now), () if self._key else r.tags)
            for i, r in refs.items()
            if i in fresh or i in moved
        ]
        if seeds:
            self.store.seed(seeds)
        pairs = []
        by_path: dict[str, list[MemoPlace]] = {}
        for m in gone:
            by_path.setdefault(m.path, []).append(m)
        for i, r in fresh.items():  # an edited chunk: the vanished memo of the same note nearest its lines
            olds = by_path.get(r.path)
            if olds:
                old = min(olds, key=lambda m: abs(m.start_line - r.start_line))
                olds.remove(old)
                pairs.append((old.id, i))
        if pairs:
            self.store.inherit(pairs)
        if gone:
            self.store.remove(m.id for m in gone)

    # -- retrieval ------------------------------------------------------------------------------
    def _ids_of_hits(self, hits: Iterable[Hit]) -> list[str]:
        return [memo_id(h.path, h.text_md5, self._key) for h in hits if h.text_md5 and not h.instruction]

    def rank(self, hits: list[Hit], now: datetime | None = None) -> list[Hit]:
        """``hits`` re-scored by decay (``score * (1 - w + w * decay)``) and re-sorted; unchanged when the
        weight is 0 or no memo store exists yet."""
        weight = self.policy.weight
        if weight <= 0 or not hits or not (self.ws.output_dir / MEMO_FILE).exists():
            return hits
        now = now or _now()
        try:
            with self._lock:
                self.ensure()
                memos = self.store.get(self._ids_of_hits(hits))
        except Exception as exc:
            self._best_effort(exc)
            return hits
        out = []
        for h in hits:
            memo = memos.get(memo_id(h.path, h.text_md5, self._key)) if h.text_md5 else None
            decay = self.decay(memo, now) if memo is not None else 1.0
            out.append(
                replace(
                    h,
                    score=ranked(h.score, decay, weight),
                    components=(*h.components, ("hybrid", h.score), ("decay", decay)),
                )
            )
        out.sort(key=lambda h: h.score, reverse=True)
        return out

    def decay(self, memo: Memo, now: datetime) -> float:
        """``memo``'s decay score at ``now`` (memory/retention.py)."""
        return decay_score(age_days(memo.created, memo.last_retrieved, now), memo.reinforcement_count, self.policy)

    def reinforce(self, hits: Iterable[Hit], now: datetime | None = None) -> None:
        """Count one retrieval for each hit's memo (instruction notes have none), written by a background
        thread so the search does not wait for SQLite (``flush`` waits; the process waits at exit). Never
        raises: a store that cannot be written is reported once in the log, and search goes on."""
        try:
            with self._lock:
                self.ensure()
                ids = self._ids_of_hits(hits)
        except Exception as exc:  # reinforcement is best-effort: a read-only store must not fail a search
            self._best_effort(exc)
            return
        self._enqueue(ids, now or _now())

    def _enqueue(self, ids: list[str], now: datetime) -> None:
        if not ids:
            return
        store = self.store  # opened here: the writer never takes self._lock, which a flush() caller may hold
        with self._pending_lock:
            self._pending.append((ids, now))
            if self._writer is None:  # not a daemon: a CLI search's retrievals are written before it exits
                self._writer = threading.Thread(target=self._drain, args=(store,), name="botbin-reinforce")
                self._writer.start()

    def _drain(self, store: MemoStore) -> None:
        while True:
            with self._pending_lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._writer = None
                    return
            try:
                for ids, now in batch:
                    store.reinforce(ids, now)
            except Exception as exc:
                self._best_effort(exc)

    def flush(self) -> None:
        """Wait until every reinforcement so far is written."""
        while True:
            with self._pending_lock:
                writer = self._writer
            if writer is None:
                return
            writer.join()

    def reinforce_ranges(self, ranges: Iterable[tuple[str, int, int]], now: datetime | None = None) -> None:
        """Reinforce the memos overlapping (path, start_line, end_line) ranges (0-based, end exclusive)."""
        try:
            with self._lock:
                refs = self.ensure()
                wanted = [
                    i
                    for path, start, end in ranges
                    for i in self._by_path.get(path, ())
                    if refs[i].start_line < end and start < refs[i].end_line
                ]
        except Exception as exc:
            self._best_effort(exc)
            return
        self._enqueue(wanted, now or _now())

    # -- commands -------------------------------------------------------------------------------
    def refresh(self, now: datetime) -> list[tuple[Memo, ChunkRef]]:
        """Every live memo with its chunk, its stored decay score brought up to ``now``."""
        self.flush()
        refs = self.ensure(now=now)
        memos = self.store.get(refs)
        scores = {i: self.decay(m, now) for i, m in memos.items()}
        self.store.set_decay(scores)
        return [(replace(memos[i], decay_score=scores[i]), refs[i]) for i in refs if i in memos]

    def prune(self, dry_run: bool = False, now: datetime | None = None) -> PruneReport:
        """Archive memos whose decay score is under ``prune_threshold`` (directives are never archived);
        they leave search, the notes stay as they are. Rewrites the archive note. Raises BotbinError."""
        from botbin.memory.notes import ARCHIVE_NOTE, archive_text, write_note

        now = now or _now()
        threshold = self.ws.settings.prune_threshold
        with self._lock:
            live = self.refresh(now)
            chosen = [(m, r) for m, r in live if m.decay_score < threshold and r.kind == "lore"]
            note = self.ws.output_dir / ARCHIVE_NOTE
            if not dry_run and chosen:
                self.store.archive({m.id: None if self._key else r.text for m, r in chosen}, now)
                write_note(note, archive_text(self.store.all(), threshold, now))
                self._seen = None
                self.ensure(now=now)
        archived = tuple(replace(m, archived_at=now) for m, _ in chosen)
        return PruneReport(archived, threshold, len(live) - len(chosen), os.fspath(note), dry_run)

    def restore(
        self,
        ids: Iterable[str] = (),
        path_glob: str | None = None,
        everything: bool = False,
        now: datetime | None = None,
    ) -> RestoreReport:
        """Bring archived memos back into search: those of ``ids`` (a unique prefix is enough), of notes
        matching ``path_glob``, or all. Rewrites the archive note. Raises BotbinError."""
        from botbin.memory.notes import ARCHIVE_NOTE, archive_text, write_note

        now = now or _now()
        self.flush()
        with self._lock:
            archived = [m for m in self.store.all() if m.archived_at is not None]
            chosen: dict[str, Memo] = {}
            unknown = []
            for want in ids:
                match = [m for m in archived if m.id.startswith(want)]
                if len(match) == 1:
                    chosen[match[0].id] = match[0]
                else:
                    unknown.append(want)
            matches = compile_glob(path_glob) if path_glob else None
            for m in archived:
                if everything or (matches is not None and matches(m.path)):
                    chosen[m.id] = m
            if chosen:
                self.store.restore(chosen, now)
                write_note(
                    self.ws.output_dir / ARCHIVE_NOTE,
                    archive_text(self.store.all(), self.ws.settings.prune_threshold, now),
                )
                self._seen = None
        return RestoreReport(tuple(chosen.values()), tuple(unknown))

    def candidates(self, now: datetime) -> list[Candidate]:
        from botbin.memory.consolidate import Candidate

        with self._lock:
            return [
                Candidate(m.id, r.path, r.start_line, r.end_line, r.text, r.kind, m.reinforcement_count, r.row)
                for m, r in self.refresh(now)
            ]

    def consolidate(self, dry_run: bool = False, now: datetime | None = None) -> ConsolidateReport:
        """Distil recurring, reinforced and stated memos into the roots note (memory/roots.py)."""
        from botbin.memory.roots import consolidate

        return consolidate(self, dry_run, now or _now())
