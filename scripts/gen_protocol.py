#!/usr/bin/env python3
"""Write extensions/protocol/src/generated.ts (TypeScript) and server/botbin/cli/host_types.py (the host ops as
standard-library TypedDicts) from the wire contract (server/botbin/wire), or with --check say whether the checked-in
files are what the contract generates (exit 1 and a diff when one drifted).

    python scripts/gen_protocol.py [--check]
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "extensions" / "protocol" / "src" / "generated.ts"
PY_TARGET = ROOT / "server" / "botbin" / "cli" / "host_types.py"
sys.path.insert(0, str(ROOT / "server"))

from botbin.wire import python_client, typescript  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    stale = 0
    for target, text in ((TARGET, typescript.generate()), (PY_TARGET, python_client.generate())):
        if not args.check:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target.relative_to(ROOT)}", file=sys.stderr)
            continue
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current == text:
            continue
        diff = difflib.unified_diff(current.splitlines(), text.splitlines(), str(target), "generated", lineterm="")
        print("\n".join(diff), file=sys.stderr)
        print(f"{target.relative_to(ROOT)} is stale: run python scripts/gen_protocol.py", file=sys.stderr)
        stale = 1
    return stale


if __name__ == "__main__":
    sys.exit(main())
