"""The flags of ``botbin``: the common ones (the workspace and the settings that choose what is read), and those of
``search`` and ``context``, read into the fields of their typed requests (wire/requests.py) by the one table below.

Standard library only: the warm client (cli/warm.py) parses a command line with these very flags and sends the
request, so a warm answer costs a Python start and a round trip; the full CLI (cli/commands.py) validates the same
fields into a SearchRequest or ContextRequest in-process. The help of a flag that sets a setting is made by the
caller's ``describe`` (cli/common.py ``setting_help`` reads the settings model); the warm parser prints no help."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botbin.cli.host_types import DEFAULT_BUDGET_TOKENS

#: Settings the flags override (argparse dest = the setting's name).
SETTING_FLAGS = ("include", "exclude", "vault", "output_dir", "model", "search_namespaces", "debounce_ms")
#: The fields of a SearchRequest the search flags give (argparse dest = the field's name).
SEARCH_FIELDS = ("k", "alpha", "best_per_note", "per_note", "show_all")
FILTER_FIELDS = ("path_glob", "tag", "kind", "date_from", "date_to")
#: How the CLI names each field in a message (wire/requests.py ``problem``).
FLAG_NAMES = {
    "k": "-k",
    "alpha": "--alpha",
    "per_note": "--per-note",
    "path_glob": "--path",
    "tag": "--tag",
    "kind": "--kind",
    "date_from": "--since",
    "date_to": "--until",
    "budget_tokens": "--budget",
}


#: The help of a flag that sets setting ``key``: (key, what the flag does, or None for the setting's description).
Describe = Callable[[str, str | None], str]


def bare(key: str, what: str | None = None) -> str:
    """A flag's help without the settings model (the warm parser's, which prints none)."""
    return what or key


class QuietParser(argparse.ArgumentParser):
    """A parser that raises ArgumentError instead of printing usage and exiting (the warm paths)."""

    def error(self, message: str) -> Any:
        raise argparse.ArgumentError(None, message)


def common_flags(describe: Describe = bare) -> argparse.ArgumentParser:
    """The flags every subcommand takes (workspace and the settings that choose what is tracked)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--workspace", "-w", type=Path, default=argparse.SUPPRESS, help="workspace folder (default: the current folder)"
    )
    common.add_argument(
        "--include",
        action="append",
        default=argparse.SUPPRESS,
        metavar="GLOB",
        help=describe("include", "track notes matching GLOB (repeatable; replaces the configured list)"),
    )
    common.add_argument(
        "--exclude",
        action="append",
        default=argparse.SUPPRESS,
        metavar="GLOB",
        help=describe("exclude", "never track notes matching GLOB (repeatable)"),
    )
    common.add_argument("--vault", action="store_true", default=argparse.SUPPRESS, help=describe("vault", None))
    common.add_argument(
        "--output-dir",
        dest="output_dir",
        default=argparse.SUPPRESS,
        metavar="DIR",
        help=describe("output_dir", "output folder inside the workspace"),
    )
    common.add_argument(
        "--model",
        default=argparse.SUPPRESS,
        metavar="DIR",
        help=describe("model", None),
    )
    common.add_argument(
        "--verbose", "-v", action="store_true", default=argparse.SUPPRESS, help="log progress details to stderr"
    )
    return common


def add_search_args(p: argparse.ArgumentParser, describe: Describe = bare) -> None:
    """The flags of ``botbin search``."""
    p.add_argument("query", nargs="?", help="what to look for, in your own words")
    p.add_argument(
        "--batch", type=Path, metavar="FILE.jsonl", help='one {"q": ...} per line in, one JSON result list per line out'
    )
    p.add_argument("-k", type=int, default=None, help=describe("top_k", "number of hits"))
    p.add_argument("--alpha", type=float, default=None, help=describe("alpha", None))
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
        help=describe("search_namespaces", "team database (backend = postgres): the namespaces to search"),
    )
    p.add_argument(
        "--per-note",
        type=int,
        default=None,
        metavar="N",
        help=describe("max_hits_per_note", "at most N hits of one note; 0 lifts the cap"),
    )


def add_context_args(p: argparse.ArgumentParser) -> None:
    """The flags of ``botbin context``."""
    p.add_argument("query", help="the task or question")
    p.add_argument(
        "--budget",
        dest="budget_tokens",
        type=int,
        default=DEFAULT_BUDGET_TOKENS,
        metavar="N",
        help=f"most tokens (default {DEFAULT_BUDGET_TOKENS})",
    )
    p.add_argument("--json", action="store_true", help="print tiers, items and token counts as JSON")


def warm_parser() -> QuietParser:
    """A parser of the commands a warm server answers (``search``, ``context``), with the full CLI's flags."""
    common = common_flags()
    parser = QuietParser(prog="botbin", parents=[common], add_help=False)
    sub: Any = parser.add_subparsers(dest="subcommand", required=True, parser_class=QuietParser)
    add_search_args(sub.add_parser("search", parents=[common], add_help=False))
    add_context_args(sub.add_parser("context", parents=[common], add_help=False))
    return parser


def setting_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given as flags (only those given)."""
    return {k: getattr(args, k) for k in SETTING_FLAGS if getattr(args, k, None) is not None}


def search_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The SearchRequest fields of ``botbin search``'s flags (snake_case names; validated by the caller)."""
    filters = {k: getattr(args, k) for k in FILTER_FIELDS if getattr(args, k) is not None}
    return {"query": args.query, **{k: getattr(args, k) for k in SEARCH_FIELDS}, "filters": filters}


def context_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The ContextRequest fields of ``botbin context``'s flags."""
    return {"query": args.query, "budget_tokens": args.budget_tokens}
