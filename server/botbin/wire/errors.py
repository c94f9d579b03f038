"""Error kinds on the wire: an LSP error response's ``data`` and an MCP tool error's structured content carry
``{kind, message}``, so a client acts on ``kind`` and shows ``message``. Kinds come from the ``botbin.errors``
classes (``BotbinError.kind``) plus two of the wire's own: ``bad_request`` and ``internal``."""

from __future__ import annotations

from typing import Literal, cast, get_args

from botbin.errors import BotbinError
from botbin.wire.model import WireModel

#: Every kind an error may carry (a client meeting one it does not know treats it as ``error``).
ErrorKind = Literal[
    "error",
    "bad_request",
    "internal",
    "parse_error",
    "bad_file",
    "decryption_failed",
    "bad_config",
    "model_unavailable",
    "busy",
    "workspace_missing",
    "locked",
    "wrong_passphrase",
    "remote_unavailable",
    "storage",
]
ERROR_KINDS: tuple[str, ...] = get_args(ErrorKind)


class ErrorData(WireModel):
    """What an error means, for a program: the ``data`` of an LSP error response, the structured content of an
    MCP tool error."""

    kind: ErrorKind
    """What went wrong: ``locked`` (an encrypted store without its passphrase), ``wrong_passphrase``,
    ``model_unavailable``, ``workspace_missing``, ``busy`` (another process syncs), ``bad_request`` (the params),
    ``bad_config``, ``bad_file``, ``decryption_failed``, ``parse_error``, ``remote_unavailable`` (the team
    database, backend "postgres"), ``storage`` (a file cannot be written: disk full, quota, read-only,
    permission; nothing was lost, retry once it is fixed), ``internal`` (a bug), ``error``."""
    message: str
    """The reason in words, for people (may change between versions: never match on it)."""


def kind_of(exc: BaseException) -> ErrorKind:
    """The wire kind of ``exc``: its BotbinError class's kind, ``internal`` for anything else."""
    if isinstance(exc, BotbinError):
        return cast(ErrorKind, exc.kind) if exc.kind in ERROR_KINDS else "error"
    return "internal"


def error_data(exc: BaseException) -> ErrorData:
    """``{kind, message}`` of ``exc``."""
    return ErrorData(kind=kind_of(exc), message=str(exc))


class ErrorReport(ErrorData):
    """``botbin/error`` (a notification): a workspace folder's sync or read failed. Sent before the
    ``window/showMessage`` that says the same to people, so a client can act on ``kind`` (offer the passphrase)
    and leave out that message, which it knows by ``shownAs``."""

    uri: str
    """The workspace folder's URI."""
    shown_as: str
    """The exact text of the ``window/showMessage`` that follows (the server shows each text once)."""


class BadRequest(BotbinError):
    """A request's params are wrong in a way their schema cannot say (an empty query, a bad date)."""

    kind = "bad_request"
