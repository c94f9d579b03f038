"""Files botbin wrote earlier and reads back are untrusted input: the one check that a path taken from them stays
inside its folder (every symbolic link resolved), the check that a note path read back is one a scan could have
found, and the proof that a file is an output botbin wrote before it is removed.

The output folder is synced, shared and committed by users: whoever can write it can plant a state entry, a
journal line, a cache record or a symbolic link. Every path botbin reads, writes or removes on the strength of
such a file goes through ``Confined`` first.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from botbin.aifbin import MAGIC

OUTPUT_SUFFIX = ".aif-bin"
"""The suffix of every output botbin writes."""
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class Confined:
    """A folder botbin owns (the output folder) and the real paths under it that botbin may use.

    The real path of each parent folder is remembered per instance (a load checks 10,000 files under a few
    folders with one ``lstat`` each): make one per operation, not one per process, so that a folder swapped for
    a link later is seen.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        """``folder``: the folder every checked path must stay in (its own real path is taken once)."""
        self.folder = os.fspath(folder)
        self.real = os.path.realpath(self.folder)
        self._dirs: dict[str, str] = {}

    def real_path(self, path: str | os.PathLike[str], follow: bool = True) -> str | None:
        """The real path of ``path`` (relative ones are taken from the current folder; '..' and every symbolic
        link resolved) when it lies strictly inside the folder, else None. The file itself need not exist.
        ``follow=False``: a link at the last part is not followed (what to write or remove: the link itself)."""
        parent, name = os.path.split(os.path.abspath(path))
        real_parent = self._dirs.get(parent)
        if real_parent is None:
            real_parent = self._dirs[parent] = os.path.realpath(parent)
        if not _within(real_parent, self.real, True) or name in ("", ".", ".."):
            return None
        real = os.path.join(real_parent, name)
        if not follow:
            return real
        try:
            is_link = stat.S_ISLNK(os.lstat(real).st_mode)
        except OSError:
            return real  # missing (or unreadable): whoever uses it finds out
        if not is_link:
            return real
        target = os.path.realpath(real)
        return target if _within(target, self.real, False) else None

    def open(self, path: str | os.PathLike[str]) -> BinaryIO:
        """``path`` opened for reading at its checked real path, never through a link swapped in since the check
        and never blocking on a FIFO planted in its place. Raises OSError if it cannot be read, also (EXDEV,
        naming the file) when a symbolic link takes it out of the folder, and (EINVAL) for a non-regular file."""
        real = self.real_path(path)
        if real is None:
            raise OSError(errno.EXDEV, f"a symbolic link leads out of {self.folder}; not followed", os.fspath(path))
        handle = os.fdopen(os.open(real, _READ_FLAGS), "rb")
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            handle.close()
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        return handle

    def why_not(self, path: str | os.PathLike[str]) -> str:
        """Why ``path`` was refused (``real_path`` gave None), for a message that names the file."""
        return f"{os.fspath(path)}: leads outside {self.folder} (to {os.path.realpath(path)}); botbin leaves it alone"


def _within(real: str, real_folder: str, may_equal: bool) -> bool:
    """True if ``real`` lies under ``real_folder`` (or is it, when ``may_equal``); both real paths."""
    return (may_equal and real == real_folder) or real.startswith(real_folder.rstrip(os.sep) + os.sep)


def confined(folder: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path | None:
    """The real path of ``path`` when it stays inside ``folder`` (``Confined.real_path``), else None."""
    real = Confined(folder).real_path(path)
    return None if real is None else Path(real)


def read_confined(folder: str | os.PathLike[str], path: str | os.PathLike[str]) -> bytes:
    """The bytes of ``path``, a file botbin keeps in ``folder`` (``Confined.open``)."""
    with Confined(folder).open(path) as handle:
        return handle.read()


def note_path_problem(rel: object) -> str | None:
    """Why ``rel`` (a note path read back from a file botbin wrote) is not one a scan could have found: a
    relative POSIX path of a ``.md`` note, without empty, '.' or '..' parts or NUL; None when it is."""
    if not isinstance(rel, str):
        return f"the note path is a {type(rel).__name__}, not a string"
    if not rel.endswith(".md") or rel.startswith("/") or "\0" in rel:
        return f"{rel!r} is not a relative path of a .md note"
    if any(part in ("", ".", "..") for part in rel.split("/")):
        return f"{rel!r} has an empty, '.' or '..' part"
    return None


def is_output(path: str | os.PathLike[str]) -> bool:
    """True if ``path`` is a regular file (not a link) named ``*.aif-bin`` that starts with the AIF-BIN magic:
    the proof that botbin wrote it, asked before botbin removes it."""
    if not os.fspath(path).endswith(OUTPUT_SUFFIX):
        return False
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(MAGIC)) == MAGIC
    except OSError:
        return False
    finally:
        os.close(fd)


def remove_output(guard: Confined, path: str | os.PathLike[str]) -> str | None:
    """Remove the output at ``path`` if it stays inside ``guard``'s folder and is an output botbin wrote
    (``is_output``); a missing file is fine. Returns a warning naming the file when it was left alone or could
    not be removed, else None."""
    real = guard.real_path(path, follow=False)  # a link is judged (and left) itself, never its target
    if real is None:
        return guard.why_not(path)
    if not os.path.lexists(real):
        return None
    if not is_output(real):
        return f"{os.fspath(path)}: not an AIF-BIN file botbin wrote; left as it is"
    try:
        os.unlink(real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{os.fspath(path)}: cannot remove stale output ({exc.strerror or exc})"
    return None
