"""Reading notes and AIF-BIN files from disk for the service: decode one AIF-BIN file, extract the note it
keeps, partition a note that is not indexed yet, and resolve a user's path against the workspace."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from botbin import aifbin
from botbin.errors import AifBinFormatError, BotbinError

if TYPE_CHECKING:
    from botbin.directives.partition import Directive
    from botbin.sync.encryption import PassphraseFn


def relative_path(root: Path, path: str) -> str:
    """``path`` (absolute, or relative to the current folder or the workspace) as a workspace-relative POSIX path."""
    candidate = Path(path)
    if not candidate.is_absolute():
        here = (Path.cwd() / candidate).resolve()
        candidate = here if here.exists() and here.is_relative_to(root) else root / candidate
    resolved = candidate.resolve()
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else resolved.as_posix()


def directives_on_disk(root: Path, rel: str, instruction_globs: Sequence[str] | None = None) -> list[Directive]:
    """Directives of one note read from disk (not indexed yet). Raises BotbinError if it cannot be read."""
    from botbin.directives.partition import partition_source
    from botbin.parsing import decode_note

    path = root / rel
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BotbinError(f"cannot read ({exc.strerror or exc})", path) from exc
    text = decode_note(data, rel).text
    _, part = (
        partition_source(text, rel) if instruction_globs is None else partition_source(text, rel, instruction_globs)
    )
    return list(part.directives)


def read_document(path: Path, passphrase: PassphraseFn | None = None) -> aifbin.AifBinDocument:
    """Decode the AIF-BIN file at ``path``; ``passphrase`` is asked only if it is encrypted. Raises
    AifBinFormatError (also for an unreadable file), DecryptionError (a subclass) for a missing or wrong
    passphrase."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AifBinFormatError(f"cannot read ({exc.strerror or exc})", path) from exc
    keyring = None
    if len(data) > 5 and data[5] & aifbin.FLAG_ENCRYPTED and passphrase is not None:
        from botbin.crypto.cipher import Keyring

        secret = passphrase()
        keyring = Keyring(secret) if secret else None
    return aifbin.decode(data, str(path), keyring)


def extract_source(path: Path, passphrase: PassphraseFn | None = None) -> bytes:
    """The original note bytes kept in the AIF-BIN file at ``path``. Raises AifBinFormatError."""
    doc = read_document(path, passphrase)
    if doc.source_text is None:
        raise AifBinFormatError("file keeps no source text to extract", path)
    return doc.source_text
