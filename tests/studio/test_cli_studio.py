"""``botbin studio`` as a user runs it: a real process prints the URL with its token on stdout (and nothing of it
on stderr), serves the page and the API behind that token, answers a terminal's `botbin search` from the same
warm process, and stops on Ctrl+C."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from editors.vscode_real import wait_for


def test_botbin_studio_serves_the_url_it_prints(studio_workspace: Path, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path / "run"), "DISPLAY": ""}
    (tmp_path / "run").mkdir(mode=0o700)
    out, err = (tmp_path / "out.txt").open("w+"), (tmp_path / "err.txt").open("w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "botbin", "studio", "-w", str(studio_workspace), "--no-browser", "--read-only"],
        stdout=out, stderr=err, env=env, text=True,
    )  # fmt: skip
    try:
        url = wait_for(
            lambda: re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", (tmp_path / "out.txt").read_text()),
            120,
            "the URL on stdout",
        )
        port, token = int(url.group(1)), url.group(2)

        def get(path: str, headers: dict[str, str]) -> tuple[int, bytes]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", **headers})
            response = conn.getresponse()
            return response.status, response.read()

        status, page = get(f"/?token={token}", {})
        assert status == 200 and b"<script nonce=" in page
        status, data = get("/api/info", {"X-Botbin-Token": token})
        assert status == 200 and json.loads(data)["readOnly"] is True
        assert get("/api/info", {})[0] == 401
        argv = ["search", "v0.4.0 release", "-w", str(studio_workspace), "-k", "2", "-v"]
        wait_for(lambda: list((tmp_path / "run" / "botbin").glob("*.sock")), 60, "the warm socket")
        search = subprocess.run(
            [sys.executable, "-m", "botbin", *argv], capture_output=True, text=True, env=env, timeout=120
        )
        assert search.returncode == 0 and "memory/" in search.stdout
        assert f"(pid {process.pid})" in search.stderr  # answered by the studio's process
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(60)
    assert code == 0
    time.sleep(0.1)
    assert token not in (tmp_path / "err.txt").read_text()
