"""Warm answers: a running botbin server of a workspace (``botbin serve``, ``botbin lsp``, ``botbin mcp``)
listens on a Unix socket, and ``botbin search`` / ``context`` ask it before loading anything themselves.

This module is the client side and the socket's address. It imports only the standard library (no numpy, no
model runtime, no pydantic), so a warm ``botbin search`` costs a Python start and a round trip. The server side is
cli/warm_server.py.

The socket lives in ``$XDG_RUNTIME_DIR/botbin`` (else ``<tmp>/botbin-<uid>``), a folder of mode 0700 owned by
the user, named after a hash of the resolved workspace path; the socket itself is 0600. The request is one
JSON line, typed (``WarmRequest`` of wire/warm.py, mirrored in cli/host_types.py): the command line parsed with the
CLI's own flags (cli/flags.py) into the request itself (a SearchRequest or ContextRequest), the settings its flags
override and the ``BOTBIN_*`` environment (the passphrase left out); the server answers one JSON line with the exit
status and the text the command prints, or declines (another workspace, other settings, bad usage), and the command
then runs in this process. Host ops (``call``) go over the same socket as typed requests too (wire/hosts.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from botbin.cli.host_types import HOST_PROTOCOL, WARM_PROTOCOL, HostOp, WarmAnswer, WarmRequest

WARM_COMMANDS = ("search", "context")
"""Subcommands a warm server answers (read-only, no file given by path)."""
CONNECT_TIMEOUT_S = 0.2
"""Longest wait to connect: a server that does not accept by then is treated as absent."""
ANSWER_TIMEOUT_S = 300.0
"""Longest wait for the answer (the server's first call may load the model)."""
_VALUE_FLAGS = frozenset(
    [
        "--workspace",
        "-w",
        "--include",
        "--exclude",
        "--output-dir",
        "--model",
        "-k",
        "--alpha",
        "--path",
        "--tag",
        "--kind",
        "--since",
        "--until",
        "--per-note",
        "--budget",
    ]
)
"""Flags followed by a value, so that the sniffer below finds the subcommand."""
_NO_WARM_FLAGS = frozenset(("-h", "--help", "--version", "--batch"))


def runtime_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where this user's sockets live: ``$XDG_RUNTIME_DIR/botbin``, else ``<tmp>/botbin-<uid>``."""
    environ = os.environ if env is None else env
    base = environ.get("XDG_RUNTIME_DIR")
    if base and Path(base).is_dir():
        return Path(base) / "botbin"
    import tempfile  # only here: it imports shutil and random, a hook's time on every prompt

    return Path(tempfile.gettempdir()) / f"botbin-{os.getuid()}"


def socket_path(root: Path, env: Mapping[str, str] | None = None) -> Path:
    """The socket of workspace ``root`` (resolved here): one per workspace path and user."""
    key = hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:20]
    return runtime_dir(env) / f"{key}.sock"


def private_dir(folder: Path) -> bool:
    """Make ``folder`` (mode 0700) if needed; True when it is a folder of this user that nobody else may
    write to (else no socket is made or trusted there)."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def sniff(argv: Sequence[str]) -> tuple[str | None, Path]:
    """The subcommand of ``argv`` when a warm server may answer it (else None), and the workspace given by
    ``--workspace`` / ``-w`` (default: the current folder)."""
    command: str | None = None
    workspace = Path.cwd()
    items = list(argv)
    i = 0
    while i < len(items):
        item = items[i]
        name, eq, value = item.partition("=")
        if name in _NO_WARM_FLAGS or item == "--":
            return None, workspace
        if item.startswith("-") and name in _VALUE_FLAGS:
            if not eq:
                i += 1
                value = items[i] if i < len(items) else ""
            if name in ("--workspace", "-w"):
                workspace = Path(value)
        elif not item.startswith("-") and command is None:
            command = item
        i += 1
    return (command if command in WARM_COMMANDS else None), workspace


def request(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | None = None) -> WarmRequest | None:
    """The warm request of command line ``argv`` (run in folder ``cwd``, default the current one), or None when it
    is no command a server answers (another subcommand, ``--batch``, a usage error: the command reports it)."""
    import argparse

    from botbin.cli.flags import context_fields, search_fields, setting_overrides, warm_parser

    try:
        args, extra = warm_parser().parse_known_args(list(argv))
    except argparse.ArgumentError:
        return None
    if extra or getattr(args, "batch", None) is not None:
        return None
    environ = os.environ if env is None else env
    here = Path.cwd() if cwd is None else cwd
    message: WarmRequest = {
        "v": WARM_PROTOCOL,
        "command": args.subcommand,
        "workspace": str((here / getattr(args, "workspace", Path("."))).resolve()),
        "settings": _camel(setting_overrides(args)),  # type: ignore[typeddict-item]
        "env": {k: v for k, v in environ.items() if k.startswith("BOTBIN_") and k != "BOTBIN_PASSPHRASE"},
        "asJson": bool(args.json),
    }
    if args.subcommand == "search":
        message["search"] = _camel(search_fields(args))  # type: ignore[typeddict-item]
    else:
        message["context"] = _camel(context_fields(args))  # type: ignore[typeddict-item]
    return message


def _camel(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` with the wire's camelCase keys, nested mappings too."""

    def camel(name: str) -> str:
        head, *rest = name.split("_")
        return head + "".join(part.title() for part in rest)

    return {camel(k): _camel(v) if isinstance(v, Mapping) else v for k, v in fields.items()}


def ask(path: Path, message: Mapping[str, Any] | None) -> WarmAnswer | None:
    """Send ``message`` to the server at ``path`` and return its answer; None when no server answers (or
    its folder is missing or not private), or there is no message (``request`` found no warm command)."""
    if message is None or not path.parent.is_dir() or not private_dir(path.parent):
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_TIMEOUT_S)
            sock.connect(str(path))
            sock.settimeout(ANSWER_TIMEOUT_S)
            try:
                sock.sendall(json.dumps(message).encode() + b"\n")
                sock.shutdown(socket.SHUT_WR)
            except (BrokenPipeError, ConnectionResetError):
                pass  # a busy server answers and closes without reading: its answer is still there to read
            data = _read_all(sock)
        answer = json.loads(data)
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None  # type: ignore[return-value]


def _read_all(sock: socket.socket) -> bytes:
    """What the server sends until it closes; a reset after its answer (a busy server closes without reading the
    request) ends the answer, it does not lose it."""
    chunks: list[bytes] = []
    try:
        while chunk := sock.recv(1 << 16):
            chunks.append(chunk)
    except ConnectionResetError:
        if not chunks:
            raise
    return b"".join(chunks)


class NoServer(Exception):
    """No server answers for the workspace (none runs, or its folder is not private)."""


class CallFailed(Exception):
    """A server took the request but gave no usable answer in time (the message says why)."""


def call(root: Path, op: HostOp, params: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
    """The answer of the server of workspace ``root`` to host op ``op`` (``{"v", "ok", ...}``: wire/hosts.py),
    within ``timeout_s`` seconds. Raises NoServer, CallFailed."""
    path = socket_path(root)
    if not path.parent.is_dir() or not private_dir(path.parent):
        raise NoServer(f"no server for {root}")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(min(CONNECT_TIMEOUT_S, timeout_s))
        try:
            sock.connect(str(path))
        except OSError as exc:
            raise NoServer(f"no server for {root} at {path}") from exc
        sock.settimeout(timeout_s)
        try:
            sock.sendall(json.dumps({"v": HOST_PROTOCOL, "op": op, **params}).encode() + b"\n")
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # a busy server answers and closes without reading: its answer is read below
        try:
            data = _read_all(sock)
        except TimeoutError as exc:
            raise CallFailed(f"no answer within {timeout_s:g} s") from exc
        except OSError as exc:
            raise CallFailed(f"the server went away ({exc})") from exc
    try:
        answer = json.loads(data)
    except ValueError as exc:
        raise CallFailed("the server's answer is not JSON (it stopped mid-answer?)") from exc
    if isinstance(answer, dict) and answer.get("reason") == "busy":
        raise CallFailed("the server is busy (every connection taken)")
    if not isinstance(answer, dict) or answer.get("v") != HOST_PROTOCOL or not isinstance(answer.get("ok"), bool):
        raise CallFailed(f"the server speaks another protocol (answer {str(answer)[:80]})")
    return answer


def try_warm(argv: Sequence[str]) -> int | None:
    """Run ``argv`` on the workspace's warm server and print its output; the exit status, or None when no
    server answered it (then the caller runs the command itself)."""
    if os.environ.get("BOTBIN_NO_SERVER"):
        return None
    command, workspace = sniff(argv)
    message = request(argv) if command is not None else None
    if message is None:
        return None
    path = socket_path(workspace)
    answer = ask(path, message)
    verbose = "-v" in argv or "--verbose" in argv
    if answer is None or answer.get("served") is not True:
        if verbose and answer is not None:
            print(f"botbin: the server at {path} declined ({answer.get('reason')}); answering here", file=sys.stderr)
        return None
    if verbose:
        print(f"botbin: answered by the server at {path} (pid {answer.get('pid')})", file=sys.stderr)
    sys.stderr.write(str(answer.get("stderr", "")))
    sys.stdout.write(str(answer.get("stdout", "")))
    code = answer.get("code")
    return code if isinstance(code, int) else 1
