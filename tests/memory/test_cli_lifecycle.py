"""`botbin consolidate`, `prune` and `restore` end to end: subprocesses with the FakeEmbedder launcher, and
one run of the real `botbin` with the real model on the bundled example workspace."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_notes
from test_cli_directives import botbin, ok

NOTES: dict[str, str | bytes] = {
    "AGENTS.md": "# Memory\n\nThe user lives in Lisbon.\n",
    "memory/2026-11-02.md": "# 2026-11-02\n\n- Deploys go out from the blue cluster in Frankfurt.\n",
    "memory/2026-11-09.md": "# 2026-11-09\n\n- Deploys go out from the blue cluster in Frankfurt now.\n",
    "memory/cooking.md": "# Cooking\n\nPasta needs salted water and ten minutes.\n",
    # a memo fades to nothing within a second: prune has something to archive without waiting months. 9 ms
    # (1e-7 days): a retrieval stretches a half-life, and at 86 ms (1e-6) a prune started 1.3 s after the search
    # found every reinforced memo at decay 0.0501, just over the threshold (a race a fast machine lost)
    "botbin.toml": "decay_half_life_days = 0.0000001\n",
}
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workspace"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = write_notes(tmp_path / "ws", NOTES)
    ok("sync", cwd=root)
    return root


def test_prune_then_restore(ws: Path) -> None:
    ok("search", "pasta", cwd=ws)  # the first search creates the memos
    time.sleep(0.5)
    dry = json.loads(ok("prune", "--dry-run", "--json", cwd=ws))
    assert dry["dryRun"] and len(dry["archived"]) == 3 and not (ws / "memory/aifbin/archive.md").exists()
    done = json.loads(ok("prune", "--json", cwd=ws))
    assert {m["path"] for m in done["archived"]} == {
        "memory/2026-11-02.md",
        "memory/2026-11-09.md",
        "memory/cooking.md",
    }
    assert "memory/cooking.md" in (ws / "memory/aifbin/archive.md").read_text()
    assert "cooking" not in ok("search", "pasta salted water", cwd=ws)
    cooking = next(m["id"] for m in done["archived"] if m["path"] == "memory/cooking.md")
    restored = json.loads(ok("restore", cooking[:10], "--json", cwd=ws))
    assert [m["id"] for m in restored["restored"]] == [cooking]
    assert "memory/cooking.md" in ok("search", "pasta salted water", cwd=ws)
    back = json.loads(ok("restore", "--path", "memory/2026-*", "--json", cwd=ws))
    assert sorted(m["path"] for m in back["restored"]) == ["memory/2026-11-02.md", "memory/2026-11-09.md"]
    assert "Nothing is archived." in (ws / "memory/aifbin/archive.md").read_text()
    usage = botbin("restore", cwd=ws)
    assert usage.returncode == 2 and "--all" in usage.stderr
    unknown = botbin("restore", "zzzz", cwd=ws)
    assert unknown.returncode == 1 and "'zzzz' matches no single archived memo" in unknown.stderr


def test_consolidate_dry_run_then_write(ws: Path) -> None:
    dry = json.loads(ok("consolidate", "--dry-run", "--json", cwd=ws))
    assert dry["dryRun"] and [r["reason"] for r in dry["roots"]] == ["recurs"]
    assert [s["path"] for s in dry["roots"][0]["sources"]] == ["memory/2026-11-02.md", "memory/2026-11-09.md"]
    assert not (ws / "memory/roots.md").exists()
    done = botbin("consolidate", cwd=ws)
    assert done.returncode == 0 and "added 1 roots to memory/roots.md" in done.stderr
    assert done.stdout.startswith("- Deploys go out from the blue cluster in Frankfurt")
    assert "blue cluster" in (ws / "memory/roots.md").read_text()
    again = botbin("consolidate", cwd=ws)
    assert again.stdout == "" and "added 0 roots to memory/roots.md (1 already there)" in again.stderr


def test_real_botbin_on_the_example_workspace(tmp_path: Path) -> None:
    """The installed command with the bundled model: lifecycle commands run and report on real notes."""
    root = tmp_path / "ws"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("aifbin"))
    exe = [sys.executable, "-m", "botbin", "--workspace", str(root)]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*exe, *args], capture_output=True, text=True, check=False, timeout=300)

    assert run("sync").returncode == 0
    assert run("search", "why did the database run out of connections", "-k", "3").returncode == 0
    roots = json.loads(run("consolidate", "--dry-run", "--json").stdout)
    assert roots["rootsNote"] == "memory/roots.md" and roots["dryRun"]
    assert all(r["sources"] and r["text"] for r in roots["roots"])
    pruned = json.loads(run("prune", "--dry-run", "--json").stdout)
    assert pruned["archived"] == [] and pruned["live"] > 30  # everything was just synced: nothing has faded
