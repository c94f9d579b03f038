"""One writer per workspace: an exclusive lock file beside the state file (filelock)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from botbin.errors import LockedError, WorkspaceError
from botbin.sync.atomic import FILE_MODE, make_private_dirs
from botbin.sync.note_lock import unlink_planted

LOCK_FILE = ".botbin.lock"


@contextmanager
def workspace_lock(output_dir: Path, timeout_s: float) -> Iterator[None]:
    """Hold the workspace's sync lock; waits up to ``timeout_s`` seconds.

    Raises LockedError naming the lock file when another process keeps it longer.
    """
    path = output_dir / LOCK_FILE
    lock = FileLock(str(path), timeout=timeout_s, mode=FILE_MODE)
    try:
        make_private_dirs(output_dir)
        unlink_planted(path)
        lock.acquire()
    except Timeout:
        raise LockedError(
            f"another botbin process is syncing this workspace (lock held for over {timeout_s:g} s)", path
        ) from None
    except OSError as exc:  # after Timeout, which is an OSError too
        raise WorkspaceError(
            f"cannot create the output folder or its lock file ({exc.strerror or exc}); "
            "is output_dir a file, or read-only?",
            output_dir,
        ) from exc
    try:
        yield
    finally:
        lock.release()
