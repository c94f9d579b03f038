"""The core ``botbin`` subcommands: sync, search, status, directives, info, extract, context, remember, encrypt,
decrypt, watch, and the two servers (mcp, lsp). Thin: parse, call the service, print (cli/output.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botbin.cli.answers import answer_context, answer_search, context_request, search_request
from botbin.cli.common import (
    EXIT_MODEL,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    EXIT_WORKSPACE,
    add,
    passphrase,
    progress_bar,
    service,
    setting_help,
    workspace_of,
)
from botbin.cli.db import print_published
from botbin.cli.flags import add_context_args, add_search_args, search_fields, setting_overrides
from botbin.cli.output import (
    directives_json,
    print_directives,
    print_info,
    print_migration,
    print_status,
    print_sync,
    run_batch,
)
from botbin.errors import LockedError, ModelError
from botbin.facade import note_of_aifbin, read_aifbin
from botbin.service import MemoryService
from botbin.wire.requests import SyncRequest

if TYPE_CHECKING:
    from botbin.sync.report import SyncReport
    from botbin.workspace.migration import MigrationReport


def cmd_sync(args: argparse.Namespace) -> int:
    memory = service(args)
    report = memory.sync(SyncRequest(full=args.full, prune=args.prune), progress_bar(0))
    if not args.json:
        print_sync(report)
    moved, short = migrate(memory, args.json)  # the index moves to the setting's model, when another built it
    if args.json:
        print(json.dumps({**report.to_dict(), "migration": moved.to_dict() if moved else None}, ensure_ascii=False))
    print_published(report)
    if moved is not None and moved.publish is not None:
        print_published(moved.publish)  # the new model's vectors
    if short and moved is None:
        return EXIT_MODEL  # the setting names no model: the index stays on its own
    return EXIT_PARTIAL if report.failed or report.publish_error or short else EXIT_OK


def migrate(memory: MemoryService, quiet: bool) -> tuple[MigrationReport | None, bool]:
    """Run a due model migration in the foreground (a bar on a terminal; ``quiet``: no summary) and the report
    (None when none ran), and whether it fell short for a reason to fix: the index left on the old model, or the
    switch not published."""
    try:
        moved = memory.ws.migrate(progress_bar(0))
    except ModelError:  # the settings warning names it (MemoryService.warnings)
        return None, True
    except LockedError as exc:
        print(f"botbin: the model migration waits: {exc} (`botbin status` shows its progress)", file=sys.stderr)
        return None, False
    if moved is None:
        return None, False
    if not quiet:
        print_migration(moved)
    return moved, not moved.switched or bool(moved.publish and moved.publish.publish_error)


def cmd_encrypt(args: argparse.Namespace) -> int:
    memory = service(args, confirm=True)
    report = memory.sync(SyncRequest(encryption="encrypt"), progress_bar(0))
    print_sync(report)
    print(
        f"botbin: {memory.output_dir} is encrypted; keep the passphrase safe, it cannot be recovered", file=sys.stderr
    )
    if not memory.settings.encryption:
        print(
            "botbin: botbin.toml does not say encryption = true; the store stays encrypted anyway "
            "until `botbin decrypt`",
            file=sys.stderr,
        )
    return EXIT_PARTIAL if report.failed else EXIT_OK


def cmd_decrypt(args: argparse.Namespace) -> int:
    memory = service(args)
    report = memory.sync(SyncRequest(encryption="decrypt"), progress_bar(0))
    print_sync(report)
    if memory.settings.encryption:
        print(
            "botbin: warning: botbin.toml still says encryption = true, so the next sync encrypts again",
            file=sys.stderr,
        )
    return EXIT_PARTIAL if report.failed else EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    request = search_request(args)
    if isinstance(request, str):
        print(f"botbin search: {request}", file=sys.stderr)
        return EXIT_USAGE
    memory = service(args, one_shot=True)  # answers and exits: no HNSW load it would never use
    if args.batch is not None:
        return run_batch(memory, args.batch, search_fields(args))
    return answer_search(memory, request, args.json, sys.stdout, sys.stderr)


def cmd_status(args: argparse.Namespace) -> int:
    memory = service(args)
    status = memory.status()
    if args.json:
        print(json.dumps(status.to_dict(), ensure_ascii=False))
    else:
        print_status(status, already_shown=memory.warnings)
    return EXIT_OK


def cmd_directives(args: argparse.Namespace) -> int:
    report = service(args).directives(args.path)
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
    print_info(read_aifbin(path, passphrase()), path, args.json)
    return EXIT_OK


def cmd_extract(args: argparse.Namespace) -> int:
    data = note_of_aifbin(_aifbin_path(args), passphrase())
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
    memory = service(args)
    print(f"botbin: watching {memory.root} (Ctrl+C to stop)", file=sys.stderr)
    memory.ws.migrate_in_background()  # a due model migration goes on behind the syncs (`botbin status`)

    def report(synced: SyncReport) -> None:
        print_sync(synced)
        print_published(synced)

    return memory.watch(report)


def cmd_context(args: argparse.Namespace) -> int:
    request = context_request(args)
    if isinstance(request, str):
        print(f"botbin context: {request}", file=sys.stderr)
        return EXIT_USAGE
    memory = service(args, one_shot=True)  # answers and exits: no HNSW load it would never use
    return answer_context(memory, request, args.json, sys.stdout, sys.stderr)


def cmd_remember(args: argparse.Namespace) -> int:
    written, report = service(args).remember(args.text, args.tag)
    print(f"{written.path}:{written.start_line + 1}-{written.end_line}")
    for failure in report.failed:
        print(f"botbin: {failure.path}: {failure.reason}", file=sys.stderr)
    return EXIT_PARTIAL if report.failed else EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    # The index and the model load while the MCP SDK imports (seconds): the first tool call finds them ready.
    memory = MemoryService(workspace_of(args), setting_overrides(args))
    memory.warm_in_background()
    from botbin.mcp import main as serve

    # the SDK's stdio transport points fd 1 at stderr while serving: stray prints miss the wire
    return serve(workspace_of(args), setting_overrides(args), memory)


def cmd_serve(args: argparse.Namespace) -> int:
    """Answer warm ``botbin search`` / ``context`` and the host ops until stopped (or idle for ``--idle-exit-s``):
    the socket opens at once, the index and the model load behind it (a request that needs them waits)."""
    import signal
    import threading

    memory = service(args)
    memory.warm_in_background()  # a failure is logged; searches then say so, or fall back to words only
    from botbin.cli.warm_server import WarmServer  # the wire models import while the model loads

    warm = WarmServer(memory)
    if not warm.start():
        print(f"botbin: error: cannot answer for {memory.root} at {warm.path} (see above)", file=sys.stderr)
        return EXIT_WORKSPACE
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(f"botbin: serving {memory.root} at {warm.path} (Ctrl+C to stop)", file=sys.stderr, flush=True)
    idle_s = args.idle_exit_s
    try:
        while not stop.wait(min(idle_s, 30.0) if idle_s else None):
            if idle_s and warm.idle_s() >= idle_s:
                print(f"botbin: no request for {idle_s:g} s; stopping", file=sys.stderr, flush=True)
                break
    except KeyboardInterrupt:
        pass
    finally:
        warm.stop()
    return EXIT_OK


def cmd_lsp(args: argparse.Namespace) -> int:
    from botbin.cli.startup import importing
    from botbin.facade import preload_bundled_model

    preload_bundled_model()  # the model's session opens while pygls and the features import (seconds)
    with importing("lsp"):
        from botbin.lsp.main import main as serve

    return serve(args.tcp)


def cmd_hook(args: argparse.Namespace) -> int:
    from botbin.cli.hook import main as hook

    given = getattr(args, "workspace", None)  # reached only when flags come first (main dispatches earlier)
    return hook([args.event, *(["--workspace", str(given)] if given is not None else [])])


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the core subcommands to the ``botbin`` parser."""
    p = add(sub, common, "sync", "sync changed notes into AIF-BIN files", cmd_sync)
    p.add_argument("--json", action="store_true", help="print a JSON report (always, even with no change)")
    p.add_argument("--full", action="store_true", help="re-read and re-chunk every note (embeddings are reused)")
    p.add_argument(
        "--prune",
        action="store_true",
        help="drop notes no longer tracked even when they are most of the index (their embeddings are kept for reuse)",
    )

    p = add(sub, common, "search", "search the synced notes by meaning", cmd_search)
    add_search_args(p, setting_help)

    p = add(sub, common, "status", "index size, last sync, stale notes", cmd_status)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")

    p = add(
        sub,
        common,
        "directives",
        "list the rules in the notes (hard and soft directives) and their conflicts",
        cmd_directives,
    )
    p.add_argument("path", nargs="?", help="a note or folder (default: the whole workspace)")
    p.add_argument("--json", action="store_true", help="print JSON (0-based lines)")

    p = add(sub, common, "info", "describe one .aif-bin file", cmd_info)
    p.add_argument("file", type=Path, help="a .aif-bin file (relative to the current folder or --workspace)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")

    p = add(sub, common, "extract", "print the original note kept in a .aif-bin file, byte for byte", cmd_extract)
    p.add_argument("file", type=Path, help="a .aif-bin file (relative to the current folder or --workspace)")
    p.add_argument(
        "--out", "-o", dest="extract_to", type=Path, metavar="FILE", help="write to this file instead of stdout"
    )

    p = add(sub, common, "context", "the context block an agent gets for a request, within a token budget", cmd_context)
    add_context_args(p)

    p = add(sub, common, "remember", "append an entry to today's memory/YYYY-MM-DD.md and sync it", cmd_remember)
    p.add_argument("text", help="what to remember")
    p.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")

    add(
        sub,
        common,
        "encrypt",
        "encrypt every .aif-bin file of the store in place (AES-256-GCM, Argon2id key)",
        cmd_encrypt,
    )
    add(sub, common, "decrypt", "turn an encrypted store back into plain .aif-bin files, in place", cmd_decrypt)

    add(sub, common, "mcp", "run the MCP server (stdio) for AI agents", cmd_mcp)

    p = add(sub, common, "serve", "keep the index and model loaded and answer search/context at once", cmd_serve)
    p.add_argument(
        "--idle-exit-s", type=float, default=0.0, metavar="S", help="stop after S seconds without a request (0: never)"
    )

    p = add(
        sub, common, "hook", "a Claude Code hook: reads its JSON on stdin, prints its output (never fails)", cmd_hook
    )
    p.add_argument("event", help="SessionStart, UserPromptSubmit, Stop, PreCompact or SessionEnd")

    p = add(sub, common, "lsp", "run the language server (stdio) for editors", cmd_lsp)
    p.add_argument("--tcp", type=int, default=None, metavar="PORT", help="listen on 127.0.0.1:PORT instead (debugging)")

    p = add(sub, common, "watch", "sync whenever tracked notes change", cmd_watch)
    p.add_argument(
        "--debounce-ms", type=int, default=None, help=setting_help("debounce_ms", "quiet time before a sync")
    )
