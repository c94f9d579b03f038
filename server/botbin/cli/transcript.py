"""Claude Code's session transcript (the JSONL file a hook's ``transcript_path`` names) read from a byte offset on:
the conversation's new turns, and where each one's line starts. Standard library only (cli/hook.py's path).

A turn is a ``user`` line whose message is the person's own words, or the text of an ``assistant`` line (its
thinking and tool calls left out). Left out too: tool results, lines Claude Code marks ``isMeta``, ``isSidechain``
(a subagent's), ``isCompactSummary`` or ``isVisibleInTranscriptOnly`` (a compaction's summary repeats what was
said), slash-command echoes (``<command-name>``, ``<local-command-stdout>``), and ``<system-reminder>`` blocks. A
last line without its newline is being written: it is left for the next read. Compaction appends to the same
file, so reading on from the offset captures each turn once; a resumed or forked session's copied lines keep their
uuids, which the server's ledger has already (agent/ledger.py).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Characters of one turn sent at most (a pasted log is cut; the transcript keeps it whole).
MAX_TURN_CHARS = 20_000
#: Bytes of a transcript read by one hook at most (a long session's first capture goes on in the next ones).
MAX_READ_BYTES = 32 << 20
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_COMMAND_ECHO = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>",
                 "<local-command-caveat>")  # fmt: skip
_SKIP_FLAGS = ("isMeta", "isSidechain", "isCompactSummary", "isVisibleInTranscriptOnly")


@dataclass(frozen=True)
class TranscriptTurn:
    """One turn of the conversation."""

    id: str
    """The line's ``uuid``."""
    role: str
    """``user`` or ``assistant``."""
    content: str
    """The words (at most MAX_TURN_CHARS)."""
    timestamp: str | None
    session: str | None
    """The line's ``sessionId``."""
    start: int
    """Byte offset of the turn's line in the file."""


@dataclass(frozen=True)
class TranscriptRead:
    """What one read found."""

    turns: tuple[TranscriptTurn, ...]
    end: int
    """Byte offset after the last complete line read (where the next read starts)."""
    restarted: bool = False
    """True when the file was shorter than the offset (replaced): it was read from its start."""


def _text(content: Any, role: str) -> str:
    if isinstance(content, str):
        return content if role == "user" else ""
    if not isinstance(content, list):
        return ""
    parts = [p for p in content if isinstance(p, dict)]
    if any(p.get("type") == "tool_result" for p in parts):
        return ""
    return "\n".join(p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str))


def turn_of(obj: Any, start: int) -> TranscriptTurn | None:
    """The turn of one decoded transcript line, None when the line is not one (see the module docstring)."""
    if not isinstance(obj, dict) or obj.get("type") not in ("user", "assistant"):
        return None
    if any(obj.get(flag) for flag in _SKIP_FLAGS):
        return None
    message, uuid = obj.get("message"), obj.get("uuid")
    if not isinstance(message, dict) or not isinstance(uuid, str):
        return None
    role = str(message.get("role") or obj["type"])
    text = _REMINDER.sub("", _text(message.get("content"), role)).strip()
    if not text or text.startswith(_COMMAND_ECHO):
        return None
    stamp, session = obj.get("timestamp"), obj.get("sessionId")
    return TranscriptTurn(
        uuid,
        role,
        text[:MAX_TURN_CHARS],
        stamp if isinstance(stamp, str) else None,
        session if isinstance(session, str) else None,
        start,
    )


def read_new(path: Path, offset: int) -> TranscriptRead:
    """The turns of transcript ``path`` after byte ``offset`` (at most MAX_READ_BYTES of it: the next read goes on
    from there). A line that is not JSON is skipped (the file is the host's; nothing here can mend it). Raises
    OSError if the file cannot be read, or is no regular file (a FIFO or a device would block or never end)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        size = handle.seek(0, 2)
        restarted = offset > size
        start = 0 if restarted else offset
        handle.seek(start)
        data = handle.read(min(size - start, MAX_READ_BYTES))
    complete = data[: data.rfind(b"\n") + 1]
    if not complete and len(data) == MAX_READ_BYTES:  # one line longer than a whole read: passed over, not waited on
        complete = data
    turns: list[TranscriptTurn] = []
    at = start
    for line in complete.splitlines(keepends=True):
        if line.strip():
            try:
                turn = turn_of(json.loads(line), at)
            except (ValueError, RecursionError):
                turn = None
            if turn is not None:
                turns.append(turn)
        at += len(line)
    return TranscriptRead(tuple(turns), start + len(complete), restarted)
