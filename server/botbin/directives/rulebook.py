"""Every rule of a workspace read straight from the notes' text (pure, no embedding): what the first context
call of a session needs before the index exists.

The caller reads the tracked notes (decoded, LF text) and passes them in; ``collect_rules`` partitions each one
(cached by path and hash, see partition.partition_source) and sorts the result into the three rule tiers:
hard invariants and soft rules of instruction notes (in tier order: root ``AGENTS.md``, root ``CLAUDE.md``,
then the other instruction notes by path; source order inside a note), and the soft rules of every other
note (by path), which context assembly filters by relevance (tier 1.5).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from botbin.directives.partition import DEFAULT_INSTRUCTION_NOTES, Directive, partition_source

#: Instruction notes that come first in tier 1, in this order; the others follow by path.
_FIRST = {"agents.md": 0, "claude.md": 1}


@dataclass(frozen=True)
class Rulebook:
    """The rules of a set of notes, sorted into tiers."""

    hard: tuple[Directive, ...]
    """Hard invariants of instruction notes (list items, frontmatter), in tier order (context tier 1)."""
    instruction_soft: tuple[Directive, ...]
    """Soft rules of instruction notes (quotes, paragraphs with a cue), in tier order (context tier 2)."""
    note_rules: tuple[Directive, ...]
    """Soft rules of every other note (explicit obligations and prohibitions), by path (tier 1.5)."""
    instruction_notes: tuple[str, ...]
    """Paths of the instruction notes found, in tier order."""


def instruction_order(path: str) -> tuple[int, str]:
    """Sort key of an instruction note in tier 1: root AGENTS.md, root CLAUDE.md, then the rest by path."""
    return (_FIRST.get(path.lower(), 2), path)


def collect_rules(
    notes: Iterable[tuple[str, str]], instruction_globs: Sequence[str] = DEFAULT_INSTRUCTION_NOTES
) -> Rulebook:
    """The rules of ``notes`` ((relative POSIX path, LF-normalized text) pairs). Deterministic; never raises
    (a note the parser cannot read simply gives no rules; decoding errors are the caller's to report)."""
    instruction: list[tuple[str, tuple[Directive, ...]]] = []
    ordinary: list[tuple[str, tuple[Directive, ...]]] = []
    for path, text in notes:
        _, part = partition_source(text, path, instruction_globs)
        (instruction if part.instruction else ordinary).append((path, part.directives))
    instruction.sort(key=lambda item: instruction_order(item[0]))
    ordinary.sort(key=lambda item: item[0])
    hard = tuple(d for _, ds in instruction for d in ds if d.kind == "hard")
    soft = tuple(d for _, ds in instruction for d in ds if d.kind == "soft")
    return Rulebook(hard, soft, tuple(d for _, ds in ordinary for d in ds), tuple(p for p, _ in instruction))
