"""The whole contract as one JSON Schema: every payload model, with the mode it is read in (``validation``:
params a client sends, where a field with a default may be left out; ``serialization``: results the server sends,
every field present)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic.json_schema import models_json_schema

from botbin.wire import agent, hosts, requests, search, settings, status, studio
from botbin.wire.errors import ErrorData, ErrorKind, ErrorReport
from botbin.wire.model import ChunkKind, EncryptionState, WireModel

Mode = Literal["validation", "serialization"]

#: Params and settings a client sends.
PARAMS: tuple[type[WireModel], ...] = (
    requests.SearchRequest,
    search.RelatedAtParams,
    search.RelatedTextParams,
    agent.ContextParams,
    agent.RememberParams,
    settings.ServerSettings,
    settings.ServerOptions,
    *hosts.HOST_PARAMS,
    *studio.STUDIO_PARAMS,
)
#: Results the server sends (LSP and MCP).
RESULTS: tuple[type[WireModel], ...] = (
    search.SearchResult,
    search.RelatedResult,
    search.SearchMemoryResult,
    search.SearchHits,
    status.StatusResult,
    status.WorkspaceStatus,
    status.SyncResult,
    agent.ContextResult,
    agent.RememberResult,
    agent.RememberToolResult,
    agent.ObserveTurnResult,
    ErrorData,
    ErrorReport,
    *hosts.HOST_RESULTS,
    *studio.STUDIO_RESULTS,
)
#: Named unions of string literals, and unions of models (TypeScript type aliases).
LITERALS: dict[str, Any] = {
    "ChunkKind": ChunkKind,
    "EncryptionState": EncryptionState,
    "ErrorKind": ErrorKind,
    "HostOp": hosts.HostOp,
    "TierName": hosts.TierName,
    "EditorKind": studio.EditorKind,
}
UNIONS: dict[str, tuple[str, ...]] = {"RelatedParams": ("RelatedAtParams", "RelatedTextParams")}
#: Constants a client needs (TypeScript ``export const``).
CONSTANTS: dict[str, int | str] = {"HOST_PROTOCOL": hosts.HOST_PROTOCOL}


def contract_schema() -> dict[str, Any]:
    """``{"$defs": {name: schema}}`` of every model of the contract (and the models they use)."""
    pairs: list[tuple[type[WireModel], Mode]] = [(m, "validation") for m in PARAMS]
    pairs += [(m, "serialization") for m in RESULTS]
    _, schema = models_json_schema(pairs, ref_template="#/$defs/{model}")
    return schema
