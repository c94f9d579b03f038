"""The real Claude Code for the end-to-end tests: found in the cache that scripts/claude-code/install.sh fills
(``$XDG_CACHE_HOME/botbin-hosts/claude-code``, or BOTBIN_CLAUDE_CODE), run as ``claude -p`` with stream-json input
(one prompt at a time, as a person types them) against a ScriptedModel, with botbin's plugin loaded by
``--plugin-dir`` and a ``botbin`` on PATH that runs this checkout. Everything it writes lives in a temporary HOME;
every request it makes goes to 127.0.0.1 (a proxy that answers nothing catches any other)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import REPO

VERSION = "2.1.332"
"""The Claude Code version the tests install and run."""
PLUGIN = REPO / "extensions" / "claude-code"


def claude_binary() -> Path | None:
    """The installed ``claude``, or None."""
    base = os.environ.get("BOTBIN_CLAUDE_CODE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "botbin-hosts" / "claude-code"
    )
    binary = Path(base) / "node_modules" / ".bin" / "claude"
    return binary if binary.exists() else None


def botbin_on_path(folder: Path) -> Path:
    """A folder with a ``botbin`` that runs this checkout's code with this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "botbin"
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO / "server"}" exec "{sys.executable}" -m botbin "$@"\n')
    script.chmod(0o755)
    return folder


@dataclass
class Host:
    """One test's Claude Code environment: a fresh HOME, a private runtime folder, a workspace."""

    root: Path
    model_url: str
    workspace: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = self.root / "project"
        for folder in (self.home, self.runtime, self.workspace):
            folder.mkdir(parents=True, exist_ok=True)
        self.runtime.chmod(0o700)
        botbin_on_path(self.root / "bin")

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def runtime(self) -> Path:
        return self.root / "run"

    def env(self, botbin: bool = True, **extra: str) -> dict[str, str]:
        """The environment of ``claude`` (and so of its hooks); ``botbin=False``: no botbin on PATH."""
        keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TERM", "TMPDIR")}
        path = ([str(self.root / "bin")] if botbin else []) + ["/usr/local/bin", "/usr/bin", "/bin"]
        return {
            **keep,
            "HOME": str(self.home),
            "PATH": os.pathsep.join(path),
            "XDG_RUNTIME_DIR": str(self.runtime),
            "ANTHROPIC_BASE_URL": self.model_url,
            "ANTHROPIC_API_KEY": "test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "HTTPS_PROXY": "http://127.0.0.1:9",  # a port nothing listens on: any request elsewhere fails
            "HTTP_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
            "BOTBIN_HOOK_IDLE_EXIT_S": "120",  # a server a test left behind goes away by itself
            "BOTBIN_HOOK_PROMPT_TIMEOUT_S": "10",  # two loaded cores: the first recall may wait for the model
            **extra,
        }

    def server_pid(self) -> int | None:
        """The pid of the workspace's botbin server, from a warm search it answers; None when none answers."""
        from botbin.cli.warm import ask, request, socket_path

        answer = ask(
            socket_path(self.workspace, {"XDG_RUNTIME_DIR": str(self.runtime)}),
            request(["search", "pid", "-w", str(self.workspace)], env={}),
        )
        pid = answer.get("pid") if answer and answer.get("served") else None
        return pid if isinstance(pid, int) else None

    def stop_server(self) -> None:
        """SIGTERM the workspace's server (it distils what it buffered) and wait for it to go."""
        pid = self.server_pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.1)


class Session:
    """One ``claude -p`` session fed prompt by prompt; ``hooks`` records every hook's response event."""

    def __init__(self, binary: Path, host: Host, env: dict[str, str], *args: str, plugin_dir: bool = True) -> None:
        """``plugin_dir``: load the plugin with ``--plugin-dir`` (False: as installed in the host's HOME)."""
        command = [str(binary), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                   "--include-hook-events", *(["--plugin-dir", str(PLUGIN)] if plugin_dir else []), *args]  # fmt: skip
        self.proc = subprocess.Popen(
            command, cwd=host.workspace, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.hooks: list[dict[str, Any]] = []
        self.session_id: str | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _event(self, line: str) -> dict[str, Any]:
        event: dict[str, Any] = json.loads(line)
        self.session_id = event.get("session_id", self.session_id)
        if event.get("type") == "system" and event.get("subtype") == "hook_response":
            self.hooks.append(event)
        return event

    def say(self, prompt: str, timeout_s: float = 180.0) -> dict[str, Any]:
        """Send ``prompt``; the turn's ``result`` event."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout_s
        while True:
            line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"claude ended mid-turn: {self.stderr()}")
            event = self._event(line)
            if event.get("type") == "result":
                return event

    def close(self, timeout_s: float = 120.0) -> int:
        """End the session (SessionEnd runs); its exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout_s)
        while (line := self._lines.get(timeout=10)) is not None:
            self._event(line)
        return code

    def stderr(self) -> str:
        return self.proc.stderr.read() if self.proc.stderr and self.proc.poll() is not None else ""

    def hook_lines(self, event: str) -> list[str]:
        """The stderr lines of the ``event`` hooks so far."""
        return [line for h in self.hooks if h.get("hook_event") == event for line in str(h.get("stderr")).splitlines()]
