"""Firefox for the browser tests, driven over WebDriver BiDi, which Firefox speaks itself (``--remote-debugging-port``):
Debian packages Firefox ESR but not geckodriver, which Selenium's Firefox driver needs, so the few commands the
tests use (navigate, evaluate, keys, screenshot) go over the BiDi WebSocket directly (websocket-client, which
Selenium brings). Firefox is started here with a fresh profile and stopped by its id."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from editors.vscode_real import free_port, wait_for

FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox")
#: A profile that opens nothing by itself and reaches nothing but what it is sent to.
PREFS = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.enabled": False,
    "extensions.update.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.newtabpage.enabled": False,
}
#: WebDriver's key codes.
KEYS = {"Enter": "\ue007", "ArrowRight": "\ue014", "End": "\ue010", "Home": "\ue011", "Tab": "\ue004"}


class Firefox:
    """One BiDi session on the first tab of a running Firefox."""

    def __init__(self, url: str) -> None:
        import websocket  # websocket-client, a dependency of selenium

        self._ws = websocket.create_connection(url, timeout=60, suppress_origin=True)  # Firefox refuses an Origin
        self._next = 0
        self.command("session.new", {"capabilities": {"alwaysMatch": {"acceptInsecureCerts": False}}})
        tree = self.command("browsingContext.getTree", {})
        self.context = tree["contexts"][0]["context"]

    def command(self, method: str, params: dict[str, Any]) -> Any:
        """Send one command and return its result (events in between are skipped). Raises AssertionError on an
        error answer."""
        self._next += 1
        self._ws.send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") != self._next:
                continue
            if message.get("type") == "error":
                raise AssertionError(f"{method}: {message.get('error')}: {message.get('message')}")
            return message["result"]

    def get(self, url: str) -> None:
        self.command("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def js(self, expression: str) -> Any:
        """The JSON value of ``expression`` (awaited when it is a promise)."""
        result = self.command(
            "script.evaluate",
            {
                "expression": f"(async () => JSON.stringify(await ({expression})))()",
                "target": {"context": self.context},
                "awaitPromise": True,
                "resultOwnership": "none",
            },
        )
        if result.get("type") == "exception":
            raise AssertionError(f"{expression}: {result['exceptionDetails'].get('text')}")
        value = result["result"].get("value")
        return None if value is None else json.loads(value)

    def keys(self, *typed: str) -> None:
        """Type ``typed`` (plain text, or a name of KEYS) into the focused element, as key presses."""
        actions: list[dict[str, str]] = []
        for piece in typed:
            for char in [KEYS[piece]] if piece in KEYS else list(piece):
                actions += [{"type": "keyDown", "value": char}, {"type": "keyUp", "value": char}]
        self.command(
            "input.performActions",
            {"context": self.context, "actions": [{"type": "key", "id": "keyboard", "actions": actions}]},
        )

    def screenshot(self, path: Path) -> None:
        data = self.command("browsingContext.captureScreenshot", {"context": self.context})["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.command("session.end", {})
        finally:
            self._ws.close()


@contextmanager
def firefox(root: Path) -> Iterator[Firefox]:
    """Headless Firefox with a fresh profile under ``root`` and a BiDi session on it; both stopped on exit."""
    assert FIREFOX is not None
    profile = root / "profile"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "user.js").write_text(
        "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in PREFS.items()), encoding="utf-8"
    )
    port = free_port()
    log = (root / "firefox.log").open("wb")
    process = subprocess.Popen(
        [FIREFOX, "--headless", "--no-remote", "--profile", str(profile), f"--remote-debugging-port={port}",
         "--width=1600", "--height=1000", "about:blank"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "HOME": str(root), "MOZ_CRASHREPORTER_DISABLE": "1"},
    )  # fmt: skip
    session = None
    try:
        wait_for(lambda: b"WebDriver BiDi listening" in (root / "firefox.log").read_bytes(), 90, "Firefox's BiDi port")
        session = Firefox(f"ws://127.0.0.1:{port}/session")
        yield session
    finally:
        if session is not None:
            with suppress(Exception):  # Firefox may already be going away
                session.close()
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
