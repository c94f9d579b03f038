"""Issue 36: a folder that cannot be read keeps its notes at every sync (a full one, or a note-level one from a
save or the watcher), and a search shows them too, with a warning naming the folder; real permissions throughout
(root, which runs CI, is run without the capabilities that let it pass them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from botbin.service import MemoryService
from conftest import REPO, FakeEmbedder, write_notes

_NO_BYPASS = "-dac_override,-dac_read_search"

#: What the child runs: a full sync, a sync of the hidden note alone, a search and the status, as JSON.
_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[2])
from conftest import FakeEmbedder
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest, SyncRequest
service = MemoryService(sys.argv[1], {}, embedder=FakeEmbedder(), env={})
full = service.sync()
only = service.sync(SyncRequest(only=frozenset({"memory/locked/deep/hidden.md"})))
found = service.search(SearchRequest(query="durian fruit smell", k=3))
status = service.status()
print(json.dumps({
    "full": full.to_dict(), "only": only.to_dict(),
    "hits": [h.path for h in found.hits], "warnings": list(found.warnings), "stale": found.stale,
    "status": status.to_dict(),
}))
"""


def _permission_bound(command: list[str]) -> list[str]:
    """``command`` run so that file permissions apply to it; skips the test where that cannot be done."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, and no setpriv to drop the capabilities that pass file permissions")
    wrapped = [setpriv, "--bounding-set", _NO_BYPASS, *command]
    if subprocess.run([*wrapped[:3], "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("running as root, and setpriv cannot drop the capabilities that pass file permissions")
    return wrapped


def test_an_unreadable_folder_keeps_and_shows_its_notes(tmp_path: Path) -> None:
    root = write_notes(
        tmp_path / "ws",
        {
            "memory/open.md": "# Open\n\nApples are crisp.\n",
            "memory/locked/deep/hidden.md": "# Hidden\n\nThe durian fruit smell is strong.\n",
            "memory/listed/seen.md": "# Listed\n\nThe durian husk is spiky.\n",  # its folder: listed, not searched
        },
    )
    assert MemoryService(root, {}, embedder=FakeEmbedder(), env={}).sync().added
    command = _permission_bound([sys.executable, "-c", _CHILD, str(root), str(REPO / "tests")])
    locked, listed = root / "memory/locked", root / "memory/listed"
    locked.chmod(0)
    listed.chmod(0o444)
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
    finally:
        locked.chmod(0o755)
        listed.chmod(0o755)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    for sync in (seen["full"], seen["only"]):  # before: the note-level sync removed it as "deleted"
        assert sync["deleted"] == [] and sync["failed"] == []
        assert any(f"{locked}: folder cannot be read (Permission denied)" in w for w in sync["warnings"])
    assert any(f"{listed}: folder cannot be read (Permission denied)" in w for w in seen["full"]["warnings"])
    # before: the search left it out as "deleted" and said "run `botbin sync`", which could not help
    assert set(seen["hits"][:2]) == {"memory/locked/deep/hidden.md", "memory/listed/seen.md"}
    assert seen["stale"] is False and len(seen["warnings"]) == 1
    assert seen["warnings"][0].startswith("folder memory/l") and seen["warnings"][0].endswith(
        "are shown as the last sync left them, and stay indexed until it can be read again"
    )
    assert "memory/locked/deep/hidden.md" in seen["warnings"][0] and "memory/listed/seen.md" in seen["warnings"][0]
    status = seen["status"]
    assert status["files"] == 3 and status["stale"] == []
    assert any(f"{locked}: folder cannot be read" in w for w in status["warnings"])
    assert (root / "memory/aifbin/memory/locked/deep/hidden.aif-bin").is_file()
