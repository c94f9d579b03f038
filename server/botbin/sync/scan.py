"""Find the tracked notes of a workspace: include/exclude globs, always-excluded folders, symbolic links, stats."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pathspec
from wcmatch import glob as wglob

from botbin.config import ALWAYS_EXCLUDED_DIRS, Settings, safe_globs
from botbin.errors import BotbinError, WorkspaceError
from botbin.sync.names import KEPT, blocked_folder, shown_name, valid_name

_GLOB_FLAGS = wglob.GLOBSTAR
_MAGIC = re.compile(r"[*?\[{]")
_HINT = "set follow_symlinks = true to follow it"


@dataclass(frozen=True)
class FileStat:
    """What the fast path of change detection compares. Size and mtime alone are fooled by an edit whose
    mtime is put back (``cp -p``, ``rsync -a``, ``tar x``, a backup restore): that write still moves the
    inode's change time (which no user call can set) or makes a new inode, so both are compared too."""

    size: int
    """Size in bytes."""
    mtime_ns: int
    """Modification time, nanoseconds since the epoch."""
    ino: int = -1
    """Inode number (st_ino); -1 when unknown."""
    ctime_ns: int = -1
    """Inode change time (st_ctime_ns; on Windows the creation time), ns since the epoch; -1 when unknown."""

    @classmethod
    def of(cls, st: os.stat_result) -> FileStat:
        """The parts of ``st`` that change detection compares."""
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


@dataclass(frozen=True)
class ScanResult:
    """The tracked notes found in one scan."""

    files: dict[str, FileStat]
    """Relative POSIX path -> stat, for every tracked note."""
    unreadable_dirs: tuple[str, ...] = ()
    """Relative folders that could not be listed; notes under them are kept as they were."""
    warnings: tuple[str, ...] = ()
    """Problems found, each naming the path and the reason."""
    folders: tuple[str, ...] = ()
    """Relative POSIX paths of the folders walked ("" is the root), a followed link under its own name."""
    bad_names: tuple[str, ...] = ()
    """Tracked notes whose path is not valid UTF-8, shown as ``shown_name`` writes them; never in ``files`` (no
    state file, AIF-BIN file or tokenizer can hold such a name), each a failed note of the sync."""

    def covers(self, rel: str) -> bool:
        """True if ``rel`` lies under a folder that could not be read (so its absence proves nothing)."""
        return any(rel == d or rel.startswith(d.rstrip("/") + "/") or d == "" for d in self.unreadable_dirs)


def walk_roots(globs: tuple[str, ...]) -> list[str]:
    """Folders to walk: each glob's literal leading folders ("memory/**/*.md" -> "memory").

    Globs that could leave the workspace (absolute, or with a '..' segment) are left out.
    """
    roots: set[str] = set()
    for pattern in safe_globs(globs):
        parts = pattern.split("/")
        literal = []
        for part in parts[:-1]:
            if _MAGIC.search(part):
                break
            if part not in ("", "."):
                literal.append(part)
        else:
            if not _MAGIC.search(parts[-1]):
                roots.add("/".join(literal))  # a plain file path: its folder
                continue
        roots.add("/".join(literal))
    # Drop roots nested under another root.
    ordered = sorted(roots, key=len)
    kept: list[str] = []
    for root in ordered:
        if not any(root == k or k == "" or root.startswith(k + "/") for k in kept):
            kept.append(root)
    return kept


class TrackedMatcher:
    """Decides which relative paths are tracked notes; the globs are compiled once."""

    def __init__(self, settings: Settings) -> None:
        self._out = settings.output_dir.strip("/")
        # Unsafe globs are dropped here too: Settings built in code skip load_settings' checks.
        self._include = wglob.compile(list(safe_globs(settings.tracked_globs)), flags=_GLOB_FLAGS)
        exclude = safe_globs(settings.exclude)
        self._exclude = wglob.compile(list(exclude), flags=_GLOB_FLAGS) if exclude else None
        # Also read the way .gitignore reads them: "Archive" or "Archive/" is that folder at any depth.
        self._ignored = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None

    def __call__(self, rel: str) -> bool:
        """True if the relative POSIX path ``rel`` is a tracked note."""
        # Only ".md" exactly: "a.md" and "a.MD" would otherwise share one output file.
        if not rel.endswith(".md") or rel.startswith(self._out + "/"):
            return False
        if any(p in ALWAYS_EXCLUDED_DIRS for p in rel.split("/")[:-1]):
            return False
        if not self._include.match(rel):
            return False
        if self._exclude is not None and self._exclude.match(rel):
            return False
        return not (self._ignored is not None and self._ignored.match_file(rel))


def check_root(root: Path) -> None:
    """Raise WorkspaceError unless ``root`` is a folder that can be listed."""
    if not root.is_dir():
        raise WorkspaceError("workspace folder does not exist or is not a folder; nothing was changed", root)
    try:
        with os.scandir(root):
            pass
    except OSError as exc:
        raise WorkspaceError(f"workspace folder cannot be read ({exc.strerror}); nothing was changed", root) from exc


def _inside(real: str, real_root: str) -> bool:
    """True if ``real`` is ``real_root`` or lies under it (both from os.path.realpath)."""
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def outside_target(root: Path, rel: str) -> str | None:
    """Where ``root/rel`` really leads when a symbolic link takes it outside ``root``; None if it stays inside."""
    real = os.path.realpath(root / rel)
    return None if _inside(real, os.path.realpath(root)) else real


def write_target(root: Path, rel: str, follow_symlinks: bool, what: str) -> Path:
    """The real path through which botbin may write note ``rel`` (``what`` names it in errors, e.g. "the soul
    file"): a link inside the workspace is followed (the target is written, the link stays).

    Raises BotbinError when a link takes it outside ``root`` (unless ``follow_symlinks``), when it exists
    without its owner's write bit (botbin leaves it as it is), or when it cannot be inspected.
    """
    outside = outside_target(root, rel)
    if outside is not None and not follow_symlinks:
        raise BotbinError(
            f"{what} links outside the workspace (to {outside}); botbin does not write there "
            "unless follow_symlinks is set",
            root / rel,
        )
    path = (root / rel).resolve()
    try:
        read_only = path.exists() and not stat.S_IMODE(path.stat().st_mode) & stat.S_IWUSR
    except OSError as exc:
        raise BotbinError(f"cannot read {what} ({exc.strerror or exc})", path) from exc
    if read_only:
        raise BotbinError(f"{what} is read-only; botbin leaves it as it is", path)
    return path


def read_note(root: Path, rel: str, follow_symlinks: bool) -> bytes:
    """The bytes of note ``rel``, refusing (unless ``follow_symlinks``) one whose real path lies outside
    ``root``, such as a note replaced by a link after the scan.

    Raises FileNotFoundError if it is gone, OSError (EXDEV, naming the target) if it leads outside.
    """
    path = root / rel
    if follow_symlinks:
        return read_regular(path)
    real = os.path.realpath(path)
    if not _inside(real, os.path.realpath(root)):
        raise OSError(errno.EXDEV, f"symbolic link to {real}, outside the workspace; not followed ({_HINT})", str(path))
    return read_regular(Path(real), getattr(os, "O_NOFOLLOW", 0))  # the checked path, never a link swapped in since


def read_regular(path: Path, flags: int = 0) -> bytes:
    """The bytes of ``path`` when it is a regular file. Raises OSError (EINVAL, naming it) for a FIFO, a device or
    a folder put in a note's place (reading one would block, or never end), and as reading it does."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | flags)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a folder); not read", str(path))
        return handle.read()


class _Walk:
    """One scan's walk of the folder tree: first the real folders, then the folders reached through
    symbolic links. Each folder (by st_dev, st_ino) is walked at most once each way, so a link loop ends at
    the first folder seen again, and a note already found at its real path is not tracked again under a
    link's path."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.follow = settings.follow_symlinks
        self.out = settings.output_dir.strip("/")
        self.tracked = TrackedMatcher(settings)
        self.files: dict[str, FileStat] = {}
        self.folders: list[str] = []
        self.unreadable: list[str] = []
        self.warnings: list[str] = []
        self.bad_names: list[str] = []
        self._seen: set[tuple[bool, int, int]] = set()
        """(through a link, st_dev, st_ino) of each folder walked."""
        self._real_notes: dict[tuple[int, int], str] = {}
        """(st_dev, st_ino) -> path of each note found at its real path (one file, one note: a hard link
        to a note already found is not tracked again)."""
        self._stack: list[tuple[str, bool]] = []
        """Folders to list: (relative path, reached through a link)."""
        self._linked: deque[str] = deque()
        """Folders reached through a link, listed once the real tree is done."""

    def run(self, starts: list[str]) -> None:
        """Walk the folders ``starts`` (relative POSIX paths) and everything under them."""
        for start in starts:
            path = os.path.join(self.root, start)
            if not os.path.isdir(path):
                continue
            real = os.path.realpath(path)
            if real == os.path.normpath(os.path.join(self.real_root, start)):
                self._stack.append((start, False))
            else:  # the start folder, or one above it, is a link
                self._queue_link(start, real, None)
        while self._stack or self._linked:
            self._list(*(self._stack.pop() if self._stack else (self._linked.popleft(), True)))

    def _warn(self, rel: str, reason: str) -> None:
        self.warnings.append(f"{os.path.join(self.root, rel)}: {reason}")

    def _skipped_dir(self, rel: str) -> bool:
        """Folders never scanned: dot folders, ALWAYS_EXCLUDED_DIRS and the output folder."""
        name = rel.rsplit("/", 1)[-1]
        return name in ALWAYS_EXCLUDED_DIRS or name.startswith(".") or rel == self.out

    def _queue_link(self, rel: str, real: str, parent_real: str | None) -> None:
        """Queue folder ``rel``, reached through a link to ``real``, unless the link rules skip it."""
        if parent_real is not None and _inside(parent_real, real):
            self._warn(rel, f"symbolic link to {real}, a folder above it (a loop); not followed")
            return
        if not _inside(real, self.real_root):
            if not self.follow:
                self._warn(rel, f"symbolic link to {real}, outside the workspace; not followed ({_HINT})")
                return
        else:
            target = "" if real == self.real_root else Path(os.path.relpath(real, self.real_root)).as_posix()
            if (
                any(p in ALWAYS_EXCLUDED_DIRS for p in target.split("/"))
                or target == self.out
                or target.startswith(self.out + "/")
            ):
                return  # a link into .git or the output folder: never scanned, whatever its name
        self._linked.append(rel)

    def _list(self, rel_dir: str, linked: bool) -> None:
        path = os.path.join(self.root, rel_dir)
        try:
            st = os.stat(path)
            if (linked, st.st_dev, st.st_ino) in self._seen:
                return  # reached again through a link: walked once already
            self._seen.add((linked, st.st_dev, st.st_ino))
            with os.scandir(path) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except FileNotFoundError:
            return  # a folder removed while scanning: its notes are simply gone
        except OSError as exc:
            self.unreadable.append(rel_dir)
            self.warnings.append(f"{path}: folder cannot be read ({exc.strerror}); {KEPT}")
            return
        self.folders.append(rel_dir)
        subdirs: list[str] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    self._link(rel, entry.path, path, linked)
                elif entry.is_dir(follow_symlinks=False):
                    if not self._skipped_dir(rel):
                        subdirs.append(rel)
                elif entry.is_file(follow_symlinks=False) and self.tracked(rel):
                    self._note(rel, entry.stat(follow_symlinks=False), linked)
            except PermissionError as exc:  # listed but not searchable (r--): its notes are there, unseen
                if rel_dir not in self.unreadable:
                    self.unreadable.append(rel_dir)
                    self.warnings.append(f"{path}: folder cannot be read ({exc.strerror}); {KEPT}")
            except OSError:
                continue  # vanished meanwhile
        self._stack.extend((d, linked) for d in reversed(subdirs))

    def _note(self, rel: str, st: os.stat_result, linked: bool) -> None:
        if not valid_name(rel):
            self.bad_names.append(shown_name(rel))
            return
        key = (st.st_dev, st.st_ino)
        if key in self._real_notes:
            return  # found already (at its real path, or as another hard link): one file, one note
        if not linked:
            self._real_notes[key] = rel
        self.files[rel] = FileStat.of(st)

    def _link(self, rel: str, path: str, folder: str, linked: bool) -> None:
        """A symbolic link found in ``folder``: queue the folder or record the note it leads to."""
        try:
            st = os.stat(path)
        except OSError as exc:
            if self.tracked(rel):
                why = (
                    "its target does not exist"
                    if isinstance(exc, FileNotFoundError)
                    else f"it cannot be followed ({exc.strerror})"
                )
                self._warn(rel, f"symbolic link skipped: {why}")
            return
        real = os.path.realpath(path)
        if stat.S_ISDIR(st.st_mode):
            if not self._skipped_dir(rel):
                self._queue_link(rel, real, os.path.realpath(folder))
        elif stat.S_ISREG(st.st_mode) and self.tracked(rel):
            if self.follow or _inside(real, self.real_root):
                self._note(rel, st, linked)
            else:
                self._warn(rel, f"symbolic link to {real}, outside the workspace; not followed ({_HINT})")


def scan_workspace(root: Path, settings: Settings) -> ScanResult:
    """List the tracked notes under ``root``. Raises WorkspaceError if ``root`` itself is unreadable.

    Symbolic links (notes and folders) are followed while their real target stays inside the workspace;
    outside targets only with ``settings.follow_symlinks`` (else each is skipped with a warning). A note
    reached through a link keeps the link's path.
    """
    check_root(root)
    walk = _Walk(root, settings)
    walk.run(walk_roots(settings.tracked_globs))
    return ScanResult(
        dict(sorted(walk.files.items())),
        tuple(walk.unreadable),
        tuple(walk.warnings),
        tuple(walk.folders),
        tuple(sorted(walk.bad_names)),
    )


def scan_notes(root: Path, settings: Settings, rels: frozenset[str]) -> ScanResult:
    """The tracked notes among ``rels`` (relative POSIX paths), each found as the full scan would find it: a
    tracked path outside dot folders, a regular file, inside the workspace unless follow_symlinks is set.
    A name that is gone, untracked or not a note is simply absent. Raises WorkspaceError as scan_workspace."""
    check_root(root)
    tracked, real_root = TrackedMatcher(settings), os.path.realpath(root)
    files: dict[str, FileStat] = {}
    warnings: list[str] = []
    unreadable: list[str] = []
    bad: list[str] = []
    for rel in sorted(rels):
        if not tracked(rel) or any(p.startswith(".") or p in ("", "..") for p in rel.split("/")):
            continue
        path = os.path.join(root, rel)
        try:
            st = os.stat(path)
        except PermissionError as exc:  # a folder above it lost its permissions: the note may well be there
            folder = blocked_folder(root, rel)
            unreadable.append(folder)
            warnings.append(f"{os.path.join(root, folder)}: folder cannot be read ({exc.strerror}); {KEPT}")
            continue
        except OSError:
            continue
        if not valid_name(rel):
            bad.append(shown_name(rel))
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        real = os.path.realpath(path)
        if settings.follow_symlinks or _inside(real, real_root):
            files[rel] = FileStat.of(st)
        else:
            warnings.append(f"{path}: symbolic link to {real}, outside the workspace; not followed ({_HINT})")
    return ScanResult(files, tuple(dict.fromkeys(unreadable)), tuple(dict.fromkeys(warnings)), (), tuple(bad))


#: Most folder entries looked at when counting untracked notes (a huge tree is not walked to the end).
HINT_WALK_LIMIT = 20_000


def untracked_notes_hint(root: Path, settings: Settings, scan: ScanResult) -> str | None:
    """One line naming ``--vault`` / ``vault = true`` when no note is tracked but ``root`` holds markdown
    notes that no include glob matches (a fresh vault synced without vault mode); None otherwise."""
    if scan.files or scan.bad_names or settings.vault:
        return None
    found, seen, more = 0, 0, False
    out = settings.output_dir.strip("/")
    for folder, dirs, files in os.walk(root):
        rel = Path(os.path.relpath(folder, root)).as_posix()
        dirs[:] = [
            d
            for d in dirs
            if not (d.startswith(".") or d in ALWAYS_EXCLUDED_DIRS or (f"{rel}/{d}" if rel != "." else d) == out)
        ]
        found += sum(1 for name in files if name.endswith(".md"))
        seen += len(dirs) + len(files)
        if seen > HINT_WALK_LIMIT:
            more = True
            break
    if not found:
        return None
    count = f"{found}{'+' if more else ''} markdown notes"
    return (
        f"{root}: {count} here match no include glob ({', '.join(settings.tracked_globs)}), so none is "
        "indexed; to index every note use `botbin sync --vault` or set `vault = true` in botbin.toml"
    )
