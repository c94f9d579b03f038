"""The ``botbin`` command line: the parser and the entry point (``botbin.cli:main``). Each subcommand lives in
one module of this package (commands, lifecycle, ingest) and is dispatched by argparse ``set_defaults``.

Exit codes: 0 success; 1 some notes failed to sync (the rest synced); 2 bad usage; 3 the workspace is
unreadable or locked by another process, or a file cannot be written (StorageError: disk full, read-only);
4 the embedding model is unavailable; 5 a bad AIF-BIN file; 6 an encrypted store without its passphrase (or
with a wrong one).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from botbin.cli.startup import importing

if TYPE_CHECKING:
    import argparse

# Only the standard library's lightest modules above: an agent host's hook (cli/hook.py) and a warm answer
# (cli/warm.py) pay a prompt's time for every import here; the rest is imported where it is used.

# The exit codes, repeated from cli/common.py so that a warm answer (cli/warm.py) imports nothing heavy.
EXIT_USAGE, EXIT_WORKSPACE, EXIT_MODEL, EXIT_FORMAT, EXIT_PASSPHRASE, EXIT_REMOTE = 2, 3, 4, 5, 6, 7


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from botbin import __version__
    from botbin.cli import commands, db, ingest, lifecycle, studio
    from botbin.cli.common import EPILOG, setting_help
    from botbin.cli.flags import common_flags

    common = common_flags(setting_help)
    parser = argparse.ArgumentParser(
        prog="botbin",
        parents=[common],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Local-first semantic memory for markdown notes: sync to AIF-BIN v2, search by meaning.",
    )
    parser.add_argument("--version", action="version", version=f"botbin {__version__}")
    sub = parser.add_subparsers(dest="subcommand", required=True, metavar="COMMAND")
    for module in (commands, lifecycle, ingest, db, studio):
        module.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command: ``search`` and ``context`` are first offered to a running server of the workspace
    (cli/warm.py), which answers without this process loading the index or the model."""
    entry = argv is None  # the process's own command line (not a test or a host calling main)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["hook"]:  # an agent host's hook: standard library only, never the command table
        from botbin.cli.hook import main as hook

        return hook(argv[1:])
    from botbin.cli.warm import try_warm

    warm = try_warm(argv)
    if warm is not None:
        return warm
    with importing("commands", process=entry):  # the subcommands' imports (the service, numpy, ...)
        parser = build_parser()
    args = parser.parse_args(argv)
    from botbin.cli.terminal import terminal_streams

    # JSON stays exact, and stdout is the transport of the LSP and MCP servers: those are not escaped.
    exact = (
        getattr(args, "json", False) or getattr(args, "batch", None) is not None or args.subcommand in ("lsp", "mcp")
    )
    with terminal_streams(raw_stdout=exact):
        import logging

        logging.basicConfig(
            stream=sys.stderr,
            level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
            format="botbin: %(levelname)s %(name)s: %(message)s",
        )
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command; a BotbinError becomes its exit code and one line on stderr."""
    from botbin.errors import (
        AifBinFormatError,
        BotbinError,
        LockedError,
        ModelError,
        PassphraseError,
        RemoteIndexError,
        WorkspaceError,
    )

    try:
        code: int = args.command(args)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below, not at exit
        return code
    except (WorkspaceError, LockedError) as exc:
        code, message = EXIT_WORKSPACE, str(exc)
    except ModelError as exc:
        code, message = EXIT_MODEL, str(exc)
    except PassphraseError as exc:
        code, message = EXIT_PASSPHRASE, str(exc)
    except AifBinFormatError as exc:
        code, message = EXIT_FORMAT, str(exc)
    except RemoteIndexError as exc:
        code, message = EXIT_REMOTE, str(exc)
    except BotbinError as exc:
        code, message = EXIT_USAGE, str(exc)
    except KeyboardInterrupt:
        print("botbin: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`botbin search ... | head -1`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    print(f"botbin: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
