"""LSP error responses that carry a kind: ``data`` is ``{kind, message}`` (botbin.wire.errors.ErrorData), so a
client switches on ``data.kind`` and never on the message's words."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)

from botbin.errors import BotbinError
from botbin.wire.errors import ErrorData, error_data
from botbin.wire.model import dump

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

#: LSP's RequestFailed: the params were fine, the request failed (a locked store, a missing workspace, ...).
REQUEST_FAILED = -32803


def bad_request(message: str) -> JsonRpcInvalidParams:
    """InvalidParams (-32602) of kind ``bad_request``."""
    return JsonRpcInvalidParams(message, data=dump(ErrorData(kind="bad_request", message=message)))


def invalid_request(message: str, not_initialized: bool = False) -> JsonRpcException:
    """InvalidRequest (-32600) of kind ``bad_request``: a message that is no request this server takes now (not
    JSON-RPC 2.0, a notification's method with an id, any request after ``shutdown``); ServerNotInitialized
    (-32002) for a request before ``initialize``."""
    cls = JsonRpcServerNotInitialized if not_initialized else JsonRpcInvalidRequest
    return cls(message, data=dump(ErrorData(kind="bad_request", message=message)))


def request_failed(exc: BotbinError) -> JsonRpcException:
    """RequestFailed (-32803) whose ``data.kind`` is ``exc``'s kind (``locked``, ``workspace_missing``, ...);
    InvalidParams (-32602) for an error of kind ``bad_request`` (a budget too small for the hard rules)."""
    data = error_data(exc)
    code = JsonRpcInvalidParams.CODE if data.kind == "bad_request" else REQUEST_FAILED
    return JsonRpcException(data.message, code=code, data=dump(data))


def internal(exc: Exception) -> JsonRpcException:
    """InternalError (-32603) of kind ``internal``: a bug met while answering (the traceback goes to the log, not
    to the client)."""
    message = f"internal error: {type(exc).__name__}: {exc}"
    return JsonRpcInternalError(message, data=dump(ErrorData(kind="internal", message=message)))


def _typed(exc: Exception) -> JsonRpcException:
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, BotbinError):
        return request_failed(exc)
    log.error("a handler failed", exc_info=exc)
    return internal(exc)


def with_kinds(handler: F) -> F:
    """``handler``, whose every error carries a kind: a BotbinError its own (``request_failed``), anything
    else ``internal``; the JSON-RPC errors it raises pass as they are."""
    if asyncio.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(*args, **kwargs)
            except Exception as exc:
                raise _typed(exc) from exc

        return cast(F, run_async)

    @functools.wraps(handler)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except Exception as exc:
            raise _typed(exc) from exc

    return cast(F, run)
