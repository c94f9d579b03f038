"""The studio's routes (Starlette): the page, the views' JSON and the actions, every one behind the Guard
(security.py). A route validates its JSON body into the wire model, runs its view (views.py) in a worker thread
and answers the payload; a BotbinError is answered as ``{kind, message}`` (botbin.wire.errors)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from botbin import __version__
from botbin.service import MemoryService
from botbin.studio import views
from botbin.studio.links import Editor, Link, linker
from botbin.studio.page import page
from botbin.studio.security import ASGIApp, Guard, guarded
from botbin.wire.agent import ContextParams
from botbin.wire.errors import ErrorData, error_data, kind_of
from botbin.wire.model import WireModel
from botbin.wire.requests import JSON_NAMES, SearchRequest, problem
from botbin.wire.studio import ConsolidateParams, RestoreParams, StudioFolder, StudioInfo

log = logging.getLogger(__name__)

P = TypeVar("P", bound=WireModel)
#: The largest JSON body a request may carry, in bytes.
MAX_BODY_BYTES = 256 * 1024
#: HTTP status of each error kind (the rest: 400 for what the request asked, 500 for a bug).
STATUS_OF_KIND = {
    "bad_request": 400,
    "bad_config": 400,
    "workspace_missing": 404,
    "locked": 423,
    "wrong_passphrase": 423,
    "busy": 409,
    "model_unavailable": 503,
    "remote_unavailable": 503,
    "storage": 507,
    "internal": 500,
}


@dataclass(frozen=True)
class StudioConfig:
    """What one studio serves."""

    folders: Callable[[], Sequence[MemoryService]]
    """The workspace folders now (one for ``botbin studio``; the language server's open folders)."""
    editor: Editor
    """Which editor the notes' links open."""
    read_only: bool = False
    """Refuse the actions that write (sync, prune, restore, consolidate without a dry run)."""


def _json(payload: WireModel | ErrorData, status: int = 200) -> Response:
    return Response(payload.model_dump_json(by_alias=True), status, media_type="application/json")


def _error(exc: BaseException) -> Response:
    kind = kind_of(exc)
    if kind == "internal":
        log.exception("studio request failed", exc_info=exc)
    return _json(error_data(exc), STATUS_OF_KIND.get(kind, 400))


def _bad(message: str, status: int = 400) -> Response:
    return _json(ErrorData(kind="bad_request", message=message), status)


def _validation(exc: ValidationError) -> str:
    """The body's first mistake, worded as every surface words it (wire/requests.py ``problem``)."""
    return problem(exc, JSON_NAMES)


class _Empty(WireModel):
    """The body of an action without params (``{}``)."""


class _Routes:
    """The route handlers of one StudioConfig."""

    def __init__(self, config: StudioConfig) -> None:
        self.config = config

    def _folder(self, request: Request) -> tuple[MemoryService, Link] | None:
        folders = list(self.config.folders())
        raw = request.path_params.get("folder", "")
        if not raw.isdigit() or int(raw) >= len(folders):
            return None
        service = folders[int(raw)]
        return service, linker(self.config.editor, service.root)

    async def index(self, request: Request) -> Response:
        text, policy = page("Recall Studio")
        return HTMLResponse(text, headers={"content-security-policy": policy})

    async def info(self, request: Request) -> Response:
        folders = [
            StudioFolder(id=i, name=s.root.name or str(s.root), path=str(s.root))
            for i, s in enumerate(self.config.folders())
        ]
        info = StudioInfo(
            version=__version__, folders=folders, read_only=self.config.read_only, editor=self.config.editor
        )
        return _json(info)

    async def view(
        self, request: Request, work: Callable[[MemoryService, Link], WireModel], writes: bool = False
    ) -> Response:
        """Run ``work`` on the request's folder in a worker thread."""
        found = self._folder(request)
        if found is None:
            return _bad("no such workspace folder", 404)
        if writes and self.config.read_only:
            return _bad("this studio is read-only (botbin studio --read-only)", 403)
        try:
            return _json(await run_in_threadpool(work, *found))
        except Exception as exc:  # every failure is answered; a bug is logged with its traceback
            return _error(exc)

    async def params(self, request: Request, model: type[P]) -> P | Response:
        declared = request.headers.get("content-length", "0")
        if not declared.isdigit() or int(declared) > MAX_BODY_BYTES:
            return _bad(f"the body is over {MAX_BODY_BYTES} bytes", 413)
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            return _bad(f"the body is over {MAX_BODY_BYTES} bytes", 413)
        try:
            return model.model_validate_json(body or b"{}")
        except ValidationError as exc:
            return _bad(_validation(exc))

    def routes(self) -> list[Route]:
        def get(path: str, work: Callable[[MemoryService, Link], WireModel]) -> Route:
            async def endpoint(request: Request) -> Response:
                return await self.view(request, work)

            return Route(path, endpoint, methods=["GET"])

        def post(path: str, model: type[Any], work: Callable[..., WireModel], writes: Callable[[Any], bool]) -> Route:
            async def endpoint(request: Request) -> Response:
                given = await self.params(request, model)
                if isinstance(given, Response):
                    return given
                return await self.view(request, lambda s, link: work(s, given, link), writes=writes(given))

            return Route(path, endpoint, methods=["POST"])

        f = "/api/folders/{folder}"
        never, always = (lambda _: False), (lambda _: True)
        return [
            Route("/", self.index, methods=["GET"]),
            Route("/api/info", self.info, methods=["GET"]),
            post(f + "/search", SearchRequest, views.search, never),
            post(f + "/context", ContextParams, lambda s, p, _: views.context(s, p), never),
            get(f + "/rules", views.rules),
            get(f + "/lifecycle", views.lifecycle),
            get(f + "/health", lambda s, _: views.health(s)),
            post(f + "/sync", _Empty, lambda s, _p, _l: views.sync(s), always),
            post(f + "/prune", _Empty, lambda s, _p, _l: views.prune(s), always),
            post(f + "/restore", RestoreParams, lambda s, p, _: views.restore(s, p), always),
            post(f + "/consolidate", ConsolidateParams, views.consolidate, lambda p: not p.dry_run),
        ]


def create_app(config: StudioConfig, guard: Guard) -> ASGIApp:
    """The studio's ASGI app over ``config``, behind ``guard``."""
    app = Starlette(routes=_Routes(config).routes())
    return guarded(app, guard)
