"""``botbin consolidate``: groups of memos distilled into the roots note (see consolidate.py for which,
abstractive.py for the optional LLM, notes.py for the note). Writes only the roots note, then syncs it. It takes
what it needs (the workspace and the memos to consider: ``Lifecycle.candidates``), not the lifecycle."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from botbin.errors import BotbinError
from botbin.memory.abstractive import closeness, complete
from botbin.memory.consolidate import Candidate, Group, Root, extractive, find_groups, split_sentences
from botbin.memory.notes import existing_roots, root_line, with_roots, write_note

if TYPE_CHECKING:
    from botbin.workspace import Workspace

DUPLICATE_ROOT_COSINE = 0.92
"""A new root this similar to one already in the note is skipped (the FileRAG near-duplicate rule)."""


@dataclass(frozen=True)
class ConsolidateReport:
    roots: tuple[Root, ...]
    """New roots written (or, in a dry run, that would be)."""
    skipped: int
    """Roots already in the roots note."""
    roots_note: str
    dry_run: bool
    rejected_abstractive: int = 0
    """Endpoint answers refused by the closeness check (their extractive root was used)."""

    def lines(self) -> list[str]:
        """The new roots as the roots note shows them (memory/notes.py)."""
        from botbin.memory.notes import root_line

        return [root_line(r, self.roots_note) for r in self.roots]


def _abstractive(ws: Workspace, group: Group, fallback: Root) -> tuple[Root, bool]:
    """The endpoint's merge of a multi-source group if it passes the closeness check; (root, rejected)."""
    s = ws.settings
    if s.distill_endpoint is None or len(group.members) < 2:
        return fallback, False
    texts = [" ".join(split_sentences(c.text)) or c.text for c in group.members]
    answer = complete(s.distill_endpoint, s.distill_model, texts, os.environ.get("BOTBIN_DISTILL_API_KEY"))
    if answer is None:
        return fallback, False
    vecs = ws.models.embedder.embed([answer, *texts])
    verdict = closeness(vecs[0], vecs[1:], s.distill_min_centroid, s.distill_min_coverage)
    if not verdict.accepted:
        return fallback, True
    return Root(answer, fallback.sources, fallback.reason, abstractive=True), False


def consolidate(ws: Workspace, cands: list[Candidate], dry_run: bool = False) -> ConsolidateReport:
    """Find groups among the memos ``cands`` (``Lifecycle.candidates``), distil each, skip roots already in the
    note, append the rest and sync the note (which publishes it too: workspace/syncing.py).

    Raises BotbinError when the roots note cannot be read (not UTF-8) or written, or links outside the
    workspace."""
    from botbin.sync.scan import outside_target

    s = ws.settings
    index, _ = ws.index.get()
    matrix = index.matrix()
    groups = find_groups(cands, matrix, s.consolidate_duplicate_cosine, s.consolidate_min_reinforcement)
    embed = ws.models.embedder.embed
    roots: list[Root] = []
    rejected = 0
    for group in groups:
        root, refused = _abstractive(ws, group, extractive(group, matrix, embed))
        roots.append(root)
        rejected += refused
    path = ws.root / s.roots_note
    if (outside := outside_target(ws.root, s.roots_note)) is not None and not s.follow_symlinks:
        raise BotbinError(
            f"the roots note links outside the workspace (to {outside}); botbin does not write there", path
        )
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise BotbinError(f"cannot read the roots note ({exc}); nothing was written", path) from exc
    have = existing_roots(old or "")
    seen = {" ".join(t.split()).casefold() for t in have}
    have_vecs = embed(have) if have else np.zeros((0, matrix.shape[1] if matrix.ndim == 2 else 0), np.float32)
    new: list[Root] = []
    texts = [r.text for r in roots]
    vecs = embed(texts) if texts else have_vecs[:0]
    for root, vec in zip(roots, vecs, strict=True):
        key = " ".join(root.text.split()).casefold()
        if key in seen or (len(have_vecs) and float((have_vecs @ vec).max()) > DUPLICATE_ROOT_COSINE):
            continue
        seen.add(key)
        have_vecs = np.vstack([have_vecs, vec[None, :]]) if len(have_vecs) else vec[None, :]
        new.append(root)
    if new and not dry_run:
        write_note(path, with_roots(old, [root_line(r, s.roots_note) for r in new]))
        ws.sync()
    return ConsolidateReport(tuple(new), len(roots) - len(new), s.roots_note, dry_run, rejected)
