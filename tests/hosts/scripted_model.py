"""A scripted stand-in for the Anthropic Messages API on 127.0.0.1: ``POST /v1/messages`` answered with streamed
(SSE) or plain JSON replies chosen by a script, every request body recorded. Claude Code talks to it through
``ANTHROPIC_BASE_URL``; nothing else is reachable from the tests."""

from __future__ import annotations

import http.server
import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_IDS = itertools.count(1)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: text, or a call of a tool (then the host runs it and asks again)."""

    text: str = "OK."
    tool: str | None = None
    """The tool's name, as the request's ``tools`` (or deferred list) names it."""
    tool_input: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelRequest:
    """A recorded request."""

    body: dict[str, Any]

    @property
    def text(self) -> str:
        """The whole body as JSON text (what the model sees, to search in)."""
        return json.dumps(self.body, ensure_ascii=False)

    @property
    def tools(self) -> list[str]:
        return [str(t.get("name")) for t in self.body.get("tools", [])]

    @property
    def main(self) -> bool:
        """A request of the conversation's loop (it offers tools), not a side request (a title, a summary)."""
        return bool(self.body.get("tools"))

    def _last_user(self) -> Any:
        users = [m for m in self.body.get("messages", []) if m.get("role") == "user"]
        return users[-1]["content"] if users else ""

    @property
    def prompt(self) -> str:
        """The last user message's own words (system reminders left out); "" when it carries tool results."""
        content = self._last_user()
        if isinstance(content, str):
            return _REMINDER.sub("", content).strip()
        parts = [p for p in content if isinstance(p, dict)]
        if any(p.get("type") == "tool_result" for p in parts):
            return ""
        return _REMINDER.sub("", "\n".join(p.get("text", "") for p in parts if p.get("type") == "text")).strip()

    @property
    def tool_results(self) -> list[str]:
        """The texts of the tool results in the last user message."""
        content = self._last_user()
        if isinstance(content, str):
            return []
        out = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                inner = part.get("content")
                out.append(inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False))
        return out


Script = Callable[[ModelRequest], Reply]


def _events(reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "message_start", {"type": "message_start", "message": {"id": "msg_scripted", "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}  # fmt: skip
    if reply.tool is None:
        yield "content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}}  # fmt: skip
        yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": reply.text}}  # fmt: skip
    else:
        block = {"type": "tool_use", "id": f"toolu_{next(_IDS):08d}", "name": reply.tool, "input": {}}
        yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps(reply.tool_input)}}  # fmt: skip
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    stop = "tool_use" if reply.tool else "end_turn"
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}  # fmt: skip
    yield "message_stop", {"type": "message_stop"}


def _message(reply: Reply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = (
        [{"type": "text", "text": reply.text}]
        if reply.tool is None
        else [{"type": "tool_use", "id": f"toolu_{next(_IDS):08d}", "name": reply.tool, "input": reply.tool_input}]
    )
    return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "tool_use" if reply.tool else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip


class ScriptedModel:
    """``with ScriptedModel(script) as model:`` serves on ``model.url`` and records ``model.requests``."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[ModelRequest] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                if "count_tokens" in self.path:
                    return self._json({"input_tokens": 100})
                request = ModelRequest(body)
                with owner._lock:
                    owner.requests.append(request)
                    reply = owner.script(request) if request.main else Reply("Scripted side answer.")
                model = str(body.get("model", "scripted"))
                if not body.get("stream"):
                    return self._json(_message(reply, model))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for name, data in _events(reply, model):
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

            def do_GET(self) -> None:
                self._json({})

            def _json(self, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def main_requests(self) -> list[ModelRequest]:
        with self._lock:
            return [r for r in self.requests if r.main]

    def __enter__(self) -> ScriptedModel:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
