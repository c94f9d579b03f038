"""LSP error responses that carry a kind: ``data`` is ``{kind, message}`` (botbin.wire.errors.ErrorData), so a
client switches on ``data.kind`` and never on the message's words."""

from __future__ import annotations

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from botbin.errors import BotbinError
from botbin.wire.errors import ErrorData, error_data
from botbin.wire.model import dump

#: LSP's RequestFailed: the params were fine, the request failed (a locked store, a missing workspace, ...).
REQUEST_FAILED = -32803


def bad_request(message: str) -> JsonRpcInvalidParams:
    """InvalidParams (-32602) of kind ``bad_request``."""
    return JsonRpcInvalidParams(message, data=dump(ErrorData(kind="bad_request", message=message)))


def request_failed(exc: BotbinError) -> JsonRpcException:
    """RequestFailed (-32803) whose ``data.kind`` is ``exc``'s kind (``locked``, ``workspace_missing``, ...);
    InvalidParams (-32602) for an error of kind ``bad_request`` (a budget too small for the hard rules)."""
    data = error_data(exc)
    code = JsonRpcInvalidParams.CODE if data.kind == "bad_request" else REQUEST_FAILED
    return JsonRpcException(data.message, code=code, data=dump(data))
