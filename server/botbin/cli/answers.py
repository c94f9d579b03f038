"""The read-only answers that a warm server gives too (cli/warm.py): ``botbin search QUERY`` and ``botbin
context``, each taking its typed request (wire/requests.py), and ``answer``, which validates a warm request
(wire/warm.py) and runs it on a server's service with the same two functions.

Kept apart from cli/commands.py so that the servers (cli/warm_server.py, lsp, mcp) can answer without
importing the command table (which imports them)."""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from botbin.cli.common import EXIT_OK
from botbin.cli.flags import FLAG_NAMES, context_fields, search_fields
from botbin.cli.output import print_hits
from botbin.cli.terminal import shown
from botbin.service import MemoryService
from botbin.wire import convert
from botbin.wire.model import dump
from botbin.wire.requests import ContextRequest, SearchFilters, SearchRequest, problem
from botbin.wire.warm import WARM_PROTOCOL, WarmAnswer, WarmRequest

log = logging.getLogger(__name__)


def search_request(args: argparse.Namespace) -> SearchRequest | str:
    """The request of ``botbin search``'s flags, or why they are unusable (a message naming the flag)."""
    if (args.query is None) == (args.batch is None):
        return "give a QUERY or --batch FILE.jsonl"
    try:
        return SearchRequest.model_validate(search_fields(args) | ({"query": "batch"} if args.batch else {}))
    except ValidationError as exc:
        return problem(exc, FLAG_NAMES)


def context_request(args: argparse.Namespace) -> ContextRequest | str:
    """The request of ``botbin context``'s flags, or why they are unusable (a message naming the flag)."""
    try:
        return ContextRequest.model_validate(context_fields(args))
    except ValidationError as exc:
        return problem(exc, FLAG_NAMES)


def answer_search(memory: MemoryService, request: SearchRequest, as_json: bool, out: TextIO, err: TextIO) -> int:
    """``botbin search QUERY`` on ``memory``, printed on ``out`` and ``err`` (this process's streams, or
    a warm server's answer: cli/warm_server.py). Hits under the relevance floor are the search's to leave out."""
    spanned = other_namespaces(memory, err)
    result = memory.search(request)
    for warning in result.warnings:
        print(f"botbin: warning: {warning}", file=err)
    if as_json:
        print(json.dumps(dump(convert.cli_search(result)), ensure_ascii=False), file=out)
    else:
        filtered = request.filters != SearchFilters()
        print_hits(result.hits, filtered, out, hidden=result.hidden, stale=result.stale, namespaces=spanned)
    return EXIT_OK


def other_namespaces(memory: MemoryService, err: TextIO) -> tuple[str, ...]:
    """The team database's namespaces a search reads when they are not just the workspace's own (); warns on
    ``err`` about namespaces asked of the embedded backend, which has none, and about namespaces this role reads
    no note of (a typo, or no grant)."""
    settings = memory.settings
    if settings.backend != "postgres":
        if settings.search_namespaces:
            print('botbin: warning: --namespace / search_namespaces apply to backend = "postgres" only', file=err)
        return ()
    asked = memory.team.spanned_namespaces()
    empty = memory.team.unreadable_namespaces() if asked else []
    if empty and len(empty) < len(asked):  # all of them empty: the answer itself says so
        print(
            f"botbin: warning: namespaces {', '.join(empty)}: no notes this role may read (no such namespace, "
            "or no grant on it)",
            file=err,
        )
    return asked


def answer_context(memory: MemoryService, request: ContextRequest, as_json: bool, out: TextIO, err: TextIO) -> int:
    """``botbin context QUERY`` on ``memory``, printed on ``out`` and ``err`` (see answer_search)."""
    result = memory.context(request)
    if as_json:
        print(json.dumps(dump(convert.context(result)), ensure_ascii=False), file=out)
    else:
        print(result.text, file=out)
        used = ", ".join(f"{t.name} {t.tokens}" for t in result.tiers if t.tokens)
        print(f"botbin: {result.used_tokens}/{result.budget_tokens} tokens ({used})", file=err)
    return EXIT_OK


def _declined(reason: str) -> dict[str, Any]:
    return dump(WarmAnswer(v=WARM_PROTOCOL, served=False, reason=reason))


def answer(memory: MemoryService, message: dict[str, Any]) -> dict[str, Any]:
    """The answer of a warm server to one request (cli/warm.py): served when it names this workspace and its
    flags and environment give this service's settings (so the index is the one the command would read),
    else declined, and the command runs in its own process."""
    if message.get("v") != WARM_PROTOCOL:
        return _declined(f"not a protocol {WARM_PROTOCOL} request")
    try:
        asked = WarmRequest.model_validate(message)
    except ValidationError:
        return _declined("bad usage")  # the command says why, in its own process
    if Path(asked.workspace) != memory.root:
        return _declined("another workspace")
    warnings = memory.settings_match(asked.settings.model_dump(exclude_none=True), asked.env)
    if warnings is None:
        return _declined("other settings")
    out, err = io.StringIO(), io.StringIO()
    for warning in warnings:
        print(f"botbin: warning: {warning}", file=err)
    try:
        if asked.search is not None:
            code = answer_search(memory, asked.search, asked.as_json, out, err)
        elif asked.context is not None:
            code = answer_context(memory, asked.context, asked.as_json, out, err)
        else:
            return _declined("bad usage")
    except Exception as exc:  # the command runs in-process then, and reports the error as it always does
        log.info("warm %s declined: %s", asked.command, exc)
        return _declined(f"{type(exc).__name__}: {exc}")
    # escaped here as the command's own process escapes them (cli/terminal.py): the client prints them as they come
    stdout = out.getvalue() if asked.as_json else shown(out.getvalue())
    reply = WarmAnswer(v=WARM_PROTOCOL, served=True, code=code, stdout=stdout, stderr=shown(err.getvalue()),
                       pid=os.getpid())  # fmt: skip
    return dump(reply)
