"""The lifecycle of one workspace's memos: seeding from the index, reinforcement, decay ranking, prune,
restore and consolidate. The composition root (``botbin.service``) makes one per workspace.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from botbin.errors import BotbinError
from botbin.memory.consolidate import Candidate
from botbin.memory.memos import MEMO_FILE, Memo, MemoStore, memo_id
from botbin.memory.notes import write_archive
from botbin.memory.reconcile import reconcile
from botbin.memory.retention import DecayPolicy, age_days, decay_score, ranked
from botbin.memory.sealing import PLAIN, MemoKeys, SidecarKeys, index_chunks

if TYPE_CHECKING:
    from botbin.index.hits import ChunkRef, Hit
    from botbin.index.store import MemoryIndex
    from botbin.workspace import Workspace

log = logging.getLogger(__name__)
#: Notes a person curates as durable memory (Bot-BIN's MEMORY.md): their chunks are not memos, so they never
#: decay or get archived, though they are not rules either.
CURATED_NOTES = frozenset({"memory.md"})

_MAX_PATCHED_NOTES = 256
"""Past this many notes changed since the last ``ensure``, it reconciles every memo in one pass instead."""


def _now() -> datetime:
    return datetime.now().astimezone()


class Lifecycle:
    """Memo state of workspace ``ws`` (sidecar ``memos.sqlite`` in its output folder)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._store: MemoStore | None = None
        self._lock = threading.RLock()
        self._seen: tuple[int, int, str | None] | None = None
        self._mark: tuple[int, int, int] | None = None
        """(id, version, layout) of the index at the last ``ensure``: what a save-sized update starts from."""
        self._refs: dict[str, ChunkRef] | None = None
        """The live memos' chunks by memo id, built on demand (``ensure``: commands); a search needs only the
        view (``_view``), and None after every change of it."""
        self._by_path: dict[str, list[str]] = {}
        """The live memos' ids by note path, in chunk order."""
        self._key: bytes | None = None
        self.memo_keys: MemoKeys = PLAIN
        """The keys of memo ids and archived texts, as of the last view (memory/sealing.py)."""
        self._sidecar = SidecarKeys()
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
        return self._memo_note(ref.path, ref.instruction)

    def _memo_note(self, path: str, instruction: bool) -> bool:
        """True when the chunks of note ``path`` are memos (``_is_memo``)."""
        curated = path.rsplit("/", 1)[-1].lower() in CURATED_NOTES
        return not instruction and not curated and path != self.ws.settings.roots_note

    def ensure(self, index: MemoryIndex | None = None, now: datetime | None = None) -> dict[str, ChunkRef]:
        """Memos for every indexed chunk outside instruction notes (new ones created, moved ones updated,
        vanished ones dropped unless archived, an edited chunk inheriting its predecessor's counts), and
        archived ones hidden from search (``_view``). Returns the live memos' chunks by memo id (built once per
        version of the view: O(chunks))."""
        with self._lock:
            index = self._view(index, now)
            if index is None:
                return {}
            if self._refs is None:
                live = {i for ids in self._by_path.values() for i in ids}
                refs = index.chunk_refs(set(self._by_path))
                self._refs = {i: r for r in refs for i in (memo_id(r.path, r.text_md5, self._key),) if i in live}
            return self._refs

    def _view(self, index: MemoryIndex | None, now: datetime | None) -> MemoryIndex | None:
        """Bring the memos and the hidden chunks up to the index (see ``ensure``); cheap when it has not changed
        since the last call. Returns the index, None when the workspace has no output folder yet."""
        if index is None:
            index, _ = self.ws.index.get()
        stamp = (id(index), index.version, self.ws.index.indexed_at)  # version: an edit may keep len(index)
        with self._lock:
            if stamp == self._seen:
                return index
            if not self.ws.output_dir.is_dir():
                return None
            self.memo_keys = self._sidecar.current(self.ws.keys())
            self._key = self.memo_keys.ids
            self._follow(lambda: index, self.memo_keys)
            self._refs = None
            if not self._ensure_changed(index, now or _now()):
                self._full_view(index, now or _now())
            self._seen = stamp
            return index

    @property
    def lock(self) -> threading.RLock:
        """Held by commands that read and change the memos together (memory/archive.py)."""
        return self._lock

    def view_changed(self) -> None:
        """The memos changed (archived, restored, converted): the next ``ensure`` rebuilds the view."""
        self._seen = None

    def _follow(self, index: Callable[[], MemoryIndex], target: MemoKeys) -> None:
        """Convert the sidecar to ``target`` keys when it was made under others: the store was encrypted or
        decrypted since, by this process or another (memory/sealing.py). ``index``: read only for a conversion.
        Raises StorageError."""
        if self._sidecar.keyed == target.tag:
            return
        self.flush()  # retrievals queued under the old ids
        if self._sidecar.follow(self.store, lambda: index_chunks(index().entries()), target):
            write_archive(self.store.all(), self.ws.output_dir, self.ws.settings.prune_threshold, _now())
            self._seen = None

    @contextmanager
    def following_keys(self, request: str | None) -> Iterator[None]:
        """Around a sync that may encrypt or decrypt the store: the sidecar follows its keys. Decrypting
        converts it first, while the passphrase still opens it (a failed sync converts it back); the rest after
        the sync. Raises StorageError when a conversion the sync made needed cannot be written."""
        if request == "decrypt":
            self._follow_store(PLAIN, strict=False)
        try:
            yield
        except BaseException:
            self._follow_store(None, strict=False)
            raise
        self._follow_store(None, strict=True)
        if request == "encrypt" and (self.ws.output_dir / MEMO_FILE).exists():
            self.store.compact()  # also when already encrypted: a rewrite an open editor kept from finishing

    def _follow_store(self, target: MemoKeys | None, strict: bool) -> None:
        """``_follow`` to ``target`` (None: the store's keys now); cheap when the keys did not change."""
        if not (self.ws.output_dir / MEMO_FILE).exists():
            return
        try:
            with self._lock:
                current = self._sidecar.current(self.ws.keys())  # known, to convert from
                self._follow(lambda: self.ws.index.get()[0], target or current)
        except BotbinError as exc:
            if strict:
                raise
            log.info("memo store %s not converted now (%s); the next search does it", MEMO_FILE, exc)

    def _full_view(self, index: MemoryIndex, now: datetime) -> None:
        """The view over every chunk, from memo ids and places alone (no ChunkRef per chunk): the notes whose
        memos differ from their chunks (new, moved, vanished) are reconciled, the rest only read."""
        places: dict[str, tuple[str, str, int, int]] = {}  # memo id -> (path, text_md5, start_line, end_line)
        for note in index.entries():
            if self._memo_note(note.path, note.instruction):
                for c in note.chunks:
                    places[memo_id(note.path, c.text_md5, self._key)] = (
                        note.path,
                        c.text_md5,
                        c.start_line,
                        c.end_line,
                    )
        known = self.store.place_map()
        changed = {p for i, (p, _, s, e) in places.items() if known.get(i, ())[:3] != (p, s, e)}
        changed.update(k[0] for i, k in known.items() if i not in places and not k[3])
        if changed:
            refs = {memo_id(r.path, r.text_md5, self._key): r for r in index.chunk_refs(changed) if self._is_memo(r)}
            self._reconcile(refs, now, changed)
        archived = self.store.archived_ids()
        index.set_hidden(frozenset((p, md5) for i, (p, md5, _, _) in places.items() if i in archived))
        self._by_path = {}
        for i, (p, _, _, _) in places.items():
            if i not in archived:
                self._by_path.setdefault(p, []).append(i)
        self._mark = (id(index), index.version, index.layout)

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
            self._by_path.pop(path, None)
        for i, r in refs.items():
            if i not in archived:
                self._by_path.setdefault(r.path, []).append(i)
        self._mark = (id(index), index.version, index.layout)
        return True

    def _best_effort(self, exc: Exception) -> None:
        """Report once that the memo store cannot be used; search goes on without it."""
        if not self._warned:
            self._warned = True
            named = isinstance(exc, BotbinError) and exc.path
            where = "" if named else f"memo store {self.ws.output_dir / MEMO_FILE}: "
            log.warning("%s%s; searching without decay and reinforcement", where, exc)

    def hide_archived(self, index: MemoryIndex) -> None:
        """``ensure`` for a search: archived memos hidden; never raises (a read-only store is logged once)."""
        try:
            self._view(index, None)
        except Exception as exc:  # search must not fail for the sidecar's sake
            self._best_effort(exc)

    def _reconcile(self, refs: dict[str, ChunkRef], now: datetime, paths: set[str] | None = None) -> None:
        """Memos of ``refs``: every chunk of the workspace, or of the notes ``paths`` only (memory/reconcile.py)."""
        reconcile(self.store, refs, now, self._key is not None, paths)

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
                self._view(None, None)
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
                self._view(None, None)
                ids = self._ids_of_hits(hits)
        except Exception as exc:  # reinforcement is best-effort: a read-only store must not fail a search
            self._best_effort(exc)
            return
        self._enqueue(ids, now or _now())

    def _enqueue(self, ids: list[str], now: datetime) -> None:
        if not ids:
            return
        try:  # opened here: the writer never takes self._lock, which a flush() caller may hold
            store = self.store
        except BotbinError as exc:  # a full or read-only disk: this search's retrievals are not counted
            self._best_effort(exc)
            return
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
                index = self._view(None, None)
                spans = list(ranges)
                paths = {p for p, _, _ in spans if p in self._by_path}
                chunks = index.chunk_refs(paths) if index is not None and paths else []
                refs = {memo_id(r.path, r.text_md5, self._key): r for r in chunks}
                wanted = [
                    i
                    for path, start, end in spans
                    for i in self._by_path.get(path, ())
                    if i in refs and refs[i].start_line < end and start < refs[i].end_line
                ]
        except Exception as exc:
            self._best_effort(exc)
            return
        self._enqueue(wanted, now or _now())

    # -- commands -------------------------------------------------------------------------------
    def live(self, now: datetime) -> list[tuple[Memo, ChunkRef]]:
        """Every live memo with its chunk and its decay score at ``now``; the stored scores are left as they are."""
        self.flush()
        refs = self.ensure(now=now)
        memos = self.store.get(refs)
        return [(replace(memos[i], decay_score=self.decay(memos[i], now)), refs[i]) for i in refs if i in memos]

    def refresh(self, now: datetime) -> list[tuple[Memo, ChunkRef]]:
        """Every live memo with its chunk, its stored decay score brought up to ``now``."""
        live = self.live(now)
        self.store.set_decay({m.id: m.decay_score for m, _ in live})
        return live

    def candidates(self, now: datetime | None = None) -> list[Candidate]:
        """The live memos as consolidation reads them (memory/roots.py), decay scores brought up to ``now``."""
        now = now or _now()
        with self._lock:
            return [
                Candidate(m.id, r.path, r.start_line, r.end_line, r.text, r.kind, m.reinforcement_count, r.row)
                for m, r in self.refresh(now)
            ]
