"""``botbin hook EVENT``: the Claude Code hooks (extensions/claude-code/hooks/hooks.json). Reads the hook's JSON on
stdin, asks the workspace's warm server (cli/warm.py ``call``: the typed host ops, cli/host_types.py) and prints
what Claude Code expects on stdout. Standard library only: a prompt's hook costs a Python start and one round trip.

- ``SessionStart``: starts the workspace's server (a detached ``botbin serve``) unless one answers, then prints the
  hard rules, preferences and recent tail (``session_context``) as ``additionalContext``.
- ``UserPromptSubmit``: the memories relevant to the prompt (``recall``); nothing when nothing clears the floor.
- ``Stop``, ``PreCompact``, ``SessionEnd``: the transcript's new turns (cli/transcript.py) into the conversation
  pipeline (``ingest``); the last two distil every buffered turn too. Where to read on from is kept per
  transcript in the private runtime folder, and moves past a turn only once the server has it on disk.

Never fails the host's turn: every problem (no server, a time limit, a locked store, a bad answer) is one line on
stderr, and the exit status is 0. Settings: environment variables (HookSettings).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from botbin.cli.host_types import HostOp, IngestTurn
from botbin.cli.warm import CallFailed, NoServer, call, private_dir, runtime_dir, socket_path

if TYPE_CHECKING:
    from botbin.cli.transcript import TranscriptRead, TranscriptTurn

# A prompt's hook pays for every import: the capture events' modules (the transcript reader, dataclasses, fcntl)
# and subprocess (a server start) are imported where they are used.

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
#: What a problem costs the user, by event (the end of the log line).
CONSEQUENCE = {
    "SessionStart": "the session starts without botbin's rules",
    "UserPromptSubmit": "no memories for this prompt",
}
#: Turns sent per ``ingest`` request (the server reads at most 1 MiB a request).
BATCH_TURNS = 100
BATCH_BYTES = 400_000
POLL_S = 0.05
#: Characters of a prompt a recall is asked with at most (a request is at most 1 MiB; the model reads 256 tokens).
MAX_PROMPT_CHARS = 20_000
#: The largest read offset kept for a transcript (a signed 64-bit file offset).
MAX_OFFSET = 2**63 - 1
#: Bytes of the offsets file read at most.
MAX_OFFSETS_BYTES = 16 << 20
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class HookProblem(Exception):
    """What went wrong, in words for the one log line."""


class HookSettings(NamedTuple):
    """The hooks' settings, from the environment (Claude Code's settings.json ``env`` sets them)."""

    workspace: Path
    """BOTBIN_WORKSPACE, else Claude Code's CLAUDE_PROJECT_DIR, else the hook's ``cwd``."""
    session_budget: int = 1500
    """BOTBIN_HOOK_SESSION_BUDGET: tokens of the rules and recent tail a session starts with."""
    recall_budget: int = 600
    """BOTBIN_HOOK_RECALL_BUDGET: tokens of the memories added to a prompt."""
    recall_k: int = 5
    """BOTBIN_HOOK_RECALL_K: memories added to a prompt at most."""
    start_s: float = 10.0
    """BOTBIN_HOOK_START_S: seconds a SessionStart (or a capture) waits for a server it started."""
    prompt_timeout_s: float = 2.0
    """BOTBIN_HOOK_PROMPT_TIMEOUT_S: the prompt's time limit for the recall."""
    capture_timeout_s: float = 20.0
    """BOTBIN_HOOK_CAPTURE_TIMEOUT_S: the time limit of each capture request."""
    idle_exit_s: float = 3600.0
    """BOTBIN_HOOK_IDLE_EXIT_S: a server the hooks started stops after this long without a request (0: never)."""
    user: str | None = None
    """BOTBIN_HOOK_USER: whose soul file the conversation goes to (default ``user``)."""


def settings_from(env: Mapping[str, str], payload: Mapping[str, Any]) -> HookSettings:
    """The settings of ``env``; a value that is not a positive number keeps its default (and says so)."""
    where = env.get("BOTBIN_WORKSPACE") or env.get("CLAUDE_PROJECT_DIR") or str(payload.get("cwd") or os.getcwd())
    numbers: dict[str, Any] = {}
    fields = {"session_budget": int, "recall_budget": int, "recall_k": int, "start_s": float,
              "prompt_timeout_s": float, "capture_timeout_s": float, "idle_exit_s": float}  # fmt: skip
    for name, kind in fields.items():
        raw = env.get(f"BOTBIN_HOOK_{name.upper()}")
        if raw is None:
            continue
        try:
            value = kind(raw)
            if value < 0 or (value == 0 and name != "idle_exit_s"):
                raise ValueError(raw)
            numbers[name] = value
        except ValueError:
            _log("settings", f"BOTBIN_HOOK_{name.upper()}={raw!r} is not a positive number; using the default")
    return HookSettings(Path(where).resolve(), user=env.get("BOTBIN_HOOK_USER") or None, **numbers)


def _log(event: str, message: str) -> None:
    """One line on stderr, which Claude Code may show in the terminal: a path's or a message's control characters
    (an escape sequence in a transcript path, a note name) are written as escapes (cli/terminal.py)."""
    from botbin.cli.terminal import shown

    print(shown(f"botbin hook {event}: {message}"), file=sys.stderr, flush=True)


# -- the server -------------------------------------------------------------------------------------
def start_server(settings: HookSettings) -> None:
    """Start ``botbin serve`` for the workspace, detached (its own session; its log beside its socket)."""
    sock = socket_path(settings.workspace)
    if not private_dir(sock.parent):
        raise HookProblem(f"{sock.parent} is not a private folder of this user; no server started")
    log_path = sock.with_suffix(".log")
    command = [sys.executable, "-m", "botbin", "serve", "-w", str(settings.workspace)]
    command += ["--idle-exit-s", f"{settings.idle_exit_s:g}"]
    import subprocess

    with log_path.open("ab") as log:
        subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True
        )


def ask(settings: HookSettings, op: HostOp, params: Mapping[str, Any], timeout_s: float, wait_s: float) -> Any:
    """The result of ``op`` from the workspace's server; with ``wait_s`` > 0 a missing server is started and waited
    for that long. Raises HookProblem (no server, a time limit, the op's error)."""
    deadline = time.monotonic() + wait_s
    started = False
    while True:
        try:
            reply = call(settings.workspace, op, params, timeout_s)
            break
        except NoServer as exc:
            if not started:
                start_server(settings)
                started = True
            if time.monotonic() >= deadline:
                raise HookProblem(
                    f"{exc}; started one" + (f", not up within {wait_s:g} s" if wait_s else " for the next turns")
                ) from exc
            time.sleep(POLL_S)
        except CallFailed as exc:
            raise HookProblem(f"{op}: {exc}") from exc
    if not reply["ok"]:
        error = reply.get("error") or {}
        raise HookProblem(f"{op}: {error.get('kind', 'error')}: {error.get('message', 'no reason given')}")
    return reply


def _context(event: str, text: str) -> dict[str, Any] | None:
    """Claude Code's hook output that adds ``text`` to the model's context (None: nothing to add)."""
    if not text.strip():
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


# -- the events -------------------------------------------------------------------------------------
def session_start(settings: HookSettings, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    params = {"budgetTokens": settings.session_budget, "session": payload.get("session_id")}
    reply = ask(settings, "session_context", params, settings.start_s, settings.start_s)
    return _context("SessionStart", str(reply["text"]))


def user_prompt(settings: HookSettings, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    if len(prompt) > MAX_PROMPT_CHARS:  # a pasted log: its start and its end (the question) stand for it
        prompt = prompt[: MAX_PROMPT_CHARS // 2] + "\n" + prompt[-MAX_PROMPT_CHARS // 2 :]
    params = {"prompt": prompt, "budgetTokens": settings.recall_budget, "k": settings.recall_k,
              "session": payload.get("session_id")}  # fmt: skip
    reply = ask(settings, "recall", params, settings.prompt_timeout_s, 0.0)
    return _context("UserPromptSubmit", str(reply["text"]))


def capture(settings: HookSettings, payload: Mapping[str, Any], flush: bool) -> str | None:
    """Send the transcript's new turns (and with ``flush`` distil every buffered turn); why what was written is not
    indexed yet, if the server said (a locked store: the turns are in the soul file all the same)."""
    raw = payload.get("transcript_path")
    if not isinstance(raw, str) or not raw:
        raise HookProblem("no transcript_path in the hook's input; nothing captured")
    from botbin.cli.transcript import read_new

    transcript = Path(raw)
    key = f"{settings.workspace}\0{transcript}"
    with _offsets() as offsets:
        try:
            read = read_new(transcript, offsets.get(key, 0))
        except OSError as exc:
            raise HookProblem(f"cannot read {transcript} ({exc.strerror or exc}); nothing captured") from exc
        offsets[key], not_indexed = send_turns(settings, read, str(transcript), flush)
    return not_indexed


def _ingest_turn(turn: TranscriptTurn) -> IngestTurn:
    return {"role": turn.role, "content": turn.content, "id": turn.id, "timestamp": turn.timestamp,
            "session": turn.session}  # fmt: skip


def batches(turns: Sequence[TranscriptTurn]) -> Iterator[list[TranscriptTurn]]:
    """``turns`` in runs of at most BATCH_TURNS turns and about BATCH_BYTES bytes."""
    run: list[TranscriptTurn] = []
    size = 0
    for turn in turns:
        if run and (len(run) >= BATCH_TURNS or size + len(turn.content.encode("utf-8", "surrogatepass")) > BATCH_BYTES):
            yield run
            run, size = [], 0
        run.append(turn)
        size += len(turn.content.encode("utf-8", "surrogatepass"))
    if run or not turns:
        yield run


def send_turns(settings: HookSettings, read: TranscriptRead, source: str, flush: bool) -> tuple[int, str | None]:
    """Ingest ``read``'s turns (the server journals each batch before it answers); the offset to read on from next
    time (after the last batch the server took in), and why what was written is not indexed, if it said."""
    offset = read.turns[0].start if read.turns else read.end
    runs = list(batches(read.turns))
    sent = 0
    not_indexed: str | None = None
    for number, run in enumerate(runs):
        last = number == len(runs) - 1
        if not run and not (flush and last):
            continue
        params = {"turns": [_ingest_turn(t) for t in run], "source": source, "flush": flush and last,
                  "user": settings.user}  # fmt: skip
        try:
            reply = ask(settings, "ingest", params, settings.capture_timeout_s, settings.start_s)
        except HookProblem as exc:
            raise HookProblem(f"{exc}; {len(read.turns) - sent} turns left for the next hook") from exc
        sent += len(run)
        offset = read.turns[sent].start if sent < len(read.turns) else read.end
        if isinstance(reply.get("notIndexed"), str):
            not_indexed = f"turns kept in {', '.join(map(str, reply.get('written') or ()))}, {reply['notIndexed']}"
    return offset, not_indexed


@contextlib.contextmanager
def _offsets() -> Iterator[dict[str, int]]:
    """The read offsets of the transcripts (``claude-transcripts.json`` in the private runtime folder), locked
    against a concurrent hook of the same session for the block, written back after it."""
    folder = runtime_dir()
    if not private_dir(folder):
        raise HookProblem(f"{folder} is not a private folder of this user; nothing captured")
    import fcntl

    path = folder / "claude-transcripts.json"
    lock = os.open(folder / "claude-transcripts.lock", os.O_RDWR | os.O_CREAT | _NO_FOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        offsets = read_offsets(path)
        try:
            yield offsets
        finally:
            kept = {k: v for k, v in offsets.items() if Path(k.split("\0", 1)[-1]).exists()}
            temp = path.with_suffix(f".{os.getpid()}.tmp")
            with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NO_FOLLOW, 0o600), "w") as out:
                out.write(json.dumps(kept))
            os.replace(temp, path)
    finally:
        os.close(lock)


def read_offsets(path: Path) -> dict[str, int]:
    """The offsets file's entries that are a transcript key and an offset in 0..MAX_OFFSET; the rest is dropped
    (the file is read back: a damaged or planted one must not stop a capture, and a FIFO must not block one)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NO_FOLLOW)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}
            loaded = json.loads(handle.read(MAX_OFFSETS_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {k: v for k, v in loaded.items() if type(v) is int and 0 <= v <= MAX_OFFSET and "\0" in k}


def run_event(event: str, settings: HookSettings, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The hook output of ``event`` (None: print nothing). Raises HookProblem."""
    if event == "SessionStart":
        return session_start(settings, payload)
    if event == "UserPromptSubmit":
        return user_prompt(settings, payload)
    not_indexed = capture(settings, payload, flush=event in ("PreCompact", "SessionEnd"))
    if not_indexed is not None:
        _log(event, not_indexed)
    return None


def main(argv: Sequence[str]) -> int:
    """``botbin hook EVENT [--workspace DIR]``; always 0 (a hook must never fail or block the host's turn)."""
    args = list(argv)
    event = args[0] if args else ""
    if event not in EVENTS:
        _log(event or "?", f"unknown event; expected one of {', '.join(EVENTS)}")
        return 0
    env = dict(os.environ)
    if "--workspace" in args[1:-1]:
        env["BOTBIN_WORKSPACE"] = args[args.index("--workspace") + 1]
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        if not isinstance(payload, dict):
            raise ValueError("not a JSON object")
        output = run_event(event, settings_from(env, payload), payload)
    except HookProblem as exc:
        _log(event, f"{exc}" + (f"; {CONSEQUENCE[event]}" if event in CONSEQUENCE else ""))
        return 0
    except (ValueError, RecursionError) as exc:
        _log(event, f"the hook's input is not JSON ({exc}); nothing done")
        return 0
    except Exception as exc:  # a bug must not cost the user their turn either
        _log(event, f"internal error {type(exc).__name__}: {exc}; nothing done")
        return 0
    if output is not None:
        text = json.dumps(output, ensure_ascii=False)
        if not text.isascii() and _LONE_SURROGATE.search(text):  # not UTF-8: escaped, or the write would fail
            text = json.dumps(output)
        sys.stdout.write(text + "\n")
    return 0
