"""TurnObserver: turns in, distilled blocks out to each user's soul file (the stateful part of conversation/).

Per user it keeps a turn buffer, distilled every ``turn_buffer_size`` turns (5, FileRAG; DESIGN section 8),
at once when a new turn drifts from the buffer (cosine to the buffer's centroid under ``drift_cosine``, 0.25,
FileRAG) or starts another session, and on ``flush()`` (``botbin ingest`` and ``botbin mcp`` call it on
SIGINT/SIGTERM and at exit). A distilled block whose cosine to a block already in the soul file is over
``duplicate_block_cosine`` (0.92, FileRAG) is skipped, so ingesting the same log twice adds nothing; bullets
already written word for word are dropped too. Each turn is scored by the admission gate (gate.py) against
the user's memory: the soul file's bullets (embedded once, when the user is first seen) plus the run's
earlier turns, and the content words of both. Thread-safe: one lock guards all state (the MCP SDK runs tools
on worker threads).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from botbin.memory.conversation.distill import (
    Block,
    BufferedTurn,
    build_block,
    centroid,
    needs_selection,
    select_sentences,
    split_sentences,
)
from botbin.memory.conversation.gate import GateScore, content_words, is_directive, score_turn
from botbin.memory.conversation.soul import append_blocks, last_turn, parse_soul, read_soul, soul_rel
from botbin.memory.conversation.turns import Turn

if TYPE_CHECKING:
    from botbin.workspace import Workspace

#: Texts per embedding call.
EMBED_BATCH = 64


class _Rows:
    """A growable float32 (n, dim) matrix (amortized appends)."""

    def __init__(self, dim: int) -> None:
        self._data = np.zeros((16, dim), dtype=np.float32)
        self.n = 0

    def add(self, rows: npt.NDArray[np.float32]) -> None:
        rows = np.asarray(rows, dtype=np.float32).reshape(-1, self._data.shape[1])
        if self.n + len(rows) > len(self._data):
            grown = np.zeros((max(2 * len(self._data), self.n + len(rows)), self._data.shape[1]), dtype=np.float32)
            grown[: self.n] = self._data[: self.n]
            self._data = grown
        self._data[self.n : self.n + len(rows)] = rows
        self.n += len(rows)

    @property
    def matrix(self) -> npt.NDArray[np.float32]:
        """The rows so far: a view, float32 (n, dim)."""
        return self._data[: self.n]


@dataclass
class _UserState:
    user: str
    rel: str
    next_number: int
    memory: _Rows
    """The soul file's bullets, embedded."""
    history: _Rows
    """The run's turns so far, embedded."""
    blocks: _Rows
    bullets: set[str]
    words: set[str]
    """Content words of the soul file's bullets and the run's turns so far (the gate's lexical novelty)."""
    buffer: list[BufferedTurn] = field(default_factory=list)
    vectors: list[npt.NDArray[np.float32]] = field(default_factory=list)


@dataclass(frozen=True)
class DistilledBlock:
    """A block distilled from a buffer: written to the soul file, or skipped."""

    user: str
    soul_file: str
    """Relative POSIX path of the user's soul file."""
    block: Block
    status: str
    """``written``, ``duplicate`` (near-duplicate of a block already there) or ``dry-run`` (not written)."""
    cosine: float
    """Highest cosine to the blocks already in the soul file (0.0 for the first block)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "soulFile": self.soul_file,
            "firstTurn": self.block.first_turn,
            "lastTurn": self.block.last_turn,
            "status": self.status,
            "cosine": round(self.cosine, 4),
            "text": self.block.text,
        }


@dataclass(frozen=True)
class ObserveResult:
    """What observing one turn did."""

    user: str
    soul_file: str
    turn_number: int
    """The turn's 1-based number for its user."""
    gate: GateScore
    admitted: bool
    """The gate's score reached ``admission_threshold``."""
    protected: bool
    """A directive turn, kept verbatim."""
    buffered: int
    """Turns waiting in the user's buffer afterwards."""
    distilled: tuple[DistilledBlock, ...]
    """Blocks distilled because of this turn (drift, a new session, or a full buffer)."""


@dataclass
class ObserverStats:
    """Counts over an observer's life."""

    turns: int = 0
    admitted: int = 0
    protected: int = 0
    blocks_written: int = 0
    """Blocks appended to soul files (in a dry run: that would have been)."""
    duplicates_skipped: int = 0
    empty_buffers: int = 0
    """Buffers in which no turn was admitted or protected (nothing to write)."""
    soul_files: set[str] = field(default_factory=set)
    """Soul files written to (none in a dry run)."""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "soul_files": sorted(self.soul_files)}


class TurnObserver:
    """Buffers turns per user and appends distilled blocks to their soul files (see the module docstring).

    ``write``: False distils without touching any file (``--dry-run``). ``sync_each_block``: sync the
    workspace after each written block, so search sees it at once (the MCP tool); else the caller syncs.
    ``refuse_locked``: refuse to write a block when the store is encrypted and its passphrase is missing (the
    block could not be indexed; ``botbin ingest`` and ``observe_turn`` can be given it and run again); False for a
    host's capture, which no one could retry (agent/capture.py): the soul file is written, indexed by the next sync
    that has the passphrase.
    """

    batch_size = EMBED_BATCH
    """Turns a caller should embed per call (``embed``) before observing them one by one."""

    def __init__(
        self, ws: Workspace, write: bool = True, sync_each_block: bool = False, refuse_locked: bool = True
    ) -> None:
        self.ws = ws
        self.write = write
        self.sync_each_block = sync_each_block
        self.refuse_locked = refuse_locked
        self.stats = ObserverStats()
        self._users: dict[str, _UserState] = {}
        self._lock = threading.RLock()

    # -- embedding ---------------------------------------------------------------------------------
    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """float32 (len(texts), dim) unit rows, in calls of at most EMBED_BATCH texts."""
        dim = self.ws.models.meta.dim
        parts = [
            np.asarray(self.ws.models.embedder.embed(texts[i : i + EMBED_BATCH]), dtype=np.float32)
            for i in range(0, len(texts), EMBED_BATCH)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, dim), dtype=np.float32)

    def _state(self, user: str) -> _UserState:
        state = self._users.get(user)
        if state is not None:
            return state
        settings = self.ws.settings
        rel = soul_rel(settings.soul_dir, user, settings.instruction_notes)
        text = read_soul(self.ws.root, rel, settings.follow_symlinks) or ""
        blocks = parse_soul(text)
        dim = self.ws.models.meta.dim
        bullets = [b[2:] for blk in blocks for b in blk.bullets]
        state = _UserState(
            user,
            rel,
            last_turn(blocks) + 1,
            _Rows(dim),
            _Rows(dim),
            _Rows(dim),
            {b for blk in blocks for b in blk.bullets},
            {w for b in bullets for w in content_words(b)},
        )
        state.memory.add(self.embed(bullets))
        state.blocks.add(self.embed([blk.body for blk in blocks if blk.bullets]))
        self._users[user] = state
        return state

    # -- observing ---------------------------------------------------------------------------------
    def observe(self, turn: Turn, vector: npt.NDArray[np.float32] | None = None) -> ObserveResult:
        """Buffer ``turn`` (its embedding ``vector``, float32 (dim,), is computed when not given), distilling
        first on drift or a new session and after when the buffer is full.

        Raises BotbinError if a soul file cannot be read or written, ModelError if the model is unavailable.
        """
        with self._lock:
            state = self._state(turn.user)
            v = self.embed([turn.content])[0] if vector is None else np.asarray(vector, dtype=np.float32)
            distilled: list[DistilledBlock] = []
            if state.buffer and self._breaks(state, turn, v):
                distilled += self._distill(state)
            settings = self.ws.settings
            gate = score_turn(turn.content, v, state.memory.matrix, state.history.matrix, state.words)
            protected = is_directive(turn.role, turn.content)
            admitted = gate.score >= settings.admission_threshold
            number = state.next_number
            state.next_number += 1
            state.buffer.append(BufferedTurn(number, turn, gate, admitted, protected))
            state.vectors.append(v)
            state.history.add(v)
            state.words.update(content_words(turn.content))
            self.stats.turns += 1
            self.stats.admitted += admitted
            self.stats.protected += protected
            if len(state.buffer) >= settings.turn_buffer_size:
                distilled += self._distill(state)
            return ObserveResult(
                turn.user, state.rel, number, gate, admitted, protected, len(state.buffer), tuple(distilled)
            )

    def observe_message(
        self, role: str, content: str, user: str | None = None, session: str | None = None, timestamp: str | None = None
    ) -> ObserveResult:
        """``observe`` of one message as an agent sends it (the MCP tool). Raises TurnError for an empty role
        or content or a bad timestamp, and what ``observe`` raises."""
        return self.observe(tool_turn(role, content, user, session, timestamp))

    def observe_all(self, turns: Iterable[Turn]) -> Iterator[ObserveResult]:
        """Observe ``turns`` in order, embedding them EMBED_BATCH at a time; one result per turn. Stopping
        the iteration early leaves the unobserved turns of the current batch unobserved."""
        batch: list[Turn] = []
        for turn in turns:
            batch.append(turn)
            if len(batch) == EMBED_BATCH:
                yield from self._observe_batch(batch)
                batch = []
        yield from self._observe_batch(batch)

    def _observe_batch(self, batch: list[Turn]) -> Iterator[ObserveResult]:
        vectors = self.embed([t.content for t in batch])
        for turn, vector in zip(batch, vectors, strict=True):
            yield self.observe(turn, vector)

    def _breaks(self, state: _UserState, turn: Turn, vector: npt.NDArray[np.float32]) -> bool:
        """True when ``turn`` opens another session or drifts from the buffer's topic."""
        if turn.session != state.buffer[-1].turn.session:
            return True
        return float(centroid(np.stack(state.vectors)) @ vector) < self.ws.settings.drift_cosine

    def flush(self) -> list[DistilledBlock]:
        """Distil every user's buffer now (at exit, on SIGINT/SIGTERM). Raises as ``observe`` does."""
        with self._lock:
            out: list[DistilledBlock] = []
            for state in self._users.values():
                if state.buffer:
                    out += self._distill(state)
            return out

    def buffered(self) -> int:
        """Turns waiting in all buffers."""
        with self._lock:
            return sum(len(s.buffer) for s in self._users.values())

    # -- distilling --------------------------------------------------------------------------------
    def _facts(self, state: _UserState, center: npt.NDArray[np.float32]) -> dict[int, str]:
        """Turn number -> best sentences, for the admitted turns long enough to be cut (one embed call)."""
        long = [t for t in state.buffer if t.admitted and not t.protected and needs_selection(t.turn.content)]
        sentences = [split_sentences(t.turn.content) for t in long]
        vectors = self.embed([s for group in sentences for s in group])
        facts: dict[int, str] = {}
        start = 0
        for item, group in zip(long, sentences, strict=True):
            chosen = select_sentences(group, vectors[start : start + len(group)], center)
            facts[item.number] = " ".join(chosen)
            start += len(group)
        return facts

    def _distill(self, state: _UserState) -> list[DistilledBlock]:
        center = centroid(np.stack(state.vectors))
        block = build_block(state.buffer, self._facts(state, center))
        fresh = tuple(b for b in block.bullets if b not in state.bullets) if block else ()
        if block is None or not fresh:
            self.stats.empty_buffers += block is None
            self.stats.duplicates_skipped += block is not None
            result = [] if block is None else [DistilledBlock(state.user, state.rel, block, "duplicate", 1.0)]
            state.buffer, state.vectors = [], []
            return result
        block = replace(block, bullets=fresh)
        vector = self.embed([block.body])[0]
        cosine = float(np.max(state.blocks.matrix @ vector)) if state.blocks.n else 0.0
        if cosine > self.ws.settings.duplicate_block_cosine:
            self.stats.duplicates_skipped += 1
            state.buffer, state.vectors = [], []
            return [DistilledBlock(state.user, state.rel, block, "duplicate", cosine)]
        if self.write:  # the buffer is kept until the block is on disk: a failed write loses nothing
            self._write(state, block.text)
        state.buffer, state.vectors = [], []
        state.blocks.add(vector)
        state.bullets.update(fresh)
        self.stats.blocks_written += 1
        if self.write and self.sync_each_block:
            self.ws.sync()
        return [DistilledBlock(state.user, state.rel, block, "written" if self.write else "dry-run", cosine)]

    def _write(self, state: _UserState, text: str) -> None:
        """Append ``text`` to ``state``'s soul file, one writer at a time; with ``refuse_locked``, refused before
        writing when the store is encrypted and its passphrase is missing (the block could not be indexed)."""
        from botbin.sync.encryption import check_writable
        from botbin.sync.note_lock import LOCK_DIR

        ws, settings = self.ws, self.ws.settings
        if self.refuse_locked:
            check_writable(ws.output_dir, settings, ws.passphrase)
        lock_dir = ws.output_dir / LOCK_DIR
        append_blocks(ws.root, state.rel, state.user, text, settings.follow_symlinks, lock_dir, settings.lock_timeout_s)
        self.stats.soul_files.add(state.rel)


def tool_turn(
    role: str, content: str, user: str | None = None, session: str | None = None, timestamp: str | None = None
) -> Turn:
    """A Turn from the MCP tool's arguments, stamped with the current local time when ``timestamp`` is None.

    Raises TurnError for an empty role or content, or a timestamp that is not ISO 8601.
    """
    from botbin.memory.conversation.turns import parse_timestamp, turn_from_object

    turn, _ = turn_from_object({"role": role, "content": content, "user": user, "session": session})
    when = parse_timestamp(timestamp) if timestamp else datetime.now().astimezone()
    return replace(turn, timestamp=when)
