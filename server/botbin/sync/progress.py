"""Sync progress in the unit that takes the time: chunks embedded out of chunks to embed.

The engine first prepares (reads, parses, chunks) the changed notes and counts the chunks that the
embedding cache lacks; then it embeds them in steps and reports after each step. A step is sized to take
about ``STEP_S`` seconds on this machine (between ``MIN_STEP`` and ``MAX_STEP`` chunks, from the last step's
pace), so a front end's bar moves every few seconds on a fast or a loaded machine alike, while steps stay
as big as that allows (a backend sorts a step's texts by length to pad less).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from botbin.embedding import Embedder

#: progress(chunks_embedded, chunks_to_embed): called after each note is prepared (the total grows while
#: changed notes are counted) and after each embedding step (the count advances); the last call has
#: chunks_embedded == chunks_to_embed.
ProgressFn = Callable[[int, int], None]

#: Seconds one embedding step should take (the gap between two progress reports while embedding).
STEP_S = 2.0
#: Fewest chunks per step: what a heavily loaded 2-core machine embeds in a few seconds (a CPU embeds a small
#: batch about as fast per chunk as a big one; steps grow back as soon as the machine is faster).
MIN_STEP = 8
#: Most chunks per step.
MAX_STEP = 512


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
        self.step = MIN_STEP
        """Chunks in the next embedding step (see ``STEP_S``)."""

    def paced(self, chunks: int, seconds: float) -> None:
        """The last step embedded ``chunks`` in ``seconds``: size the next one to take about ``STEP_S``."""
        rate = chunks / max(seconds, 1e-3)
        self.step = max(MIN_STEP, min(MAX_STEP, int(rate * STEP_S) // MIN_STEP * MIN_STEP))

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


def embed_in_steps(
    embedder: Embedder, texts: list[str], progress: ChunkProgress, sizes: list[int] | None = None
) -> npt.NDArray[np.float32]:
    """Embed ``texts`` a step at a time (``progress.step`` chunks), advancing ``progress`` after each; rows in the
    order of ``texts``. ``sizes`` (each text's token count): the texts are embedded shortest first, so that each
    step's batches pad to similar lengths (the help vault's 1,735 chunks: 26 s instead of 35 s in steps of ~90)."""
    order = np.argsort(np.asarray(sizes), kind="stable") if sizes is not None else np.arange(len(texts))
    parts, start = [], 0
    while start < len(texts):
        part = [texts[i] for i in order[start : start + progress.step]]
        began = time.perf_counter()
        parts.append(embedder.embed(part))
        progress.paced(len(part), time.perf_counter() - began)
        progress.advance(len(part))
        start += len(part)
    if not parts:
        return np.zeros((0, 0), dtype=np.float32)
    out = np.concatenate(parts)
    if sizes is None:
        return out
    rows = np.empty_like(out)
    rows[order] = out
    return rows
