"""The page's bundle is committed into the Python package (server/botbin/studio/static), so that `pip install` and
`scripts/setup.sh --python-only` serve Recall Studio without npm: rebuilt from extensions/studio, it must be the
same bytes (else: run `npm run build -w extensions/studio`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from botbin.studio.page import BUNDLE, bundle
from conftest import REPO

STUDIO = REPO / "extensions" / "studio"
STATIC = REPO / "server" / "botbin" / "studio" / "static"


def test_the_committed_bundle_is_what_the_sources_build(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not (REPO / "node_modules" / "esbuild").is_dir():
        pytest.skip("no node_modules (npm install at the repository root, as scripts/setup.sh does)")
    subprocess.run([node, "esbuild.mjs", "--outdir", str(tmp_path)], cwd=STUDIO, check=True, timeout=120)
    for name in BUNDLE:
        built, committed = (tmp_path / name).read_bytes(), (STATIC / name).read_bytes()
        assert built == committed, f"{STATIC / name} is stale: run npm run build -w extensions/studio"


def test_the_package_serves_the_bundle() -> None:
    found = bundle()
    assert found is not None
    script, style = found
    assert script == (STATIC / "studio.js").read_text(encoding="utf-8") and "Recall Studio" in script
    assert ".tabs" in style
