"""One writer at a time per note botbin writes (a daily note, a soul file), across threads and processes.

``remember`` reads today's note, adds its entry and renames a new file over it; two writers that overlap both
read the old note and the second rename drops the first one's entry (30 concurrent MCP remembers lost 13-20
of them). Each such read-and-write runs under this lock: a thread lock of the process, then a file lock
(filelock: ``flock`` on POSIX) in the output folder's ``.locks/``, one small file per note (named by its path,
readable, plus a hash so two paths never share one). The lock files stay (removing a lock file that another
process has open but not yet locked would let two writers in); a note's lock is held for milliseconds. A symbolic
link put in their place (the output folder is shared) is removed, never locked through.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from botbin.errors import LockedError, WorkspaceError
from botbin.sync.atomic import FILE_MODE, make_private_dirs

log = logging.getLogger(__name__)

#: The folder of note locks, inside the output folder.
LOCK_DIR = ".locks"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def lock_path(lock_dir: Path, rel: str) -> Path:
    """The lock file of note ``rel`` (relative POSIX path) in ``lock_dir``: ``memory_2026-12-01.md-<hash>.lock``."""
    digest = hashlib.sha256(rel.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return lock_dir / f"{_UNSAFE.sub('_', rel)[-80:]}-{digest}.lock"


def unlink_planted(path: Path) -> None:
    """Remove a symbolic link put at ``path`` (the lock folder, or a lock file): a lock made through it would be a
    file outside the workspace, or none at all. Only the link goes; what it leads to is left alone."""
    if path.is_symlink():
        log.warning("%s: a symbolic link where botbin keeps a lock; removed (what it led to is left alone)", path)
        path.unlink()


def _thread_lock(key: str) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(key, threading.Lock())


@contextmanager
def note_lock(lock_dir: Path, rel: str, timeout_s: float) -> Iterator[None]:
    """Hold note ``rel``'s write lock (this process's threads and other processes); waits up to ``timeout_s``
    seconds for each of the two locks.

    Raises LockedError naming the lock file when another writer keeps it longer, WorkspaceError when the lock
    folder cannot be created.
    """
    path = lock_path(lock_dir, rel)
    local = _thread_lock(str(path))
    if not local.acquire(timeout=timeout_s):
        raise LockedError(f"another writer of {rel} in this process held it for over {timeout_s:g} s", path)
    try:
        lock = FileLock(str(path), timeout=timeout_s, mode=FILE_MODE, thread_local=False)
        try:
            unlink_planted(lock_dir)
            make_private_dirs(lock_dir)
            unlink_planted(path)
            lock.acquire()
        except Timeout:
            why = f"another botbin process is writing {rel} (lock held for over {timeout_s:g} s)"
            raise LockedError(why, path) from None
        except OSError as exc:  # after Timeout, which is an OSError too
            raise WorkspaceError(
                f"cannot create the lock of {rel} ({exc.strerror or exc}); is the output folder read-only?", lock_dir
            ) from exc
        try:
            yield
        finally:
            lock.release()
    finally:
        local.release()
