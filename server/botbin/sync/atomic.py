"""Atomic file writes (temp file in the same folder, fsync, rename) and removal of stale temp files.

Everything botbin creates is private on POSIX, under any umask (000 included): folders 0700, files 0600
(mkstemp's mode, kept by the rename; ``open_private`` for writers that name their own temp file); folders
that already exist keep their permissions. An OSError of a write names the file it was for, not the temp file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path
from typing import BinaryIO

TEMP_PREFIX = ".botbin-tmp-"
DIR_MODE = 0o700
FILE_MODE = 0o600


def make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents with mode 0700 (existing ones are left as they are).

    Raises OSError if one cannot be created.
    """
    missing: list[Path] = []
    current = folder
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not path.is_dir():
                raise


def atomic_write(path: Path, data: bytes, sync_dir: bool = True) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new one, never a mix.

    Creates missing parent folders (0700); the written file is 0600 (mkstemp's mode). ``sync_dir=False``
    leaves the folder's fsync (which makes the rename durable) to the caller, who can then do it once for
    many files with fsync_dir. Raises OSError if the folder cannot be written; the old file is then intact.
    """
    try:
        make_private_dirs(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _naming(exc, path) from exc
        raise
    if sync_dir:
        fsync_dir(path.parent)


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` naming ``path`` (a failed flush of the temp file names no file at all); same errno and class."""
    if exc.filename == str(path):
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def open_private(path: Path) -> BinaryIO:
    """``path`` opened for writing (created, or truncated) with mode 0600 whatever the umask, for a writer that
    names its own temp file (``writer_temp``); its folder must exist. Raises OSError."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        if hasattr(os, "fchmod"):  # a file left by an earlier writer keeps its mode through O_TRUNC
            os.fchmod(fd, FILE_MODE)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def fsync_dir(folder: Path) -> None:
    """Make the rename durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temps(folder: Path, keep_dirs: tuple[str, ...] = ()) -> int:
    """Delete temp files a killed writer left under ``folder``; return how many were removed. A temp file named
    ``<prefix><name>.<pid>.<thread>`` (a writer outside the sync's lock: the load cache) is left alone while
    process ``pid`` lives: it may be writing it right now. ``keep_dirs``: folders of ``folder`` (by name) whose
    files belong to another writer (a model migration's trees, sync/model_trees.py)."""
    removed = 0
    if not folder.is_dir():
        return 0
    for tmp in folder.rglob(f"{TEMP_PREFIX}*"):
        if _writer_alive(tmp.name) or tmp.relative_to(folder).parts[0] in keep_dirs:
            continue
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed += 1
    return removed


def writer_temp(path: Path) -> Path:
    """The temp file beside ``path`` for a writer outside the sync's lock (``<prefix><name>.<pid>.<thread>``):
    ``remove_stale_temps`` leaves it while this process lives and removes it once the process is gone."""
    return path.with_name(f"{TEMP_PREFIX}{path.name}.{os.getpid()}.{threading.get_ident()}")


def _writer_alive(name: str) -> bool:
    """True if ``name`` is a ``writer_temp`` of a process still running."""
    parts = name.rsplit(".", 2)
    if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
        return False
    try:
        os.kill(int(parts[1]), 0)
    except (ProcessLookupError, OverflowError, ValueError):
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def remove_empty_dirs(start: Path, stop: Path) -> None:
    """Remove ``start`` and its parents while they are empty, never ``stop`` or above it."""
    current = start
    while current != stop and stop in current.parents:
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent
