"""The host ops on a warm server's socket (wire/hosts.py): one typed request in, one answer out. Thin: validate the
request into its params model, call the workspace's host memory (agent/hosts.py) through the service, convert.

Every failure is an answer, never a dropped connection: ``ok: false`` with ``{kind, message}`` (``bad_request`` for
a request the contract rejects, the BotbinError's kind, ``internal`` for a bug, which is logged)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from botbin.errors import BotbinError
from botbin.service import MemoryService
from botbin.wire import host_convert as convert
from botbin.wire import hosts
from botbin.wire.errors import ErrorData, error_data
from botbin.wire.model import WireModel, dump
from botbin.wire.requests import ContextRequest, problem

log = logging.getLogger(__name__)


def _session_context(memory: MemoryService, p: hosts.SessionContextParams) -> WireModel:
    return convert.session_context(memory.hosts.session_context(p.budget_tokens, p.session))


def _recall(memory: MemoryService, p: hosts.RecallParams) -> WireModel:
    return convert.recalled(memory.hosts.recall(p.prompt, p.budget_tokens, p.k, p.session))


def _ingest(memory: MemoryService, p: hosts.IngestParams) -> WireModel:
    return convert.ingested(memory.hosts.ingest(p.turns, p.user, p.source, p.flush))


def _expand(memory: MemoryService, p: hosts.ExpandParams) -> WireModel:
    return convert.expanded(memory.hosts.expand(p.id))


def _assemble(memory: MemoryService, p: hosts.AssembleParams) -> WireModel:
    query = (
        p.prompt if p.prompt is not None else next((m.content for m in reversed(p.messages) if m.role == "user"), "")
    )
    request = ContextRequest(query=query, budget_tokens=p.budget_tokens, max_chars=p.max_chars)
    return convert.assembled(memory.hosts.assemble(request))


def _compact(memory: MemoryService, p: hosts.CompactParams) -> WireModel:
    messages = [(m.role, m.content) for m in p.messages]
    return convert.compacted(memory.hosts.compact(messages, p.budget_tokens))


_HANDLERS: dict[str, Callable[[MemoryService, Any], WireModel]] = {
    "session_context": _session_context,
    "recall": _recall,
    "ingest": _ingest,
    "expand": _expand,
    "assemble": _assemble,
    "compact": _compact,
}


def _failed(error: ErrorData) -> dict[str, Any]:
    return {"v": hosts.HOST_PROTOCOL, "ok": False, "error": dump(error)}


def answer_op(memory: MemoryService, message: dict[str, Any]) -> dict[str, Any]:
    """The answer to one host request ``message`` (``{"v", "op", ...params}``)."""
    try:
        envelope = hosts.HostEnvelope.model_validate({"v": message.get("v"), "op": message.get("op")})
        if envelope.v != hosts.HOST_PROTOCOL:
            raise ValueError(f"host protocol {envelope.v} asked; this server speaks {hosts.HOST_PROTOCOL}")
        fields = {k: v for k, v in message.items() if k not in ("v", "op")}
        params = hosts.PARAMS_OF[envelope.op].model_validate(fields)
    except ValidationError as exc:
        return _failed(ErrorData(kind="bad_request", message=problem(exc)))
    except ValueError as exc:
        return _failed(ErrorData(kind="bad_request", message=str(exc)))
    try:
        result = _HANDLERS[envelope.op](memory, params)
    except BotbinError as exc:
        return _failed(error_data(exc))
    except Exception as exc:  # a bug: the host's turn goes on; the log has the trace
        log.exception("host op %s failed", envelope.op)
        return _failed(ErrorData(kind="internal", message=f"{type(exc).__name__}: {exc}"))
    return {"v": hosts.HOST_PROTOCOL, "ok": True, **dump(result)}
