"""LoCoMo conversations -> markdown notes that botbin syncs into one chunk per turn window (pure, no file I/O).

This is the draft of a future ``botbin ingest`` format for chat logs: ``conversation_notes`` turns one
conversation into one note per session plus a ``botbin.toml``, and maps every turn to its (note, line), so that a
search hit's line range (0-based, end exclusive) names the turns it holds. Each window of turns sits under its own
heading, so botbin's chunker never packs two windows into one chunk (``min_tokens = 0`` keeps small windows from
being merged with their neighbour).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

#: A zero-width space: a title that is neither embedded (BERT drops format characters) nor a BM25 word, so
#: the raw layout's chunks are the turn text and nothing else.
INVISIBLE_TITLE = "\u200b"
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class Turn:
    """One dialogue turn."""

    dia_id: str
    """LoCoMo's turn id, ``D<session>:<turn>``."""
    session: int
    """Session number, from 1."""
    date: str
    """The session's date and time as written in the data, e.g. ``1:56 pm on 8 May, 2023``."""
    speaker: str
    text: str
    caption: str | None = None
    """BLIP caption of the image the speaker shared in this turn, if any (the image itself is not in the data)."""


@dataclass(frozen=True)
class Question:
    """One QA item."""

    question: str
    category: int
    """1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial."""
    evidence: tuple[str, ...]
    """Evidence turn ids as written (split on ``;``, ``,`` and spaces; some match no turn)."""


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo conversation."""

    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    """Every turn, in session and turn order."""
    questions: tuple[Question, ...]


@dataclass(frozen=True)
class Layout:
    """How turns become markdown (and so what each chunk's embedded and BM25 text holds)."""

    name: str
    window: int = 1
    """Consecutive turns of one session per chunk (windows never cross a session)."""
    speaker: bool = False
    """Write ``Name: text`` instead of the bare text."""
    captions: bool = False
    """Append ``[shares <caption>]`` to turns that shared an image."""
    session_heading: bool = False
    """Give each window the heading ``Session N · <date and time as written>``, which botbin puts in the chunk's
    heading path (so it is embedded and BM25-indexed with every chunk); otherwise an empty heading (no text)."""
    names_title: bool = False
    """Title every note ``<speaker A> and <speaker B>`` (the first part of every chunk's heading path, so embedded
    and BM25-indexed); otherwise INVISIBLE_TITLE."""


#: (a) The baseline: one chunk per turn holding the raw turn text only.
RAW = Layout("raw_turns")


@dataclass(frozen=True)
class ConversationNotes:
    """A conversation written as notes."""

    notes: tuple[tuple[str, str], ...]
    """(relative POSIX path, markdown text) per note, including ``botbin.toml`` (not a note: the settings)."""
    turn_lines: dict[str, tuple[str, int]]
    """dia_id -> (note path, 0-based line of the turn)."""
    windows: tuple[tuple[str, ...], ...]
    """The dia_ids each chunk should hold, in order (what a sync must reproduce)."""


def load_conversations(path: Path) -> list[Conversation]:
    """Parse ``locomo10.json``. Raises OSError or ValueError on an unreadable file."""
    return [_conversation(raw) for raw in json.loads(path.read_text(encoding="utf-8"))]


def _conversation(raw: dict[str, Any]) -> Conversation:
    conv = raw["conversation"]
    turns: list[Turn] = []
    session = 1
    while f"session_{session}" in conv:  # the date keys outnumber the sessions in some conversations
        date = str(conv.get(f"session_{session}_date_time", ""))
        for t in conv[f"session_{session}"]:
            caption = t.get("blip_caption")
            turns.append(
                Turn(
                    t["dia_id"],
                    session,
                    date,
                    t["speaker"],
                    t["text"],
                    caption if isinstance(caption, str) and caption.strip() else None,
                )
            )
        session += 1
    questions = tuple(
        Question(
            q["question"],
            int(q["category"]),
            tuple(e for ref in q.get("evidence", []) for e in _EVIDENCE_SPLIT.split(str(ref)) if e),
        )
        for q in raw["qa"]
    )
    return Conversation(raw["sample_id"], (conv["speaker_a"], conv["speaker_b"]), tuple(turns), questions)


def iso_date(date: str) -> str | None:
    """``1:56 pm on 8 May, 2023`` -> ``2023-05-08``; None when the text is not in that form."""
    day = " ".join(date.split(" on ", 1)[-1].replace(",", " ").split())
    try:
        return datetime.strptime(day, "%d %B %Y").date().isoformat()
    except ValueError:
        return None


def turn_line(turn: Turn, layout: Layout) -> str:
    """One turn as one markdown line (newlines in the text are flattened so the turn keeps a single line)."""
    text = " ".join(turn.text.split())
    if layout.captions and turn.caption:
        text += f" [shares {' '.join(turn.caption.split())}]"
    return f"{turn.speaker}: {text}" if layout.speaker else text


def _windows(turns: list[Turn], size: int) -> list[list[Turn]]:
    return [turns[i : i + size] for i in range(0, len(turns), max(1, size))]


def conversation_notes(conv: Conversation, layout: Layout) -> ConversationNotes:
    """One note per session (``sessions/NN.md``): frontmatter, then per window a heading and one paragraph per
    turn. Pure: the same input gives byte-identical notes, so a re-sync of an unchanged workspace is a no-op."""
    sessions: dict[int, list[Turn]] = {}
    for turn in conv.turns:
        sessions.setdefault(turn.session, []).append(turn)
    notes: list[tuple[str, str]] = [("botbin.toml", 'include = ["sessions/*.md"]\nmin_tokens = 0\n')]
    turn_lines: dict[str, tuple[str, int]] = {}
    windows: list[tuple[str, ...]] = []
    title = " and ".join(conv.speakers) if layout.names_title else INVISIBLE_TITLE
    for number, turns in sessions.items():
        path = f"sessions/{number:02d}.md"
        lines = ["---", f"title: {json.dumps(title)}"]
        day = iso_date(turns[0].date)
        lines += [f"date: {day}"] if day else []
        lines += ["---", ""]
        heading = f"## Session {number} · {turns[0].date}".rstrip(" ·") if layout.session_heading else "##"
        for window in _windows(turns, layout.window):
            lines += [heading, ""]
            for turn in window:
                turn_lines[turn.dia_id] = (path, len(lines))
                lines += [turn_line(turn, layout), ""]
            windows.append(tuple(t.dia_id for t in window))
        notes.append((path, "\n".join(lines)))
    return ConversationNotes(tuple(notes), turn_lines, tuple(windows))
