"""``botbin consolidate``, ``prune`` and ``restore``: the memo lifecycle commands (memory/)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from botbin.cli.common import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, add, service


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the lifecycle subcommands to the ``botbin`` parser."""
    p = add(
        sub,
        common,
        "consolidate",
        "distil recurring, reinforced and stated memos into the roots note (memory/roots.md)",
        cmd_consolidate,
    )
    p.add_argument("--dry-run", action="store_true", help="print the roots without writing them")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = add(
        sub, common, "prune", "archive memos whose decay score is under prune_threshold (notes are kept)", cmd_prune
    )
    p.add_argument("--dry-run", action="store_true", help="print what would be archived")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = add(sub, common, "restore", "bring archived memos back into search", cmd_restore)
    p.add_argument("ids", nargs="*", metavar="ID", help="memo ids from the archive note (a unique prefix is enough)")
    p.add_argument("--all", dest="everything", action="store_true", help="restore every archived memo")
    p.add_argument("--path", dest="path_glob", metavar="GLOB", help="restore the memos of notes matching GLOB")
    p.add_argument("--json", action="store_true", help="print JSON")


def _memo(m: Any) -> dict[str, Any]:
    return {
        "id": m.id,
        "path": m.path,
        "startLine": m.start_line,
        "endLine": m.end_line,
        "reinforcementCount": m.reinforcement_count,
        "decayScore": round(m.decay_score, 6),
    }


def cmd_consolidate(args: argparse.Namespace) -> int:
    report = service(args).consolidate(dry_run=args.dry_run)
    lines = report.lines()
    if args.json:
        print(
            json.dumps(
                {
                    "rootsNote": report.roots_note,
                    "dryRun": report.dry_run,
                    "skipped": report.skipped,
                    "rejectedAbstractive": report.rejected_abstractive,
                    "roots": [
                        {
                            "text": r.text,
                            "reason": r.reason,
                            "abstractive": r.abstractive,
                            "sources": [
                                {"path": c.path, "startLine": c.start_line, "endLine": c.end_line} for c in r.sources
                            ],
                        }
                        for r in report.roots
                    ],
                },
                ensure_ascii=False,
            )
        )
        return EXIT_OK
    for line in lines:
        print(line)
    verb = "would add" if report.dry_run else "added"
    print(f"botbin: {verb} {len(lines)} roots to {report.roots_note} ({report.skipped} already there)", file=sys.stderr)
    return EXIT_OK


def cmd_prune(args: argparse.Namespace) -> int:
    report = service(args).prune(dry_run=args.dry_run)
    if args.json:
        print(
            json.dumps(
                {
                    "dryRun": report.dry_run,
                    "threshold": report.threshold,
                    "live": report.live,
                    "archiveNote": report.archive_note,
                    "archived": [_memo(m) for m in report.archived],
                }
            )
        )
        return EXIT_OK
    for m in report.archived:
        print(
            f"{m.id}  {m.path}:{m.start_line + 1}-{m.end_line}  decay {m.decay_score:.3f}  "
            f"retrieved {m.reinforcement_count}"
        )
    verb = "would archive" if report.dry_run else "archived"
    print(
        f"botbin: {verb} {len(report.archived)} memos under decay {report.threshold:g}; {report.live} stay "
        f"searchable; archive note {report.archive_note}",
        file=sys.stderr,
    )
    return EXIT_OK


def cmd_restore(args: argparse.Namespace) -> int:
    if not (args.ids or args.everything or args.path_glob):
        print("botbin: error: name memo ids, --path GLOB or --all", file=sys.stderr)
        return EXIT_USAGE
    report = service(args).restore(args.ids, args.path_glob, args.everything)
    if args.json:
        print(json.dumps({"restored": [_memo(m) for m in report.restored], "unknown": list(report.unknown)}))
    else:
        for m in report.restored:
            print(f"{m.id}  {m.path}:{m.start_line + 1}-{m.end_line}")
        print(f"botbin: restored {len(report.restored)} memos", file=sys.stderr)
    for want in report.unknown:
        print(f"botbin: warning: {want!r} matches no single archived memo", file=sys.stderr)
    return EXIT_PARTIAL if report.unknown else EXIT_OK
