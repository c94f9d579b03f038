"""A scripted model on 127.0.0.1 for the OpenClaw end-to-end tests (the Claude Code ones use scripted_model.py, the
Anthropic Messages API): an OpenAI-compatible ``POST /v1/chat/completions``
(streamed as server-sent events when the request asks, else one JSON answer) and ``GET /v1/models``. Every request
body is recorded, so a test asserts on what the host actually sent the model. The reply of each request comes
from ``reply`` (a function of the request body), by default a short fixed sentence."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], str]


def _text(content: Any) -> str:
    """A chat message's content as text (a string, or a list of parts with ``text``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


@dataclass
class ModelRequest:
    """One request the model received."""

    path: str
    """The URL path."""
    body: dict[str, Any]
    """The JSON body as sent."""

    @property
    def system(self) -> str:
        """The system prompt (every system message's text, joined)."""
        return "\n".join(_text(m.get("content")) for m in self.body.get("messages", []) if m.get("role") == "system")

    @property
    def text(self) -> str:
        """Everything the model was shown: every message's text, joined."""
        return "\n".join(_text(m.get("content")) for m in self.body.get("messages", []))

    @property
    def last_user(self) -> str:
        """The last user message's text."""
        users = [_text(m.get("content")) for m in self.body.get("messages", []) if m.get("role") == "user"]
        return users[-1] if users else ""


@dataclass
class ScriptedModel:
    """The running model: its base URL and what it received."""

    port: int
    requests: list[ModelRequest] = field(default_factory=list)
    reply: Reply = lambda body: "Noted."
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def completions(self) -> list[ModelRequest]:
        """The chat requests so far, in order."""
        with self.lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]


def _chunk(text: str | None, finish: str | None) -> bytes:
    delta = {"role": "assistant", "content": text} if text is not None else {}
    payload: dict[str, Any] = {
        "id": "scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if finish is not None:
        payload["usage"] = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reads the records
            pass

        def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(200, json.dumps({"object": "list", "data": [{"id": "scripted", "object": "model"}]}).encode())

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                self._send(400, b'{"error": "not JSON"}')
                return
            with model.lock:
                model.requests.append(ModelRequest(self.path, body))
            text = model.reply(body)
            if not body.get("stream"):
                message = {"role": "assistant", "content": text}
                answer = {"id": "scripted", "object": "chat.completion", "created": 0, "model": "scripted",
                          "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}  # fmt: skip
                self._send(200, json.dumps(answer).encode())
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self.wfile.write(_chunk(text, None) + _chunk(None, "stop") + b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


@contextmanager
def scripted_model(reply: Reply | None = None) -> Iterator[ScriptedModel]:
    """Serve a scripted model on 127.0.0.1 (a free port) for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    model = ScriptedModel(port=server.server_address[1])
    if reply is not None:
        model.reply = reply
    server.RequestHandlerClass = _handler(model)
    thread = threading.Thread(target=server.serve_forever, name="scripted-model", daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
