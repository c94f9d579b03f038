"""Sync progress in the unit that takes the time: chunks embedded out of chunks to embed.

The engine first prepares (reads, parses, chunks) the changed notes and counts the chunks that the
embedding cache lacks; then it embeds them in steps of ``EMBED_STEP`` chunks and reports after each step,
so a front end's bar moves every few seconds even on a slow machine, rather than per note.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from botbin.embedding import Embedder

#: progress(chunks_embedded, chunks_to_embed): called after each note is prepared (the total grows while
#: changed notes are counted) and after each embedding step (the count advances); the last call has
#: chunks_embedded == chunks_to_embed.
ProgressFn = Callable[[int, int], None]

#: Chunks embedded between two progress reports (a few seconds of a loaded 2-core machine at most).
EMBED_STEP = 128


class ChunkProgress:
    """Counts chunks to embed and chunks embedded, and reports them to an optional ``ProgressFn``."""

    def __init__(self, report: ProgressFn | None) -> None:
        self.report = report
        """Where the counts go; None: nobody listens."""
        self.total = 0
        """Chunks to embed counted so far."""
        self.done = 0
        """Chunks embedded so far."""
        self.reported = False
        """True once a count was reported (a sync that changed nothing reports none)."""

    def plan(self, chunks: int) -> None:
        """``chunks`` more chunks are to be embedded (0: a note was looked at, nothing new to embed)."""
        self.total += chunks
        self._emit()

    def advance(self, chunks: int) -> None:
        """``chunks`` chunks were embedded."""
        self.done += chunks
        self.total = max(self.total, self.done)  # renamed notes' cache can only lower what is left
        self._emit()

    def finish(self) -> None:
        """Everything counted is done (chunks found in the cache meanwhile need no embedding)."""
        self.done = self.total
        if self.reported:
            self._emit()

    def _emit(self) -> None:
        self.reported = True
        if self.report is not None:
            self.report(self.done, self.total)


def embed_in_steps(embedder: Embedder, texts: list[str], progress: ChunkProgress) -> npt.NDArray[np.float32]:
    """Embed ``texts`` ``EMBED_STEP`` at a time, advancing ``progress`` after each step."""
    parts = []
    for start in range(0, len(texts), EMBED_STEP):
        part = texts[start : start + EMBED_STEP]
        parts.append(embedder.embed(part))
        progress.advance(len(part))
    return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
