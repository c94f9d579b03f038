"""The error hierarchy: every error botbin raises on purpose names the file and the reason."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import ClassVar


class BotbinError(Exception):
    """Base of every error botbin raises on purpose.

    Attributes:
        path: the file the error is about, or None.
        reason: a short human-readable reason.
    """

    kind: ClassVar[str] = "error"
    """What went wrong, for a program to act on (the ``data.kind`` of an LSP error, an MCP tool error's ``kind``):
    one word per subclass, stable across versions; the message is for people and may change."""

    def __init__(self, reason: str, path: str | Path | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.reason = reason
        super().__init__(f"{self.path}: {reason}" if self.path else reason)


class ParseError(BotbinError):
    """A note could not be read or parsed (binary file, too large, unreadable)."""

    kind = "parse_error"


class AifBinFormatError(BotbinError):
    """An AIF-BIN file is malformed: bad magic, unknown version or flags, bad lengths or records."""

    kind = "bad_file"


class ConfigError(BotbinError):
    """A setting in botbin.toml, a BOTBIN_* variable or a flag is invalid."""

    kind = "bad_config"


class ModelError(BotbinError):
    """The embedding model could not be loaded or run."""

    kind = "model_unavailable"


class LockedError(BotbinError):
    """Another process holds the workspace's sync lock."""

    kind = "busy"


class WorkspaceError(BotbinError):
    """The workspace folder is missing or unreadable; nothing was changed."""

    kind = "workspace_missing"


class StorageError(WorkspaceError):
    """A file botbin writes (or reads) cannot be, for a reason of the disk or its permissions: full, over
    quota, read-only, permission denied, an I/O error. Transient: botbin treats it as no damage, loses nothing
    (the files it replaces are intact) and the same command works again once the cause is gone."""

    kind = "storage"


#: Why a write failed, in words, for the errors a disk or its permissions cause (the rest use strerror).
_RESOURCE_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


def storage_error(exc: Exception, path: str | Path | None = None, doing: str = "write") -> StorageError:
    """A StorageError for ``exc`` (an OSError, or an sqlite3.OperationalError whose message says why) naming
    ``path`` (default: the file an OSError names) and its reason: "cannot write (the disk is full: No space
    left on device); nothing was lost, ..."."""
    if isinstance(exc, OSError):
        why = exc.strerror or str(exc)
        reason = f"{_RESOURCE_REASONS[exc.errno]}: {why}" if exc.errno in _RESOURCE_REASONS else why
        path = path if path is not None else exc.filename
    else:
        reason = str(exc)
    return StorageError(
        f"cannot {doing} ({reason}); nothing was lost: files botbin replaces stay as they were, and the same "
        "command works again once there is space or permission",
        path,
    )


class DecryptionError(AifBinFormatError):
    """An encrypted AIF-BIN file cannot be opened: no key, a wrong passphrase, or a changed byte (AES-GCM
    authentication failed). A subclass of AifBinFormatError, so a damaged file is rebuilt from its note."""

    kind = "decryption_failed"


class PassphraseError(BotbinError):
    """The store is encrypted and no passphrase was given, or the given one is wrong; nothing was changed."""

    kind = "locked"


class WrongPassphraseError(PassphraseError):
    """The store is encrypted and the passphrase given does not open it; nothing was read or changed."""

    kind = "wrong_passphrase"


class RemoteIndexError(BotbinError):
    """The team database (backend "postgres") cannot be reached, is not set up, refuses a write, or holds a
    schema this botbin cannot read. The message names the URL without its password; the local AIF-BIN files
    and the embedded index are never touched by it."""

    kind = "remote_unavailable"
