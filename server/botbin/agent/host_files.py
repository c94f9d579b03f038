"""The host files botbin keeps beside ``sync-state.json`` and reads back (the turn journal, agent/journal.py; the
captured-turn ledger, agent/ledger.py): how their lines are sealed in an encrypted store, checked when read back,
and written privately, never through a link.

- In an encrypted store each line is sealed (AES-256-GCM, ``sealed:v1:`` then base64 of the nonce and the
  ciphertext) with a key derived from the store key (HKDF with a fixed salt, as memory/sealing.py derives the memo
  keys), so the output folder holds no word of a conversation in the clear; a plaintext store's lines are JSON.
  A store that is encrypted but locked (no passphrase) gets no line at all (``HostKey.locked``): agent/capture.py
  then writes the soul file at once instead of journaling.
- Read back, the files are untrusted, like the state file (sync/state_check.py): the output folder is synced,
  shared and committed by users. A line that does not open, is not a JSON object (too deep, too long, another
  key's) or whose fields have the wrong type or size is skipped, with one warning naming the file. A file is read
  only when it is a regular file inside the output folder (never a FIFO or a device: opened without blocking),
  at most MAX_FILE_BYTES of it.
- Written, a file is created 0600 under any umask; an entry at its name that is not a regular file (a link, a
  FIFO) is replaced by a new file, its target left alone. Every write holds the host files' lock (a note lock,
  sync/note_lock.py), so ``botbin encrypt`` converting the files in another process loses no line appended
  meanwhile.
"""

from __future__ import annotations

import base64
import errno
import json
import logging
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botbin.crypto.cipher import NONCE_BYTES, open_sealed, seal
from botbin.errors import BotbinError, PassphraseError
from botbin.sync.atomic import FILE_MODE, atomic_write, make_private_dirs
from botbin.sync.confine import Confined

if TYPE_CHECKING:
    from botbin.sync.encryption import StoreKeys
    from botbin.workspace import Workspace

log = logging.getLogger(__name__)

HOST_SALT = b"botbin-host-turn"
"""HKDF salt of the host files' key (16 bytes)."""
SEALED_PREFIX = b"sealed:v1:"
MAX_LINE_BYTES = 4 << 20
"""A longer line is damage (one turn, or one ledger entry, is far smaller)."""
MAX_FILE_BYTES = 256 << 20
"""Bytes of a host file read at most."""
LOCK_NAME = "host-turns"
"""The note lock (sync/note_lock.py) every write of a host file holds."""
_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True)
class HostKey:
    """How the host files of a store are read and written now."""

    key: bytes | None
    """AES-256 key of the sealed lines; None in a plaintext store (or a locked one)."""
    locked: str | None = None
    """Why the store's key cannot be had (encrypted, or ``encryption = true``, without its passphrase): no line is
    written then, and only plain lines are read."""


PLAIN = HostKey(None)


def store_host_key(keys: StoreKeys | None) -> HostKey:
    """The host key of a store with ``keys`` (None: plaintext)."""
    if keys is None:
        return PLAIN
    return HostKey(keys.keyring.file_key(keys.marker.kdf, HOST_SALT, "host turns"))


def host_key(ws: Workspace) -> HostKey:
    """The host key of workspace ``ws`` now (the marker is read each time: another process may have encrypted or
    decrypted the store since)."""
    try:
        keys = ws.keys()
    except PassphraseError as exc:
        return HostKey(None, exc.reason)
    if keys is None and ws.settings.encryption and not ws.passphrase():
        return HostKey(None, "encryption is on for this store and no passphrase was given")
    return store_host_key(keys)


def encode_line(value: dict[str, Any], key: HostKey, aad: bytes) -> bytes:
    """One line (with its newline) holding ``value``: JSON (ASCII: a lone surrogate is escaped, never an encoding
    error), sealed when ``key`` has a key."""
    data = json.dumps(value).encode("ascii")
    if key.key is not None:
        nonce = os.urandom(NONCE_BYTES)
        data = SEALED_PREFIX + base64.b64encode(nonce + seal(key.key, nonce, data, aad))
    return data + b"\n"


@dataclass
class Lines:
    """What reading a host file found."""

    values: list[dict[str, Any]] = field(default_factory=list)
    """The JSON objects read, in file order."""
    opaque: list[bytes] = field(default_factory=list)
    """Sealed lines this key cannot open (kept as they are by a locked store's rewrite)."""
    plain: int = 0
    """Lines read in the clear (an encrypted store converts them)."""
    damaged: int = 0
    end: int = 0
    """Byte offset after the last whole line read."""
    identity: tuple[int, int] | None = None
    """(st_dev, st_ino) of the file read; None when there was none."""
    shrunk: bool = False
    """The file is shorter than the offset asked (cut in place): nothing was read."""


def decode(raw: bytes, key: HostKey, aad: bytes, into: Lines) -> None:
    """Add line ``raw`` (no newline) to ``into``: its object, or an opaque or damaged line."""
    sealed = raw.startswith(SEALED_PREFIX)
    data: bytes | None = raw
    if sealed:
        data = _open(raw, key.key, aad) if key.key is not None else None
        if data is None and key.key is None:
            into.opaque.append(raw)
            return
    try:
        value = json.loads(data) if data is not None and len(raw) <= MAX_LINE_BYTES else None
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        into.damaged += 1
        return
    into.values.append(value)
    into.plain += not sealed


def _open(raw: bytes, key: bytes | None, aad: bytes) -> bytes | None:
    try:
        blob = base64.b64decode(raw[len(SEALED_PREFIX) :], validate=True)
        return open_sealed(key or b"", blob[:NONCE_BYTES], blob[NONCE_BYTES:], aad, "host turns")
    except (ValueError, BotbinError):
        return None


def read_lines(folder: Path, path: Path, key: HostKey, aad: bytes, offset: int = 0) -> Lines:
    """The lines of host file ``path`` (in ``folder``, the output folder) from byte ``offset`` (a last line without
    its newline is being appended: left for the next read). A missing file is empty; one that cannot be read (not
    a regular file, a link out of the folder) is empty too, with a warning. Damaged lines are counted and logged."""
    found = Lines(end=offset)
    try:
        with Confined(folder).open(path) as handle:
            st = os.fstat(handle.fileno())
            found.identity = (st.st_dev, st.st_ino)
            if st.st_size < offset:  # cut in place: the caller reads it again from its start
                found.shrunk = True
                return found
            handle.seek(offset)
            data = handle.read(MAX_FILE_BYTES)
    except FileNotFoundError:
        return found
    except OSError as exc:
        log.warning("%s: cannot be read (%s); taken as empty", path, exc.strerror or exc)
        return found
    complete = data[: data.rfind(b"\n") + 1]
    found.end = offset + len(complete)
    for raw in complete.splitlines():
        if raw.strip():
            decode(raw, key, aad, found)
    if found.damaged:
        log.warning("%s: %d lines that are damaged, too long or sealed with another key were skipped", path,
                    found.damaged)  # fmt: skip
    return found


@contextmanager
def host_lock(folder: Path, timeout_s: float) -> Iterator[None]:
    """The host files' write lock (this process's threads and other processes). Raises LockedError, WorkspaceError."""
    from botbin.sync.note_lock import LOCK_DIR, note_lock

    with note_lock(folder / LOCK_DIR, LOCK_NAME, timeout_s):
        yield


def _target(folder: Path, path: Path) -> Path:
    """Where to write host file ``path``: its real path in ``folder``. Raises OSError (EXDEV) when it leads out."""
    real = Confined(folder).real_path(path, follow=False)
    if real is None:
        raise OSError(errno.EXDEV, "leads outside the output folder; not written", str(path))
    return Path(real)


def append_private(folder: Path, path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` (created 0600) and fsync; an entry there that is not a regular file is replaced
    first (never written through). Raises OSError."""
    make_private_dirs(folder)
    real = _target(folder, path)
    try:
        fd = os.open(real, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _FLAGS, FILE_MODE)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            raise
        fd = -1
    if fd >= 0 and not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        fd = -1
    if fd < 0:
        log.warning("%s: not a regular file (a link, a FIFO or a device put there); replaced by a new file", path)
        atomic_write(real, b"")
        fd = os.open(real, os.O_WRONLY | os.O_APPEND | _FLAGS)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def rewrite_private(folder: Path, path: Path, data: bytes) -> None:
    """Replace ``path`` by a file holding ``data`` (0600, atomically; a link there is replaced, not followed).
    Raises OSError."""
    atomic_write(_target(folder, path), data)


def convert_file(folder: Path, path: Path, aad: bytes, old: HostKey, new: HostKey, timeout_s: float) -> bool:
    """Rewrite host file ``path`` in ``new``'s form (sealed with its key, or in the clear) after the store was
    encrypted or decrypted: each line read in the clear or opened with ``old``'s or ``new``'s key is written anew, a
    line neither opens is kept as it is. True when the file was rewritten. Raises OSError, BotbinError (the lock)."""
    if new.locked is not None:
        return False
    with host_lock(folder, timeout_s):
        found = Lines()
        for key in (old, new):
            found = read_lines(folder, path, key, aad)
            if not found.damaged:
                break
        stale = found.plain if new.key is not None else len(found.values) - found.plain
        if not stale:
            return False
        lines = [encode_line(v, new, aad) for v in found.values] + [raw + b"\n" for raw in found.opaque]
        rewrite_private(folder, path, b"".join(lines))
    log.info("%s: %d lines %s", path, stale, "sealed" if new.key is not None else "opened")
    return True
