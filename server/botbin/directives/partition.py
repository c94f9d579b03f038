"""Partition a parsed note into hard, soft and lore blocks, and list its directives (pure, cached by hash).

Instruction notes (``AGENTS.md``, ``CLAUDE.md`` in any folder and any case, the notes the
``instruction_notes`` globs name, or frontmatter ``botbin: instructions``) are written for an agent: their
list items and frontmatter are **hard** invariants, their blockquotes and the paragraphs the lexer marks
(imperatives included) are **soft** directives, the rest (headings, background prose, code) is **lore**.

Every other note, ``MEMORY.md`` included (Bot-BIN's curated memory: facts, people, decisions), is lexed as
an ordinary note (register.py): a block becomes a **soft** rule only when the lexer finds an explicit
obligation or prohibition in it ("Never answer in prose.", "You must sign every commit."); procedure steps,
"you can", advice and everything else stay lore. An ordinary note's rule is soft, never hard: nothing says
the note is addressed to the agent, so its rules are recalled by relevance (context tier 1.5), while hard
invariants (always in context, an error when they do not fit) are what an instruction note states. Kinds
follow the tier law of LibraVDB (hard invariants, soft directives, recalled lore).

What botbin writes itself (daily notes, soul files, the roots note: ``Settings.written_globs``) is never an
instruction note, whatever its name or frontmatter: the globs these functions get (``Settings.instruction_globs``)
end with one ``!glob`` per such note, and a ``!`` glob that names a note vetoes both its path and its frontmatter.
botbin recognises its own notes by where it writes them, not by a mark inside: their text comes from agents
and conversations (anyone can write a mark there), and a person's edit must not turn them into rules.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from wcmatch import glob as wglob

from botbin import config
from botbin.directives.lexer import Cue, lex
from botbin.parsing.blocks import Block, ParsedNote

Kind = Literal["hard", "soft", "lore"]
KIND_RANK: dict[str, int] = {"lore": 0, "soft": 1, "hard": 2}
#: Globs (relative POSIX paths, ``**`` spans folders, any case) of instruction notes: the default settings'
#: ``instruction_globs`` (the ``instruction_notes`` default, less the notes botbin writes: ``!`` globs).
DEFAULT_INSTRUCTION_NOTES: tuple[str, ...] = config.DEFAULT_INSTRUCTION_GLOBS
#: Modalities that make a block of an ordinary note a rule (advice and permissions stay memory there).
RULE_MODALITIES = frozenset({"obligation", "prohibition"})
_GLOB_FLAGS = wglob.GLOBSTAR | wglob.IGNORECASE | wglob.DOTGLOB | wglob.NEGATE
#: Frontmatter keys that describe the note rather than instruct: a frontmatter of only these is not a rule.
_META_KEYS = frozenset(
    {
        "botbin",
        "title",
        "tags",
        "tag",
        "aliases",
        "alias",
        "date",
        "created",
        "updated",
        "modified",
        "cssclasses",
        "publish",
        "permalink",
        "description",
    }
)
_LEXED_KINDS = frozenset({"paragraph", "list_item", "quote"})


@dataclass(frozen=True)
class RuleCue:
    """One lexer cue inside a directive, located in the note."""

    modality: str
    """'obligation', 'prohibition', 'recommendation' or 'permission'."""
    cue: str
    """The cue words as written."""
    line: int
    """0-based line of the cue in the note."""
    positive: bool
    """False for "do not" rules (prohibitions, "should not")."""
    action: str
    """What the rule is about, from the cue's action start to the sentence end ("push to main")."""

    @property
    def phrase(self) -> str:
        """The rule as one phrase: the cue and its action ("Never use tabs"), without trailing punctuation."""
        text = self.action if self.action.lower().startswith(self.cue.lower()) else f"{self.cue} {self.action}"
        return text.rstrip(" .!;:")


@dataclass(frozen=True)
class Directive:
    """A hard or soft block of a note, with the cues the lexer found in it (possibly none for hard)."""

    path: str
    """Relative POSIX path of the note."""
    kind: Kind
    """'hard' or 'soft'."""
    text: str
    """The block's source text."""
    start_line: int
    """0-based first line."""
    end_line: int
    """0-based line after the last (exclusive)."""
    heading_path: tuple[str, ...]
    cues: tuple[RuleCue, ...]

    @property
    def modality(self) -> str | None:
        """Modality of the first cue, None for a hard rule stated without one ("- Dates are ISO 8601")."""
        return self.cues[0].modality if self.cues else None

    def to_dict(self) -> dict[str, Any]:
        """The directive as AIF-BIN metadata and JSON (snake_case keys, as the rest of the metadata)."""
        return {
            "kind": self.kind,
            "text": self.text,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "heading_path": list(self.heading_path),
            "cues": [
                {"modality": c.modality, "cue": c.cue, "line": c.line, "positive": c.positive, "action": c.action}
                for c in self.cues
            ],
        }

    @classmethod
    def from_dict(cls, path: str, raw: Any) -> Directive | None:
        """Rebuild from ``to_dict`` output; None when ``raw`` is not such a map (an older or foreign file)."""
        try:
            cues = tuple(
                RuleCue(str(c["modality"]), str(c["cue"]), int(c["line"]), bool(c["positive"]), str(c["action"]))
                for c in raw["cues"]
            )
            kind: Kind = "hard" if raw["kind"] == "hard" else "soft"
            return cls(
                path,
                kind,
                str(raw["text"]),
                int(raw["start_line"]),
                int(raw["end_line"]),
                tuple(str(h) for h in raw["heading_path"]),
                cues,
            )
        except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: int() of an infinite float
            return None


@dataclass(frozen=True)
class Partition:
    """The kinds of one note's blocks and its directives."""

    instruction: bool
    """True for an instruction note."""
    kinds: tuple[Kind, ...]
    """Kind of each block of ``ParsedNote.blocks``, same order."""
    directives: tuple[Directive, ...]
    """Hard and soft blocks in source order (a hard frontmatter first)."""


def is_instruction_path(path: str, globs: Sequence[str] = DEFAULT_INSTRUCTION_NOTES) -> bool:
    """True when the relative POSIX ``path`` matches one of ``globs`` (any case): "AGENTS.md", "docs/claude.md";
    never when a ``!`` glob of ``globs`` matches it (a note botbin writes: ``is_botbin_note``)."""
    return bool(globs) and wglob.globmatch(path, list(globs), flags=_GLOB_FLAGS)


def is_botbin_note(path: str, globs: Sequence[str] = DEFAULT_INSTRUCTION_NOTES) -> bool:
    """True when a ``!`` glob of ``globs`` (``Settings.instruction_globs``) names ``path``: a note botbin writes
    itself, memory whatever its name or frontmatter."""
    vetoes = [g[1:] for g in globs if g.startswith("!") and len(g) > 1]
    return bool(vetoes) and wglob.globmatch(path, vetoes, flags=_GLOB_FLAGS & ~wglob.NEGATE)


def is_instruction_note(note: ParsedNote, globs: Sequence[str] = DEFAULT_INSTRUCTION_NOTES) -> bool:
    """True for a note whose path matches ``globs`` (``Settings.instruction_globs``) or whose frontmatter says
    ``botbin: instructions``; never for a note botbin writes itself (``is_botbin_note``)."""
    marker = note.frontmatter.data.get("botbin")
    marked = marker == "instructions" or (isinstance(marker, list) and "instructions" in marker)
    return (marked and not is_botbin_note(note.path, globs)) or is_instruction_path(note.path, globs)


def block_cues(block: Block, instruction: bool) -> list[Cue]:
    """The lexer's cues in ``block`` that make it a directive: every cue in an instruction note, only the
    obligations and prohibitions of the ordinary register elsewhere; none for headings, code and tables."""
    if block.kind not in _LEXED_KINDS:
        return []
    cues = lex(block.text, instructions=instruction)
    return cues if instruction else [c for c in cues if c.modality in RULE_MODALITIES]


def _action(text: str, cue: Cue) -> str:
    words = text[cue.action_start : cue.sentence_end].split()
    return " ".join(words)


def _rule_cues(block_text: str, start_line: int, cues: list[Cue]) -> tuple[RuleCue, ...]:
    out: list[RuleCue] = []
    line, counted = start_line, 0
    for c in cues:  # cues come in text order: count newlines from the previous cue, not from the start
        line += block_text.count("\n", counted, c.start)
        counted = c.start
        out.append(RuleCue(c.modality, c.cue, line, c.positive, _action(block_text, c)))
    return tuple(out)


def _block_kind(block: Block, instruction: bool, has_cues: bool) -> Kind:
    if instruction and block.kind == "list_item":
        return "hard"
    if instruction and block.kind == "quote":
        return "soft"
    return "soft" if has_cues and block.kind in _LEXED_KINDS else "lore"


def partition_note(
    note: ParsedNote, source: str | None = None, instruction_globs: Sequence[str] = DEFAULT_INSTRUCTION_NOTES
) -> Partition:
    """Kinds of the blocks of ``note`` and its directives; ``source`` (the note's LF text) adds a hard frontmatter.

    ``instruction_globs``: the ``instruction_notes`` setting. Deterministic; never raises.
    """
    instruction = is_instruction_note(note, instruction_globs)
    kinds: list[Kind] = []
    directives: list[Directive] = []
    fm_lines = note.frontmatter_lines
    if instruction and source is not None and fm_lines and set(note.frontmatter.data) - _META_KEYS:
        text = "\n".join(source.split("\n")[fm_lines[0] : fm_lines[1]])
        directives.append(Directive(note.path, "hard", text, fm_lines[0], fm_lines[1], (), ()))
    for block in note.blocks:
        cues = block_cues(block, instruction)
        kind = _block_kind(block, instruction, bool(cues))
        kinds.append(kind)
        if kind != "lore":
            directives.append(_directive(note, block, kind, cues))
    return Partition(instruction, tuple(kinds), tuple(directives))


def block_directive(
    note: ParsedNote, index: int, instruction_globs: Sequence[str] = DEFAULT_INSTRUCTION_NOTES
) -> Directive | None:
    """The directive that block ``index`` of ``note`` is, or None for lore (the lexer runs on that block only)."""
    block = note.blocks[index]
    instruction = is_instruction_note(note, instruction_globs)
    cues = block_cues(block, instruction)
    kind = _block_kind(block, instruction, bool(cues))
    return None if kind == "lore" else _directive(note, block, kind, cues)


def _directive(note: ParsedNote, block: Block, kind: Kind, cues: list[Cue]) -> Directive:
    """Block ``block`` of ``note`` as a directive of ``kind``, with the lexer's ``cues`` located in the note."""
    return Directive(
        note.path,
        kind,
        block.text,
        block.start_line,
        block.end_line,
        block.heading_path,
        _rule_cues(block.text, block.start_line, cues),
    )


_CACHE: OrderedDict[tuple[str, str], tuple[ParsedNote, Partition | None]] = OrderedDict()
_CACHE_SIZE = 256
_CACHE_LOCK = threading.Lock()
"""Guards ``_CACHE``: the language server partitions on its event loop and on worker threads."""


def _cached(source: str, path: str) -> tuple[tuple[str, str], tuple[ParsedNote, Partition | None]]:
    from botbin.parsing import parse_note

    key = (path, hashlib.md5(source.encode("utf-8", "surrogatepass")).hexdigest())
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return key, cached
    cached = (parse_note(source, path), None)  # parsed outside the lock: a big note must not block the rest
    with _CACHE_LOCK:
        cached = _CACHE.setdefault(key, cached)
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return key, cached


def parse_source(source: str, path: str) -> ParsedNote:
    """``parse_note`` of the LF-normalized text of note ``path``, cached by (path, MD5 of the text)."""
    return _cached(source, path)[1][0]


def partition_source(
    source: str, path: str, instruction_globs: Sequence[str] = DEFAULT_INSTRUCTION_NOTES
) -> tuple[ParsedNote, Partition]:
    """Parse and partition the LF-normalized text of note ``path``; cached by (path, MD5 of the text).

    For editors: hovering over an unsaved buffer re-partitions only when the text changed. Only the partition
    under the default ``instruction_globs`` is cached (the parse always is).
    """
    key, cached = _cached(source, path)
    note, part = cached
    if tuple(instruction_globs) != DEFAULT_INSTRUCTION_NOTES:
        return note, partition_note(note, source, instruction_globs)
    if part is not None:
        return cast(tuple[ParsedNote, Partition], cached)  # the cached pair itself
    done = (note, partition_note(note, source))
    with _CACHE_LOCK:
        _CACHE[key] = done
    return done
