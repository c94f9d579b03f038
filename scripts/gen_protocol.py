#!/usr/bin/env python3
"""Write extensions/protocol/src/generated.ts from the wire contract (server/botbin/wire), or with --check say
whether the checked-in file is what the contract generates (exit 1 and a diff when it drifted).

    python scripts/gen_protocol.py [--check]
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "extensions" / "protocol" / "src" / "generated.ts"
sys.path.insert(0, str(ROOT / "server"))

from botbin.wire.typescript import generate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text = generate()
    if not args.check:
        TARGET.write_text(text, encoding="utf-8")
        print(f"wrote {TARGET.relative_to(ROOT)}", file=sys.stderr)
        return 0
    current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
    if current == text:
        return 0
    diff = difflib.unified_diff(current.splitlines(), text.splitlines(), str(TARGET), "generated", lineterm="")
    print("\n".join(diff), file=sys.stderr)
    print(f"{TARGET.relative_to(ROOT)} is stale: run python scripts/gen_protocol.py", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
