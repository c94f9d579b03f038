"""Issue 20, item 9: the demo sets up Python only (no ~200 MB ``npm install``); setup.sh alone still
installs the front ends. The scripts run against stub python, npm and botbin commands that log their calls."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from conftest import REPO

STUB = '#!/usr/bin/env bash\necho "$(basename "$0") $*" >> "$CALLS"\n'


def _fake_repo(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in ("setup.sh", "demo.sh"):
        shutil.copy2(REPO / "scripts" / name, repo / "scripts" / name)
    (repo / "package.json").write_text("{}\n", encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("python", "npm", "botbin"):
        (bin_dir / name).write_text(STUB, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    venv = repo / ".venv" / "bin"
    venv.mkdir(parents=True)
    shutil.copy2(bin_dir / "python", venv / "python")
    (venv / "activate").write_text("", encoding="utf-8")
    calls = tmp_path / "calls.log"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "CALLS": str(calls)}
    return repo, calls, env


def test_demo_does_not_run_npm_install(tmp_path: Path) -> None:
    repo, calls, env = _fake_repo(tmp_path)
    done = subprocess.run(["bash", str(repo / "scripts" / "demo.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    log = calls.read_text(encoding="utf-8")
    assert "npm" not in log and "botbin --workspace examples/workspace sync" in log


def test_setup_alone_still_installs_the_front_ends(tmp_path: Path) -> None:
    repo, calls, env = _fake_repo(tmp_path)
    done = subprocess.run(["bash", str(repo / "scripts" / "setup.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "npm install" in calls.read_text(encoding="utf-8")
    bad = subprocess.run(["bash", str(repo / "scripts" / "setup.sh"), "--nope"], env=env, capture_output=True)
    assert bad.returncode == 2
    assert stat.S_IMODE((REPO / "scripts" / "setup.sh").stat().st_mode) & stat.S_IXUSR
