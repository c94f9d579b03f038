#!/usr/bin/env python3
"""Write every generated file of the repository (botbin.generate.targets: the TypeScript protocol, names and values,
the hook's host types, README.md's settings tables, VS Code's settings) from its one Python source, or with --check
say whether the checked-in files are what the sources generate (exit 1 and a diff when one drifted).

    python scripts/gen_protocol.py [--check]
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from botbin.generate import targets  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    stale = 0
    for target in targets():
        path = ROOT / target.path
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if not args.check:
            path.write_text(target.make(current), encoding="utf-8")
            print(f"wrote {target.path}", file=sys.stderr)
            continue
        if not target.stale(current):
            continue
        made = target.make(current)
        diff = difflib.unified_diff(current.splitlines(), made.splitlines(), target.path, "generated", lineterm="")
        print("\n".join(diff), file=sys.stderr)
        print(f"{target.path} is stale: edit {target.source}, then run python scripts/gen_protocol.py", file=sys.stderr)
        stale = 1
    return stale


if __name__ == "__main__":
    sys.exit(main())
