"""``botbin ingest``: conversation logs (JSONL turns) distilled into per-user soul files (memory/conversation/).

Turns are read line by line (``-`` reads standard input, one turn at a time) and embedded EMBED_BATCH at a
time. SIGINT and SIGTERM stop the reading, and the turns already buffered are distilled and written before
the process exits (128 + the signal number); a signal that arrives while a turn is being observed waits for
it to finish, so the observer's state is never torn. The workspace is synced at the end, so the soul files
are searchable at once. Exit codes: those of ``botbin`` (1 also when some lines were skipped).
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from botbin.cli.common import EXIT_OK, EXIT_PARTIAL, add, service
from botbin.errors import BotbinError
from botbin.memory.conversation.turns import LineProblem, read_turns

log = logging.getLogger(__name__)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the conversation subcommands to the ``botbin`` parser."""
    p = add(sub, common, "ingest", "distil conversation turns (JSONL) into per-user soul files, then sync", cmd_ingest)
    p.add_argument(
        "files",
        nargs="+",
        type=Path,
        metavar="FILE.jsonl",
        help='one turn per line: {"role", "content", "timestamp", "session", "user"}; - reads stdin',
    )
    p.add_argument("--user", default=None, help="the user of turns that name none (default: user)")
    p.add_argument("--dry-run", action="store_true", help="print the blocks instead of writing them")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


class _Interrupted(BaseException):
    """Raised by the signal handler outside a critical section (e.g. while waiting for input)."""


class _Stop:
    """SIGINT/SIGTERM -> stop reading; deferred while a turn is observed or the buffers are flushed."""

    def __init__(self) -> None:
        self.signum = 0
        self.critical = False
        self._previous: dict[int, Any] = {}

    def handler(self, signum: int, frame: FrameType | None) -> None:
        if self.signum:
            return  # a second signal while we flush is ignored: the flush is what the first one asked for
        self.signum = signum
        if not self.critical:
            raise _Interrupted

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self.handler)

    def restore(self) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)


def _open_turns(path: Path, user: str | None) -> Iterator[Any]:
    if str(path) == "-":
        stdin = Path("/dev/stdin") if Path("/dev/stdin").exists() else None
        if stdin is None:
            raise BotbinError("reading turns from standard input needs /dev/stdin")
        return read_turns(stdin, user)
    if not path.is_file():
        raise BotbinError("no such file", path)
    return read_turns(path, user)


def _ingest(
    observer: Any, files: list[Path], user: str | None, stop: _Stop, out: Callable[[str], None], problems: list[str]
) -> None:
    """Observe every turn of ``files``. Stops (raising _Interrupted) on a signal."""
    for path in files:
        size = 1 if str(path) == "-" else observer.batch_size
        batch: list[Any] = []
        items = _open_turns(path, user)
        while True:
            item = next(items, None)
            if isinstance(item, LineProblem):
                problems.append(str(item))
                print(f"botbin: {item}", file=sys.stderr)
                continue
            if item is not None:
                batch.append(item)
            if batch and (item is None or len(batch) >= size):
                _observe(observer, batch, stop, out)
                batch = []
            if item is None:
                break


def _observe(observer: Any, batch: list[Any], stop: _Stop, out: Callable[[str], None]) -> None:
    stop.critical = True
    try:
        vectors = observer.embed([t.content for t in batch])
        for turn, vector in zip(batch, vectors, strict=True):
            result = observer.observe(turn, vector)
            log.info("turn %d (%s) observed; %d buffered", result.turn_number, result.user, result.buffered)
            for d in result.distilled:
                if d.status == "dry-run":
                    out(d.block.text)
    finally:
        stop.critical = False
    if stop.signum:
        raise _Interrupted


def cmd_ingest(args: argparse.Namespace) -> int:
    memory = service(args)
    observer = memory.observer(write=not args.dry_run)
    stop, problems = _Stop(), list[str]()
    printed: list[str] = []
    out = printed.append if args.json else (lambda text: print(text))
    stop.install()
    try:
        try:
            _ingest(observer, list(args.files), args.user, stop, out, problems)
        except _Interrupted:
            name = signal.Signals(stop.signum).name if stop.signum else "a signal"
            print(f"botbin: {name}: distilling the {observer.buffered()} buffered turns before exit", file=sys.stderr)
        stop.critical = True
        for d in observer.flush():
            if d.status == "dry-run":
                out(d.block.text)
        report = memory.sync() if observer.stats.soul_files else None
    finally:
        stop.restore()
    failed = report is not None and bool(report.failed)
    _summary(args, observer, problems, printed, failed)
    if stop.signum:
        return 128 + stop.signum
    return EXIT_PARTIAL if problems or failed else EXIT_OK


def _summary(
    args: argparse.Namespace, observer: Any, problems: list[str], blocks: list[str], sync_failed: bool
) -> None:
    stats = observer.stats
    skipped = sum(not p.endswith("(turn kept)") for p in problems)
    summary = {
        "turnsRead": stats.turns,
        "linesSkipped": skipped,
        "admitted": stats.admitted,
        "protectedRules": stats.protected,
        "blocksWritten": stats.blocks_written,
        "duplicatesSkipped": stats.duplicates_skipped,
        "emptyBuffers": stats.empty_buffers,
        "soulFiles": sorted(stats.soul_files),
        "dryRun": args.dry_run,
        "syncFailed": sync_failed,
    }
    if args.json:
        print(json.dumps({**summary, "problems": problems, "blocks": blocks}, ensure_ascii=False))
        return
    rows = [
        ("turns read", stats.turns),
        ("lines skipped", skipped),
        ("turns admitted", stats.admitted),
        ("protected rules", stats.protected),
        ("blocks written" if not args.dry_run else "blocks (dry run)", stats.blocks_written),
        ("duplicates skipped", stats.duplicates_skipped),
        ("soul files", ", ".join(sorted(stats.soul_files)) or "-"),
    ]
    for label, value in rows:
        print(f"{label:<19} {value}")
