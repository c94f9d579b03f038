"""Warm answers (issue 21): a real ``botbin serve`` process answers ``botbin search`` over its Unix socket with
the hits the command finds in-process; the socket is private; another workspace or other settings are
answered in-process; a dead server's socket is a fallback, then cleaned up. About 40 s (two model loads)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from botbin.cli.warm import ask, request, socket_path
from botbin.cli.warm_server import MAX_CONNECTIONS, READ_TIMEOUT_S, WarmServer
from botbin.embedding import SentenceTransformerEmbedder
from botbin.service import MemoryService
from botbin.wire.warm import WARM_PROTOCOL
from conftest import REPO

QUERY = "which message broker carries the alerts"


@pytest.fixture(scope="module")
def runtime() -> Iterator[Path]:
    """A short private XDG_RUNTIME_DIR (a socket path has at most 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="bbw", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _env(runtime: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}
    return {**env, "XDG_RUNTIME_DIR": str(runtime), **extra}


def botbin(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botbin", *args], capture_output=True, text=True, env=env, timeout=600, check=False
    )


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory, real_embedder: SentenceTransformerEmbedder) -> Path:
    root = tmp_path_factory.mktemp("warm") / "workspace"
    shutil.copytree(REPO / "examples" / "workspace", root, ignore=shutil.ignore_patterns("aifbin"))
    assert not MemoryService(root, embedder=real_embedder, env={}).sync().failed
    return root


@pytest.fixture(scope="module")
def server(ws: Path, runtime: Path) -> Iterator[subprocess.Popen[str]]:
    """``botbin serve`` on ``ws``, up once it says it serves."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "botbin", "serve", "-w", str(ws)],
        stderr=subprocess.PIPE,
        text=True,
        env=_env(runtime),
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("botbin: serving"):
            break
    else:
        pytest.fail(f"botbin serve ended with {proc.wait()}")
    yield proc
    if proc.poll() is None:
        proc.terminate()
        proc.wait(30)


def _hits(out: str) -> list[tuple[str, int, int]]:
    return [(h["path"], h["startLine"], h["endLine"]) for h in json.loads(out)["hits"]]


@pytest.mark.model
def test_search_is_answered_by_the_server_with_the_in_process_hits(
    ws: Path, runtime: Path, server: subprocess.Popen[str]
) -> None:
    warm = botbin("search", QUERY, "-w", str(ws), "--json", "-v", env=_env(runtime))
    assert warm.returncode == 0, warm.stderr
    assert f"answered by the server at {socket_path(ws, {'XDG_RUNTIME_DIR': str(runtime)})}" in warm.stderr
    cold = botbin("search", QUERY, "-w", str(ws), "--json", env=_env(runtime, BOTBIN_NO_SERVER="1"))
    assert cold.returncode == 0, cold.stderr
    assert _hits(warm.stdout) == _hits(cold.stdout) and _hits(warm.stdout)
    text = botbin("search", QUERY, "-w", str(ws), "-k", "3", env=_env(runtime))
    assert (
        text.stdout == botbin("search", QUERY, "-w", str(ws), "-k", "3", env=_env(runtime, BOTBIN_NO_SERVER="1")).stdout
    )


@pytest.mark.model
def test_the_socket_is_private(ws: Path, runtime: Path, server: subprocess.Popen[str]) -> None:
    path = socket_path(ws, {"XDG_RUNTIME_DIR": str(runtime)})
    assert stat.S_ISSOCK(path.stat().st_mode) and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.model
def test_a_request_nested_deeper_than_python_parses_is_answered(
    ws: Path, runtime: Path, server: subprocess.Popen[str]
) -> None:
    # json.loads raised RecursionError in the connection's thread: the client got no answer at all.
    deep = b'{"v": 1, "op": "ingest", "turns": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(socket_path(ws, {"XDG_RUNTIME_DIR": str(runtime)})))
        sock.sendall(deep)
        sock.shutdown(socket.SHUT_WR)
        answer = b"".join(iter(lambda: sock.recv(1 << 16), b""))
    assert json.loads(answer) == {"v": WARM_PROTOCOL, "served": False, "reason": "bad request"}


@pytest.mark.model
def test_another_workspace_or_other_settings_are_declined(
    ws: Path, runtime: Path, server: subprocess.Popen[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    path = socket_path(ws)
    other = tmp_path / "other"
    other.mkdir()
    assert socket_path(other) != path
    asked = ask(path, request(["search", QUERY, "-w", str(other)], env={}))  # sent to ws's socket by mistake
    assert asked is not None and asked["served"] is False and asked["reason"] == "another workspace"
    asked = ask(path, request(["search", QUERY, "-w", str(ws), "--exclude", "memory/**"], env={}))
    assert asked is not None and asked["served"] is False and asked["reason"] == "other settings"
    asked = ask(path, request(["search", QUERY, "-w", str(ws)], env={}))
    assert asked is not None and asked["served"] is True and asked["code"] == 0
    out = botbin("search", QUERY, "-w", str(other), "-v", env=_env(runtime))
    assert "answered by the server" not in out.stderr and "no hits" in out.stdout


def _threads(pid: int) -> int:
    """How many threads process ``pid`` runs now (Linux /proc)."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:")))


def _closed_by_server(sock: socket.socket) -> bool:
    """True when the server has closed ``sock`` (what it sent before, a "busy" line, is read first)."""
    sock.settimeout(0.01)
    try:
        while data := sock.recv(1 << 16):
            assert json.loads(data.splitlines()[0])["reason"] == "busy"
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


@pytest.mark.model
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="counts threads in /proc")
def test_idle_connections_hold_a_bounded_number_of_threads_for_a_short_time(
    ws: Path, runtime: Path, server: subprocess.Popen[str]
) -> None:
    path = socket_path(ws, {"XDG_RUNTIME_DIR": str(runtime)})
    before = _threads(server.pid)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    count = min(2000, hard - 200)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, count + 200), hard))
    idle: list[socket.socket] = []
    try:
        for _ in range(count):  # connect, then send nothing
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(path))  # blocking: waits while the server's backlog is full
            idle.append(sock)
        time.sleep(0.5)
        assert _threads(server.pid) <= before + MAX_CONNECTIONS
        open_now = [s for s in idle if not _closed_by_server(s)]
        assert len(open_now) <= MAX_CONNECTIONS  # the rest were declined at once
        busy = botbin("search", QUERY, "-w", str(ws), "--json", "-v", env=_env(runtime))
        assert busy.returncode == 0 and "declined (busy)" in busy.stderr  # answered in its own process
        cold = botbin("search", QUERY, "-w", str(ws), "--json", env=_env(runtime, BOTBIN_NO_SERVER="1"))
        assert _hits(busy.stdout) == _hits(cold.stdout) and _hits(busy.stdout)
        time.sleep(READ_TIMEOUT_S + 0.5)
        assert all(_closed_by_server(s) for s in open_now)  # idle ones are closed after the read timeout
        assert _threads(server.pid) <= before + 1
        warm = botbin("search", QUERY, "-w", str(ws), "--json", "-v", env=_env(runtime))
        assert warm.returncode == 0 and "answered by the server" in warm.stderr
        assert _hits(warm.stdout) == _hits(cold.stdout)
    finally:
        for sock in idle:
            sock.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.model
def test_a_dead_server_falls_back_in_process(ws: Path, runtime: Path, server: subprocess.Popen[str]) -> None:
    server.send_signal(signal.SIGKILL)
    server.wait(30)
    path = socket_path(ws, {"XDG_RUNTIME_DIR": str(runtime)})
    assert path.exists()  # left behind by the killed server
    out = botbin("search", QUERY, "-w", str(ws), "--json", "-v", env=_env(runtime))
    assert out.returncode == 0 and "answered by the server" not in out.stderr
    assert _hits(out.stdout)


def test_a_stale_socket_is_replaced_and_removed_on_stop(
    make_service: Callable[..., MemoryService], runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    memory = make_service({"MEMORY.md": "# Memory\n\nWe chose NATS for alerts.\n"})
    assert not memory.sync().failed
    path = socket_path(memory.root)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))
    dead.close()  # a socket file nobody listens on
    warm = WarmServer(memory)
    assert warm.start()
    second = WarmServer(memory)
    assert not second.start()  # one live server per workspace
    asked = ask(path, request(["search", "NATS", "-w", str(memory.root), "--json"], env={}))
    assert asked is not None and asked["served"] is True
    assert json.loads(asked["stdout"])["hits"][0]["path"] == "MEMORY.md"
    warm.stop()
    time.sleep(0.05)
    assert not path.exists()
