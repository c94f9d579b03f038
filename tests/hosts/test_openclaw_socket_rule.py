"""The OpenClaw engine finds the socket of the server it talks to by the rule of server/botbin/cli/warm.py: the
TypeScript copy (extensions/openclaw/src/socketPath.ts), run in Node, gives the same path as Python's for a plain
folder, a symlinked one and a missing one, with and without XDG_RUNTIME_DIR."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from botbin.cli.warm import socket_path
from conftest import REPO

PLUGIN = REPO / "extensions" / "openclaw"
SCRIPT = """
import { socketPath } from "./src/socketPath";
const [folders, env] = JSON.parse(process.argv[process.argv.length - 1]);
console.log(JSON.stringify(folders.map((f: string) => socketPath(f, env))));
"""


def _node_paths(folders: list[str], env: dict[str, str]) -> list[str]:
    bundle = subprocess.run(
        ["node", "-e", "require('esbuild').build({stdin:{contents:process.argv[1],loader:'ts',resolveDir:'.'},"
         "bundle:true,platform:'node',format:'cjs',write:false}).then(r=>process.stdout.write(r.outputFiles[0].text))",
         SCRIPT],
        cwd=PLUGIN, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    run = subprocess.run(
        ["node", "-e", bundle.stdout, "--", json.dumps([folders, env])],
        cwd=PLUGIN, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return list(json.loads(run.stdout))


@pytest.mark.parametrize("xdg", [True, False])
def test_the_socket_path_rule_is_pythons(tmp_path: Path, xdg: bool) -> None:
    real = tmp_path / "notes"
    real.mkdir()
    link = tmp_path / "link-to-notes"
    link.symlink_to(real)
    folders = [str(real), str(link), str(tmp_path / "not-yet"), str(real) + "/"]
    run = tmp_path / "run"
    run.mkdir()
    env = {"XDG_RUNTIME_DIR": str(run)} if xdg else {}  # else both use this process's temporary folder
    expected = [str(socket_path(Path(f), env)) for f in folders]
    assert _node_paths(folders, env) == expected
    assert expected[0] == expected[1] == expected[3]
