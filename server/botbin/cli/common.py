"""What every ``botbin`` subcommand shares: exit codes, the help of a settings flag, the service, the passphrase
prompt and the progress bar (the flags: cli/flags.py)."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botbin.cli.flags import setting_overrides
from botbin.cli.terminal import raw
from botbin.config import FIELDS, range_text, shown_default
from botbin.errors import PassphraseError
from botbin.service import MemoryService

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_WORKSPACE, EXIT_MODEL, EXIT_FORMAT, EXIT_PASSPHRASE = 0, 1, 2, 3, 4, 5, 6
EXIT_REMOTE = 7
#: What each exit code means: the one text of the help's epilog and of README.md's list (scripts/gen_protocol.py).
EXIT_MEANINGS: dict[int, str] = {
    EXIT_OK: "success",
    EXIT_PARTIAL: "some notes failed to sync (the rest synced; each failure is named on stderr)",
    EXIT_USAGE: "bad usage",
    EXIT_WORKSPACE: "workspace unreadable or locked by another sync, or a file botbin must write cannot be (disk full,"
    " over quota, read-only, permission denied: the message names the file; nothing lost, run it again once fixed)",
    EXIT_MODEL: "embedding model unavailable",
    EXIT_FORMAT: "bad AIF-BIN file",
    EXIT_PASSPHRASE: "encrypted store: passphrase missing or wrong (BOTBIN_PASSPHRASE or the prompt)",
    EXIT_REMOTE: 'the team database (backend = "postgres") failed or refused (sync: 1, its local sync done)',
}
EPILOG = "exit codes:\n" + "\n".join(
    textwrap.fill(text, 96, initial_indent=f"  {code}  ", subsequent_indent="     ")
    for code, text in EXIT_MEANINGS.items()
)
Command = Callable[[argparse.Namespace], int]


#: The model's markdown and typography as plain ASCII for the help.
_PLAIN = str.maketrans({"`": None, "·": "*", "−": "-", "–": "-", "≥": ">=", "≤": "<="})


def setting_help(key: str, what: str | None = None) -> str:
    """The help of a flag that sets ``key`` for one run: ``what`` it does (default: the setting's description),
    then the setting's name, default and range, all from the settings model (config_model.py)."""
    field = FIELDS[key]
    bounds = range_text(field)
    where = f"the {key} setting, default {shown_default(field, '')}" + (f", {bounds}" if bounds else "")
    text = f"{what or field.description} ({where})".translate(_PLAIN).replace("%", "%%")
    return text.encode("ascii", "replace").decode("ascii")  # help that prints on any terminal


def add(
    sub: Any, common: argparse.ArgumentParser, name: str, help_text: str, command: Command
) -> argparse.ArgumentParser:
    """Add subcommand ``name``, run by ``command``, with the common flags and the exit-code epilog."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, parents=[common], epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter, help=help_text
    )
    parser.set_defaults(command=command)
    return parser


def workspace_of(args: argparse.Namespace) -> Path:
    path: Path = getattr(args, "workspace", Path.cwd())
    return path


def passphrase(confirm: bool = False) -> Callable[[], str | None]:
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


def service(args: argparse.Namespace, confirm: bool = False, one_shot: bool = False) -> MemoryService:
    """The service of ``--workspace`` with the flags' settings (``one_shot``: a command that answers and exits);
    settings warnings go to stderr."""
    settings = setting_overrides(args)
    memory = MemoryService(workspace_of(args), settings, passphrase=passphrase(confirm), one_shot=one_shot)
    for warning in memory.warnings:
        print(f"botbin: warning: {warning}", file=sys.stderr)
    return memory


def progress_bar(total_hint: int) -> Any:
    """A terminal progress callback (stderr) that counts chunks embedded, or None when stderr is not a terminal."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    # drawn with carriage returns, and no note's text: on the stream under the escaping one (cli/terminal.py)
    bar = tqdm(total=total_hint, unit="chunk", desc="embedding", file=raw(sys.stderr), leave=False, disable=None)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    return update
