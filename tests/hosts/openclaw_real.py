"""Run the real OpenClaw for the end-to-end tests: OpenClaw 2026.9.6 on Node 24.21.0 (installed by
scripts/openclaw-real/install.sh, cached outside the clone), with a home, config and state of its own, the model
provider pointed at a scripted model on 127.0.0.1, update checks and the remote model catalog off, and
tests/hosts/netguard.mjs loaded into every Node process so that any connection beyond 127.0.0.1 is refused and
recorded. The botbin context engine is this checkout's extensions/openclaw (built here), selected by
``plugins.slots.contextEngine``. Every process is started here and stopped by its id."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hosts.scripted_openai import ScriptedModel

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("BOTBIN_OPENCLAW_REAL") or Path.home() / ".cache" / "botbin-hosts" / "openclaw")
NODE_VERSION = "24.21.0"
OPENCLAW_VERSION = "2026.9.6"
NODE_BIN = CACHE / "node_modules" / "node" / "bin"
OPENCLAW = CACHE / "node_modules" / ".bin" / "openclaw"
INSTALLED = CACHE / f".installed-{OPENCLAW_VERSION}-node-{NODE_VERSION}"
PLUGIN = REPO / "extensions" / "openclaw"
NETGUARD = Path(__file__).with_name("netguard.mjs")
BOTBIN = Path(sys.executable).with_name("botbin")
"""This venv's botbin (it honours PYTHONPATH, which points the server at this checkout)."""
TURN_TIMEOUT_S = 240.0
GATEWAY_TOKEN = "botbin-test-token"


def installed() -> bool:
    """True when scripts/openclaw-real/install.sh has run."""
    return INSTALLED.is_file() and OPENCLAW.exists()


def build_plugin() -> Path:
    """Build extensions/openclaw/dist/index.js (esbuild, seconds) and return the plugin's folder."""
    subprocess.run(["node", "esbuild.mjs"], cwd=PLUGIN, check=True, timeout=300)
    return PLUGIN


@dataclass
class Turn:
    """One ``openclaw agent`` turn."""

    code: int
    """Its exit status."""
    stdout: str
    """The reply as printed."""
    stderr: str
    """OpenClaw's log lines (the engine's included)."""
    seconds: float
    """Wall time."""

    def botbin_lines(self) -> list[str]:
        """The log lines the botbin engine wrote."""
        return [line for line in self.stderr.splitlines() if "botbin:" in line]


@dataclass
class OpenClawHome:
    """An isolated OpenClaw: its home, config, agent workspace and state, talking to ``model``."""

    root: Path
    model: ScriptedModel
    notes: Path
    """The botbin workspace (notes folder) the engine serves."""
    engine: dict[str, Any] = field(default_factory=dict)
    """The engine's settings (plugins.entries.botbin.config), beyond workspace and botbinPath."""
    context_window: int | None = None
    """The scripted model's context window in tokens (None: OpenClaw's default)."""
    env_extra: dict[str, str] = field(default_factory=dict)
    gateway_port: int | None = None
    """Where this home's Gateway listens (set by ``gateway()``); turns then go through it instead of ``--local``."""

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def agent_workspace(self) -> Path:
        """OpenClaw's own agent workspace (empty: the memory comes from botbin, not from files OpenClaw injects)."""
        return self.root / "agent-workspace"

    @property
    def config_path(self) -> Path:
        return self.root / "openclaw.json"

    @property
    def netguard_log(self) -> Path:
        return self.root / "netguard.jsonl"

    @property
    def log_path(self) -> Path:
        """OpenClaw's file log (JSON lines; its info lines, the engine's included, go only there)."""
        return self.root / "openclaw.log"

    def log_lines(self, needle: str) -> list[str]:
        """The messages of the file log that contain ``needle``."""
        if not self.log_path.is_file():
            return []
        return [line for line in self.log_path.read_text(errors="replace").splitlines() if needle in line]

    @property
    def runtime_dir(self) -> Path:
        """XDG_RUNTIME_DIR of OpenClaw and of the botbin server it starts (where the socket lives)."""
        return self.root / "run"

    @property
    def state_dir(self) -> Path:
        """The engine's folder for this workspace (spool, session, compactions, serve.log) is below this one."""
        return self.home / ".openclaw" / "agents" / "main" / "agent" / "botbin"

    def write(self) -> None:
        """Write the config and make the folders."""
        for folder in (self.home, self.agent_workspace):
            folder.mkdir(parents=True, exist_ok=True)
        self.runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        model_entry: dict[str, Any] = {"id": "scripted", "name": "Scripted"}
        if self.context_window is not None:
            model_entry["contextWindow"] = self.context_window
            model_entry["maxTokens"] = 1000
        engine = self.engine_config()
        config = {
            "update": {"checkOnStart": False},
            "logging": {"file": str(self.log_path)},
            "agents": {
                "defaults": {
                    "model": {"primary": "scripted/scripted"},
                    "workspace": str(self.agent_workspace),
                    "skipBootstrap": True,
                    "heartbeat": {"every": "0m"},
                }
            },
            "tools": {"profile": "minimal"},
            "plugins": {
                "allow": ["botbin"],
                "load": {"paths": [str(PLUGIN)]},
                "slots": {"memory": "none", "contextEngine": "botbin"},
                "entries": {"botbin": {"enabled": True, "config": engine}},
            },
            "models": {
                "mode": "merge",
                "catalogRefresh": {"enabled": False},
                "providers": {
                    "scripted": {
                        "baseUrl": self.model.base_url,
                        "apiKey": "test",
                        "api": "openai-completions",
                        "models": [model_entry],
                    }
                },
            },
        }
        if self.gateway_port is not None:
            auth = {"mode": "token", "token": GATEWAY_TOKEN}
            config["gateway"] = {"mode": "local", "bind": "loopback", "port": self.gateway_port, "auth": auth}
        self.config_path.write_text(json.dumps(config, indent=1))

    def install_plugin(self) -> None:
        """Install the engine the way a user does, ``openclaw plugins install -l`` (which writes load.paths, the
        entry and the contextEngine slot into the config), over a config without them; then set the engine's
        settings in its entry."""
        self.write()
        config = json.loads(self.config_path.read_text())
        del config["plugins"]["load"], config["plugins"]["entries"], config["plugins"]["slots"]["contextEngine"]
        self.config_path.write_text(json.dumps(config, indent=1))
        argv = [str(OPENCLAW), "plugins", "install", "-l", "--force", "--accept-capabilities", str(PLUGIN)]
        done = subprocess.run(argv, env=self.env(), capture_output=True, text=True, timeout=TURN_TIMEOUT_S)
        assert done.returncode == 0, done.stdout + done.stderr
        config = json.loads(self.config_path.read_text())
        assert config["plugins"]["slots"]["contextEngine"] == "botbin", config
        assert config["plugins"]["load"]["paths"] == [str(PLUGIN)], config
        config["plugins"]["entries"]["botbin"]["config"] = self.engine_config()
        self.config_path.write_text(json.dumps(config, indent=1))

    def engine_config(self) -> dict[str, Any]:
        """plugins.entries.botbin.config."""
        return {"workspace": str(self.notes), "botbinPath": str(BOTBIN), **self.engine}

    def env(self) -> dict[str, str]:
        """The environment of OpenClaw (and so of the botbin server the engine starts)."""
        keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TZ", "BOTBIN_EMBED_BACKEND")}
        return {
            **keep,
            "PATH": f"{NODE_BIN}:{BOTBIN.parent}:/usr/bin:/bin",
            "HOME": str(self.home),
            "OPENCLAW_HOME": str(self.home),
            "OPENCLAW_CONFIG_PATH": str(self.config_path),
            "OPENCLAW_NO_AUTO_UPDATE": "1",
            "NO_COLOR": "1",
            "OPENCLAW_DISABLE_BONJOUR": "1",
            "NODE_OPTIONS": f"--import={NETGUARD.as_uri()}",
            "BOTBIN_NETGUARD_LOG": str(self.netguard_log),
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
            "PYTHONPATH": str(REPO / "server"),
            "OPENCLAW_GATEWAY_TOKEN": GATEWAY_TOKEN,
            **self.env_extra,
        }

    def turn(self, message: str, session: str = "main", timeout_s: float = TURN_TIMEOUT_S) -> Turn:
        """One turn in session ``agent:main:<session>``: through the Gateway when one runs (``gateway()``), else
        embedded (``openclaw agent --local``, a process of its own)."""
        local = [] if self.gateway_port is not None else ["--local"]
        argv = [str(OPENCLAW), "agent", *local, "--agent", "main", "--session-key", f"agent:main:{session}"]
        started = time.monotonic()
        done = subprocess.run(
            [*argv, "--message", message],
            cwd=self.agent_workspace,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        return Turn(done.returncode, done.stdout, done.stderr, time.monotonic() - started)

    def outside_attempts(self) -> list[dict[str, Any]]:
        """Every connection or lookup beyond 127.0.0.1 that netguard refused."""
        if not self.netguard_log.is_file():
            return []
        return [json.loads(line) for line in self.netguard_log.read_text().splitlines() if line.strip()]


def socket_of(home: OpenClawHome) -> Path:
    """The botbin socket of the home's notes (cli/warm.py's rule, under the home's XDG_RUNTIME_DIR)."""
    from botbin.cli.warm import socket_path

    return socket_path(home.notes, {"XDG_RUNTIME_DIR": str(home.runtime_dir)})


@contextmanager
def botbin_server(
    home: OpenClawHome, env: Mapping[str, str] | None = None, wait_s: float = 180.0
) -> Iterator[subprocess.Popen[str]]:
    """``botbin serve`` on the home's notes, started here and stopped by its id at the end of the block; waits until
    its socket answers."""
    log = (home.root / "serve.log").open("a")
    proc = subprocess.Popen(
        [str(BOTBIN), "serve", "--workspace", str(home.notes)],
        env={**home.env(), **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for_socket(home, proc, wait_s)
        wait_until_warm(home, wait_s)
        yield proc
    finally:
        stop(proc)
        log.close()


def wait_for_socket(home: OpenClawHome, proc: subprocess.Popen[str] | None, wait_s: float) -> None:
    """Wait until a botbin server answers on the home's socket (or ``proc`` exits: AssertionError with its log)."""
    path = socket_of(home)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if path.exists():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"botbin serve exited {proc.returncode}: {(home.root / 'serve.log').read_text()}")
        time.sleep(0.2)
    raise AssertionError(f"no botbin socket at {path} after {wait_s} s")


def ask(home: OpenClawHome, message: dict[str, Any], timeout_s: float = 60.0) -> dict[str, Any]:
    """One host op on the home's botbin socket (the engine's wire, from Python)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(socket_of(home)))
        sock.sendall(json.dumps(message).encode() + b"\n")
        sock.shutdown(socket.SHUT_WR)
        data = b"".join(iter(lambda: sock.recv(1 << 16), b""))
    return dict(json.loads(data))


def wait_until_warm(home: OpenClawHome, wait_s: float) -> None:
    """Wait until the server has its index and model (an ``assemble`` answers, not indexing): the tests that need a
    warm server start from one, as a user's long-running server is."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        answer = ask(home, {"v": 1, "op": "assemble", "budgetTokens": 200, "prompt": "warm-up"}, wait_s)
        if not answer.get("ok") or not answer.get("indexing"):
            return  # warm, or an answer the test is about (a locked store)
        time.sleep(0.5)
    raise AssertionError(f"botbin serve still indexing after {wait_s} s")


def stop(proc: subprocess.Popen[str]) -> None:
    """Stop a process started here (its own process group), by its id."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
