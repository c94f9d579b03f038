"""The ``botbin`` command line: thin argument parsing and printing over MemoryService.

Exit codes: 0 success; 1 some notes failed to sync (the rest synced); 2 bad usage; 3 the workspace is
unreadable or locked by another process; 4 the embedding model is unavailable; 5 a bad AIF-BIN file;
6 an encrypted store without its passphrase (or with a wrong one).
"""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from botbin import __version__
from botbin.cli_output import print_hits, print_info, print_status, print_sync, sync_json
from botbin.errors import AifBinFormatError, BotbinError, LockedError, ModelError, PassphraseError, WorkspaceError
from botbin.notes_io import extract_source, read_document
from botbin.service import MemoryService

_ISO_DAY = re.compile(r"\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?")
EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_WORKSPACE, EXIT_MODEL, EXIT_FORMAT, EXIT_PASSPHRASE = 0, 1, 2, 3, 4, 5, 6
EPILOG = """exit codes:
  0  success
  1  some notes failed to sync (the rest synced)
  2  bad usage
  3  workspace unreadable or locked by another sync
  4  embedding model unavailable
  5  bad AIF-BIN file
  6  encrypted store: passphrase missing or wrong (BOTBIN_PASSPHRASE or the prompt)"""


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", "-w", type=Path, default=argparse.SUPPRESS,
                        help="workspace folder (default: the current folder)")
    common.add_argument("--include", action="append", default=argparse.SUPPRESS, metavar="GLOB",
                        help="track notes matching GLOB (repeatable; replaces the configured list)")
    common.add_argument("--exclude", action="append", default=argparse.SUPPRESS, metavar="GLOB",
                        help="never track notes matching GLOB (repeatable)")
    common.add_argument("--vault", action="store_true", default=argparse.SUPPRESS,
                        help="vault mode: track every **/*.md note")
    common.add_argument("--output-dir", dest="output_dir", default=argparse.SUPPRESS, metavar="DIR",
                        help="output folder inside the workspace (default memory/aifbin)")
    common.add_argument("--model", default=argparse.SUPPRESS, metavar="DIR",
                        help="a sentence-transformers folder (default: bundled all-MiniLM-L6-v2)")
    common.add_argument("--verbose", "-v", action="store_true", default=argparse.SUPPRESS,
                        help="log progress details to stderr")
    return common


def add(sub: Any, common: argparse.ArgumentParser, name: str, help_text: str) -> argparse.ArgumentParser:
    """Add subcommand ``name`` with the common flags and the exit-code epilog."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, parents=[common], epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter, help=help_text
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = argparse.ArgumentParser(
        prog="botbin", parents=[common], epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Local-first semantic memory for markdown notes: sync to AIF-BIN v2, search by meaning.",
    )
    parser.add_argument("--version", action="version", version=f"botbin {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = add(sub, common, "sync", "sync changed notes into AIF-BIN files")
    p.add_argument("--json", action="store_true", help="print a JSON report (always, even with no change)")
    p.add_argument("--full", action="store_true", help="re-read and re-chunk every note (embeddings are reused)")

    p = add(sub, common, "search", "search the synced notes by meaning")
    p.add_argument("query", nargs="?", help="what to look for, in your own words")
    p.add_argument("--batch", type=Path, metavar="FILE.jsonl",
                   help='one {"q": ...} per line in, one JSON result list per line out')
    p.add_argument("-k", type=int, default=None, help="number of hits (default: top_k setting, 10)")
    p.add_argument("--alpha", type=float, default=None, help="weight of cosine vs BM25, 0..1 (default 0.7)")
    p.add_argument("--json", action="store_true", help="print hits as JSON (0-based lines)")
    p.add_argument("--path", dest="path_glob", help="only notes whose path matches this glob")
    p.add_argument("--tag", help="only notes with this tag")
    p.add_argument("--kind", choices=["hard", "soft", "lore"], help="only chunks of this kind")
    p.add_argument("--since", dest="date_from", help="only notes dated on or after YYYY-MM-DD")
    p.add_argument("--until", dest="date_to", help="only notes dated on or before YYYY-MM-DD")
    p.add_argument("--best-per-note", action="store_true", help="keep only the best hit of each note")

    p = add(sub, common, "status", "index size, last sync, stale notes")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")

    p = add(sub, common, "directives", "list the rules in the notes (hard and soft directives) and their conflicts")
    p.add_argument("path", nargs="?", help="a note or folder (default: the whole workspace)")
    p.add_argument("--json", action="store_true", help="print JSON (0-based lines)")

    p = add(sub, common, "info", "describe one .aif-bin file")
    p.add_argument("file", type=Path, help="a .aif-bin file (relative to the current folder or --workspace)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")

    p = add(sub, common, "extract", "print the original note kept in a .aif-bin file, byte for byte")
    p.add_argument("file", type=Path, help="a .aif-bin file (relative to the current folder or --workspace)")
    p.add_argument("--out", "-o", dest="extract_to", type=Path, metavar="FILE",
                   help="write to this file instead of stdout")

    p = add(sub, common, "context", "the context block an agent gets for a request, within a token budget")
    p.add_argument("query", help="the task or question")
    p.add_argument("--budget", type=int, default=2000, metavar="N", help="most tokens (default 2000)")
    p.add_argument("--json", action="store_true", help="print tiers, items and token counts as JSON")

    p = add(sub, common, "remember", "append an entry to today's memory/YYYY-MM-DD.md and sync it")
    p.add_argument("text", help="what to remember")
    p.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")

    add(sub, common, "encrypt", "encrypt every .aif-bin file of the store in place (AES-256-GCM, Argon2id key)")
    add(sub, common, "decrypt", "turn an encrypted store back into plain .aif-bin files, in place")

    p = add(sub, common, "mcp", "run the MCP server (stdio) for AI agents")

    p = add(sub, common, "lsp", "run the language server (stdio) for editors")
    p.add_argument("--tcp", type=int, default=None, metavar="PORT", help="listen on 127.0.0.1:PORT instead (debugging)")

    p = add(sub, common, "watch", "sync whenever tracked notes change")
    p.add_argument("--debounce-ms", type=int, default=None, help="quiet time before a sync (default 400)")

    from botbin import cli_ingest, cli_lifecycle  # memory lifecycle and conversation commands

    cli_lifecycle.register(sub, common)
    cli_ingest.register(sub, common)
    return parser


def _passphrase(confirm: bool = False) -> Callable[[], str | None]:
    """BOTBIN_PASSPHRASE, else a prompt on a terminal (typed twice when ``confirm``), asked at most once."""
    asked: list[str | None] = []

    def get() -> str | None:
        if not asked:
            value = os.environ.get("BOTBIN_PASSPHRASE") or None
            if value is None and sys.stdin.isatty():
                value = getpass.getpass("botbin passphrase: ") or None
                if value is not None and confirm and getpass.getpass("again: ") != value:
                    raise PassphraseError("the two passphrases differ; nothing was changed")
            asked.append(value)
        return asked[0]

    return get


def _service(args: argparse.Namespace, confirm: bool = False) -> MemoryService:
    overrides = {k: getattr(args, k, None) for k in ("include", "exclude", "vault", "output_dir", "model")}
    if getattr(args, "debounce_ms", None) is not None:
        overrides["debounce_ms"] = args.debounce_ms
    service = MemoryService(getattr(args, "workspace", Path.cwd()), overrides, passphrase=_passphrase(confirm))
    for warning in service.warnings:
        print(f"botbin: warning: {warning}", file=sys.stderr)
    return service


def _progress_bar(total_hint: int) -> Any:
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    bar = tqdm(total=total_hint, unit="note", file=sys.stderr, leave=False, disable=None)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    return update


def cmd_sync(args: argparse.Namespace) -> int:
    service = _service(args)
    report = service.sync(progress=_progress_bar(0), full=args.full)
    if args.json:
        print(json.dumps(sync_json(report), ensure_ascii=False))
    else:
        print_sync(report)
    return EXIT_PARTIAL if report.failed else EXIT_OK


def cmd_encrypt(args: argparse.Namespace) -> int:
    service = _service(args, confirm=True)
    report = service.sync(progress=_progress_bar(0), encryption="encrypt")
    print_sync(report)
    print(f"botbin: {service.output_dir} is encrypted; keep the passphrase safe, it cannot be recovered",
          file=sys.stderr)
    if not service.settings.encryption:
        print("botbin: botbin.toml does not say encryption = true; the store stays encrypted anyway "
              "until `botbin decrypt`", file=sys.stderr)
    return EXIT_PARTIAL if report.failed else EXIT_OK


def cmd_decrypt(args: argparse.Namespace) -> int:
    service = _service(args)
    report = service.sync(progress=_progress_bar(0), encryption="decrypt")
    print_sync(report)
    if service.settings.encryption:
        print("botbin: warning: botbin.toml still says encryption = true, so the next sync encrypts again",
              file=sys.stderr)
    return EXIT_PARTIAL if report.failed else EXIT_OK


def _search_usage_error(args: argparse.Namespace) -> str | None:
    """Why the search flags are unusable, or None."""
    from botbin.cli_output import check_k_alpha

    if (args.query is None) == (args.batch is None):
        return "give a QUERY or --batch FILE.jsonl"
    if args.query is not None and not args.query.strip():
        return "the query is empty"
    if args.alpha is not None and args.alpha != args.alpha:  # NaN
        return "alpha must be a number between 0 and 1, not nan"
    reason = check_k_alpha(args.k, args.alpha)
    if reason:
        return reason
    for flag, value in (("--since", args.date_from), ("--until", args.date_to)):
        if value is not None and not _ISO_DAY.fullmatch(value):
            return f"{flag} takes a date as YYYY, YYYY-MM or YYYY-MM-DD, not {value!r}"
    return None


def cmd_search(args: argparse.Namespace) -> int:
    problem = _search_usage_error(args)
    if problem:
        print(f"botbin search: {problem}", file=sys.stderr)
        return EXIT_USAGE
    from botbin.index.store import SearchFilters

    service = _service(args)
    filters = SearchFilters(args.path_glob, args.tag, args.kind, args.date_from, args.date_to)
    if args.batch is not None:
        from botbin.cli_output import run_batch

        return run_batch(service, args.batch, args.k, args.alpha, filters, args.best_per_note)
    result = service.search(args.query, args.k, args.alpha, filters, args.best_per_note)
    for warning in result.warnings:
        print(f"botbin: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps({"hits": [h.to_dict() for h in result.hits], "degraded": result.degraded,
                          "indexedAt": result.indexed_at}, ensure_ascii=False))
    else:
        print_hits(result.hits, filtered=filters != SearchFilters())
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    service = _service(args)
    status = service.status()
    if args.json:
        print(json.dumps(status.to_dict(), ensure_ascii=False))
    else:
        print_status(status, already_shown=service.warnings)
    return EXIT_OK


def cmd_directives(args: argparse.Namespace) -> int:
    from botbin.cli_output import directives_json, print_directives

    report = _service(args).directives(args.path)
    for warning in report.warnings:
        print(f"botbin: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(directives_json(report), ensure_ascii=False))
    else:
        print_directives(report)
    return EXIT_OK


def _aifbin_path(args: argparse.Namespace) -> Path:
    """FILE as given, else relative to --workspace when that is where it is."""
    file: Path = args.file
    workspace = getattr(args, "workspace", None)
    if not file.exists() and not file.is_absolute() and workspace is not None and (workspace / file).exists():
        return Path(workspace / file)
    return file


def cmd_info(args: argparse.Namespace) -> int:
    path = _aifbin_path(args)
    print_info(read_document(path, _passphrase()), path, args.json)
    return EXIT_OK


def cmd_extract(args: argparse.Namespace) -> int:
    data = extract_source(_aifbin_path(args), _passphrase())
    if args.extract_to is not None:
        try:
            args.extract_to.write_bytes(data)
        except OSError as exc:
            print(f"botbin: error: {args.extract_to}: cannot write ({exc.strerror or exc})", file=sys.stderr)
            return EXIT_USAGE
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return EXIT_OK


def cmd_watch(args: argparse.Namespace) -> int:
    from botbin.sync.watch import watch_workspace

    service = _service(args)
    print(f"botbin: watching {service.root} (Ctrl+C to stop)", file=sys.stderr)
    return watch_workspace(service, print_sync)


def cmd_context(args: argparse.Namespace) -> int:
    result = _service(args).context(args.query, args.budget)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        print(result.text)
        used = ", ".join(f"{t.name} {t.tokens}" for t in result.tiers if t.tokens)
        print(f"botbin: {result.used_tokens}/{result.budget_tokens} tokens ({used})", file=sys.stderr)
    return EXIT_OK


def cmd_remember(args: argparse.Namespace) -> int:
    written, report = _service(args).remember(args.text, args.tag)
    print(f"{written.path}:{written.start_line + 1}-{written.end_line}")
    return EXIT_PARTIAL if report.failed else EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    from botbin.mcp import main as serve

    overrides = {k: getattr(args, k, None) for k in ("include", "exclude", "vault", "output_dir", "model")}
    # the SDK's stdio transport points fd 1 at stderr while serving: stray prints miss the wire
    return serve(getattr(args, "workspace", Path.cwd()), overrides)


def cmd_lsp(args: argparse.Namespace) -> int:
    from botbin.lsp.server import main as serve

    return serve(args.tcp)


COMMANDS = {"sync": cmd_sync, "search": cmd_search, "status": cmd_status, "directives": cmd_directives,
            "info": cmd_info, "extract": cmd_extract, "watch": cmd_watch, "lsp": cmd_lsp, "mcp": cmd_mcp,
            "context": cmd_context, "remember": cmd_remember, "encrypt": cmd_encrypt, "decrypt": cmd_decrypt}


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    if name in COMMANDS:
        return COMMANDS[name]
    from botbin import cli_ingest, cli_lifecycle

    return {**cli_lifecycle.COMMANDS, **cli_ingest.COMMANDS}[name]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
                        format="botbin: %(levelname)s %(name)s: %(message)s")
    try:
        code = _command(args.command)(args)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below, not at exit
        return code
    except (WorkspaceError, LockedError) as exc:
        code = EXIT_WORKSPACE
        message = str(exc)
    except ModelError as exc:
        code, message = EXIT_MODEL, str(exc)
    except PassphraseError as exc:
        code, message = EXIT_PASSPHRASE, str(exc)
    except AifBinFormatError as exc:
        code, message = EXIT_FORMAT, str(exc)
    except BotbinError as exc:
        code, message = EXIT_USAGE, str(exc)
    except KeyboardInterrupt:
        print("botbin: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`botbin search ... | head -1`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    print(f"botbin: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
