"""One writer per workspace: an exclusive lock file beside the state file (filelock)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from botbin.errors import LockedError

LOCK_FILE = ".botbin.lock"


@contextmanager
def workspace_lock(output_dir: Path, timeout_s: float) -> Iterator[None]:
    """Hold the workspace's sync lock; waits up to ``timeout_s`` seconds.

    Raises LockedError naming the lock file when another process keeps it longer.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / LOCK_FILE
    lock = FileLock(str(path), timeout=timeout_s)
    try:
        lock.acquire()
    except Timeout:
        raise LockedError(
            f"another botbin process is syncing this workspace (lock held for over {timeout_s:g} s)", path
        ) from None
    try:
        yield
    finally:
        lock.release()
