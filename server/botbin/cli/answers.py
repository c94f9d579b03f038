"""The read-only answers that a warm server gives too (cli/warm.py): ``botbin search QUERY`` and ``botbin
context``, their flags, and ``answer``, which parses a warm request and runs it on a server's service.

Kept apart from cli/commands.py so that the servers (cli/warm_server.py, lsp, mcp) can answer without
importing the command table (which imports them)."""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
from pathlib import Path
from typing import Any, TextIO

from botbin.cli.common import EPILOG, EXIT_OK, common_flags, overrides, setting_help
from botbin.cli.output import print_hits
from botbin.cli.terminal import shown
from botbin.cli.warm import PROTOCOL, WARM_COMMANDS
from botbin.service import MemoryService, SearchFilters, check_alpha, check_filters, check_k, relevant

log = logging.getLogger(__name__)


def search_filters(args: argparse.Namespace) -> SearchFilters:
    """The filters of ``botbin search``'s flags."""
    return SearchFilters(args.path_glob, args.tag, args.kind, args.date_from, args.date_to)


def search_usage_error(args: argparse.Namespace) -> str | None:
    """Why the search flags are unusable, or None."""
    if (args.query is None) == (args.batch is None):
        return "give a QUERY or --batch FILE.jsonl"
    if args.query is not None and not args.query.strip():
        return "the query is empty"
    if args.per_note is not None and args.per_note < 0:
        return f"--per-note takes 0 (no cap) or more, not {args.per_note}"
    if args.alpha is not None and args.alpha != args.alpha:  # NaN
        return "alpha must be a number between 0 and 1, not nan"
    filters = search_filters(args)
    return check_k(args.k) or check_alpha(args.alpha) or check_filters(filters, ("--kind", "--since", "--until"))


def add_search_args(p: argparse.ArgumentParser) -> None:
    """The flags of ``botbin search``."""
    p.add_argument("query", nargs="?", help="what to look for, in your own words")
    p.add_argument(
        "--batch", type=Path, metavar="FILE.jsonl", help='one {"q": ...} per line in, one JSON result list per line out'
    )
    p.add_argument("-k", type=int, default=None, help=setting_help("top_k", "number of hits"))
    p.add_argument("--alpha", type=float, default=None, help=setting_help("alpha"))
    p.add_argument("--json", action="store_true", help="print hits as JSON (0-based lines)")
    p.add_argument("--path", dest="path_glob", help="only notes whose path matches this glob")
    p.add_argument("--tag", help="only notes with this tag")
    p.add_argument("--kind", choices=["hard", "soft", "lore"], help="only chunks of this kind")
    p.add_argument("--since", dest="date_from", help="only notes dated on or after YYYY-MM-DD")
    p.add_argument("--until", dest="date_to", help="only notes dated on or before YYYY-MM-DD")
    p.add_argument("--best-per-note", action="store_true", help="keep only the best hit of each note")
    p.add_argument(
        "--all",
        dest="show_all",
        action="store_true",
        help="also show hits under the relevance floor (hardly any similarity and no real keyword match), hidden by"
        " default",
    )
    p.add_argument(
        "--namespace",
        dest="search_namespaces",
        metavar="A,B",
        help=setting_help("search_namespaces", "team database (backend = postgres): the namespaces to search"),
    )
    p.add_argument(
        "--per-note",
        type=int,
        default=None,
        metavar="N",
        help=setting_help("max_hits_per_note", "at most N hits of one note; 0 lifts the cap"),
    )


def add_context_args(p: argparse.ArgumentParser) -> None:
    """The flags of ``botbin context``."""
    p.add_argument("query", help="the task or question")
    p.add_argument("--budget", type=int, default=2000, metavar="N", help="most tokens (default 2000)")
    p.add_argument("--json", action="store_true", help="print tiers, items and token counts as JSON")


def answer_search(memory: MemoryService, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``botbin search QUERY`` on ``memory``, printed on ``out`` and ``err`` (this process's streams, or
    a warm server's answer: cli/warm_server.py)."""
    filters = search_filters(args)
    spanned = other_namespaces(memory, err)
    result = memory.search(args.query, args.k, args.alpha, filters, args.best_per_note, per_note=args.per_note)
    for warning in result.warnings:
        print(f"botbin: warning: {warning}", file=err)
    hits = result.hits if args.show_all else [h for h in result.hits if relevant(h, result.degraded)]
    hidden = len(result.hits) - len(hits)
    if args.json:
        print(
            json.dumps(
                {
                    "hits": [h.to_dict() for h in hits],
                    "hidden": hidden,
                    "degraded": result.degraded,
                    "stale": result.stale,
                    "indexedAt": result.indexed_at,
                },
                ensure_ascii=False,
            ),
            file=out,
        )
    else:
        print_hits(
            hits, filtered=filters != SearchFilters(), out=out, hidden=hidden, stale=result.stale, namespaces=spanned
        )
    return EXIT_OK


def other_namespaces(memory: MemoryService, err: TextIO) -> tuple[str, ...]:
    """The team database's namespaces a search reads when they are not just the workspace's own (); warns on
    ``err`` about namespaces asked of the embedded backend, which has none, and about namespaces this role reads
    no note of (a typo, or no grant)."""
    settings = memory.ws.settings
    if settings.backend != "postgres":
        if settings.search_namespaces:
            print('botbin: warning: --namespace / search_namespaces apply to backend = "postgres" only', file=err)
        return ()
    asked = memory.spanned_namespaces()
    empty = memory.unreadable_namespaces() if asked else []
    if empty and len(empty) < len(asked):  # all of them empty: the answer itself says so
        print(
            f"botbin: warning: namespaces {', '.join(empty)}: no notes this role may read (no such namespace, "
            "or no grant on it)",
            file=err,
        )
    return asked


def answer_context(memory: MemoryService, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``botbin context QUERY`` on ``memory``, printed on ``out`` and ``err`` (see answer_search)."""
    result = memory.context(args.query, args.budget)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False), file=out)
    else:
        print(result.text, file=out)
        used = ", ".join(f"{t.name} {t.tokens}" for t in result.tiers if t.tokens)
        print(f"botbin: {result.used_tokens}/{result.budget_tokens} tokens ({used})", file=err)
    return EXIT_OK


def warm_parser() -> argparse.ArgumentParser:
    """A parser of the warm commands only, with the same flags as the full one (cli/__init__.py)."""
    common = common_flags()
    parser = argparse.ArgumentParser(prog="botbin", parents=[common], epilog=EPILOG, exit_on_error=False)
    sub = parser.add_subparsers(dest="subcommand", required=True)
    add_search_args(sub.add_parser("search", parents=[common]))
    add_context_args(sub.add_parser("context", parents=[common]))
    return parser


def _declined(reason: str) -> dict[str, Any]:
    return {"v": PROTOCOL, "served": False, "reason": reason}


def _parse(message: dict[str, Any]) -> argparse.Namespace | str:
    """The parsed command line of ``message``, or why it cannot be answered here."""
    argv = message.get("argv")
    if message.get("v") != PROTOCOL or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return f"not a protocol {PROTOCOL} request"
    parser = warm_parser()
    try:
        args, extra = parser.parse_known_args(argv)
    except (SystemExit, argparse.ArgumentError):
        return "bad usage"
    if extra or args.subcommand not in WARM_COMMANDS or getattr(args, "batch", None) is not None:
        return "answered in-process"
    if args.subcommand == "search" and search_usage_error(args):
        return "bad usage"
    return args


def answer(memory: MemoryService, message: dict[str, Any]) -> dict[str, Any]:
    """The answer of a warm server to one request (cli/warm.py): served when it names this workspace and its
    flags and environment give this service's settings (so the index is the one the command would read),
    else declined, and the command runs in its own process."""
    args = _parse(message)
    if isinstance(args, str):
        return _declined(args)
    cwd, env = Path(str(message.get("cwd", "/"))), message.get("env")
    if (cwd / getattr(args, "workspace", Path("."))).resolve() != memory.root:
        return _declined("another workspace")
    warnings = memory.settings_match(overrides(args), env if isinstance(env, dict) else {})
    if warnings is None:
        return _declined("other settings")
    out, err = io.StringIO(), io.StringIO()
    for warning in warnings:
        print(f"botbin: warning: {warning}", file=err)
    run = answer_search if args.subcommand == "search" else answer_context
    try:
        code = run(memory, args, out, err)
    except Exception as exc:  # the command runs in-process then, and reports the error as it always does
        log.info("warm %s declined: %s", args.subcommand, exc)
        return _declined(f"{type(exc).__name__}: {exc}")
    # escaped here as the command's own process escapes them (cli/terminal.py): the client prints them as they come
    stdout = out.getvalue() if args.json else shown(out.getvalue())
    return {"v": PROTOCOL, "served": True, "code": code, "stdout": stdout, "stderr": shown(err.getvalue()),
            "pid": os.getpid()}  # fmt: skip
