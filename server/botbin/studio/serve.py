"""The studio's server (uvicorn): a socket bound to 127.0.0.1 and nothing else (there is no option for another
address), a fresh token per start, and the URL that carries it. A browser is opened through a private redirect
file, as Jupyter does, so that the token never shows on a command line another user could read."""

from __future__ import annotations

import logging
import os
import socket
import sys
import tempfile
import threading
import time
import webbrowser
from pathlib import Path

import uvicorn

from botbin.errors import BotbinError
from botbin.studio.app import StudioConfig, create_app
from botbin.studio.security import TOKEN_PARAM, Guard, new_token

log = logging.getLogger(__name__)

#: The only address the studio listens on.
LOOPBACK = "127.0.0.1"
#: Longest wait for the server to start listening, in seconds.
START_TIMEOUT_S = 30.0


class StudioServer:
    """One studio over ``config`` on 127.0.0.1:``port`` (0: a free port)."""

    def __init__(self, config: StudioConfig, port: int = 0) -> None:
        """Raises BotbinError when the port cannot be bound."""
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self.socket.bind((LOOPBACK, port))
            self.socket.listen(128)  # from now on a browser's connection waits for the server instead of failing
        except OSError as exc:
            self.socket.close()
            raise BotbinError(f"cannot listen on {LOOPBACK}:{port} ({exc.strerror or exc})") from exc
        self.port: int = self.socket.getsockname()[1]
        self.guard = Guard(new_token(), self.port)
        settings = uvicorn.Config(
            create_app(config, self.guard),
            log_config=None,  # the process's logging stays as botbin set it (stderr)
            access_log=False,  # an access log would print the page's URL, token included
            lifespan="off",
            server_header=False,
            timeout_graceful_shutdown=2,
        )
        # uvicorn's access log names each request's path and query (the page's token): off for good, whatever
        # configures logging later (access_log=False only empties its handlers, once)
        logging.getLogger("uvicorn.access").disabled = True
        self._server = uvicorn.Server(settings)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address, with the token."""
        return f"http://{LOOPBACK}:{self.port}/?{TOKEN_PARAM}={self.guard.token}"

    @property
    def origin(self) -> str:
        """The page's origin (no token)."""
        return f"http://{LOOPBACK}:{self.port}"

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (Ctrl+C, SIGTERM)."""
        self._server.run(sockets=[self.socket])

    def start(self) -> None:
        """Serve on a daemon thread; returns once it listens. Raises BotbinError when it does not start."""
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self.socket]}, name="botbin-studio", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise BotbinError(f"Recall Studio did not start on {self.origin} (see the log)")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop serving (a started server) and close the socket."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.socket.close()


def can_open_browser() -> bool:
    """True where a graphical browser can be opened: macOS, Windows, or a desktop session on Linux (a text
    browser in the same terminal would take it over)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str) -> Path | None:
    """Open ``url`` in the user's browser through a redirect file only they can read (the browser's command line
    names the file, not the token); returns the file (remove it when done), None when no browser opened."""
    if not can_open_browser():
        return None
    fd, name = tempfile.mkstemp(prefix="botbin-studio-", suffix=".html")
    with os.fdopen(fd, "w", encoding="utf-8") as out:  # mkstemp: mode 0600
        out.write(f'<!doctype html><meta http-equiv="refresh" content="0;url={url}"><a href="{url}">Recall Studio</a>')
    path = Path(name)
    try:
        opened = webbrowser.open(path.as_uri())
    except webbrowser.Error as exc:
        log.info("no browser opened: %s", exc)
        opened = False
    if not opened:
        path.unlink(missing_ok=True)
        return None
    return path
