"""Run a real VS Code for the end-to-end test: code-server 4.96.4 (the VS Code 1.96.4 workbench and extension host,
installed by scripts/vscode-real/install.sh) served to Debian's headless Chromium, driven with Selenium over the
DevTools port, read through VS Code's own DOM classes. Every process is started here and stopped by its id."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

CACHE = Path(os.environ.get("BOTBIN_VSCODE_REAL") or Path.home() / ".cache" / "botbin-vscode-real")
CODE_SERVER = CACHE / "cs" / "node_modules" / ".bin" / "code-server"
INSTALLED = CACHE / "cs" / ".installed-4.96.4"
CHROMIUM = Path("/usr/lib/chromium/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

T = TypeVar("T")

STATUS_JS = r"""
const items = Array.from(document.querySelectorAll('.statusbar-item'));
const b = items.find(e => (e.id||'').includes('botbin'));
if (!b) return null;
const a = b.querySelector('a') || b;
return {text: (b.textContent||'').trim(), aria: a.getAttribute('aria-label') || ''};
"""
PICK_JS = r"""
const w = document.querySelector('.quick-input-widget');
if (!w || w.style.display === 'none') return null;
const rows = Array.from(w.querySelectorAll('.monaco-list-row')).map(r => (r.innerText||'').replace(/\n+/g,' | '));
return {rows, title: (w.querySelector('.quick-input-title')||{}).innerText || ''};
"""
HOVER_JS = r"""
return Array.from(document.querySelectorAll('.monaco-hover'))
  .filter(h => h.offsetParent !== null && !h.classList.contains('hidden'))
  .map(h => (h.innerText||'').trim()).filter(t => t.length);
"""
LINE_JS = r"""
const needle = arguments[0];
for (const l of document.querySelectorAll('.monaco-editor .view-line')) {
  if ((l.textContent||'').replace(/\u00a0/g,' ').includes(needle)) return l.querySelector('span span') || l;
}
return null;
"""
TOASTS_JS = r"""
return Array.from(document.querySelectorAll('.notification-toast')).map(t => ({
  text: (t.innerText||'').trim(),
  buttons: Array.from(t.querySelectorAll('.monaco-button')).map(b => (b.innerText||'').trim())}));
"""
CURSOR_JS = r"""
const s = document.getElementById('status.editor.selection');
return s ? (s.innerText||'').trim() : null;
"""
TAB_JS = r"""
const t = document.querySelector('.tabs-container .tab.active');
return t ? (t.getAttribute('aria-label')||t.innerText||'').trim() : null;
"""


def installed() -> bool:
    return INSTALLED.is_file() and CHROMIUM.is_file() and CHROMEDRIVER.is_file()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Callable[[], T | None], timeout: float, what: str, every: float = 0.25) -> T:
    """The first truthy value of ``check()``; AssertionError naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as exc:  # a DOM read during a re-render
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


@dataclass
class CodeServer:
    """A running code-server with its own data folders."""

    root: Path
    """Its HOME, user data and extensions live under here (a test's temp folder)."""
    port: int
    """Where it serves the workbench."""
    process: subprocess.Popen[bytes]
    """The code-server process."""

    @property
    def user_data(self) -> Path:
        return self.root / "user-data"

    def machine_settings(self, settings: dict[str, Any]) -> None:
        """Write the Machine settings (where a remote window reads machine-overridable settings)."""
        path = self.user_data / "Machine" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings, indent=2), encoding="utf-8")

    def logs(self, pattern: str) -> list[Path]:
        return sorted((self.user_data / "logs").rglob(pattern))


def _env(root: Path, extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "HOME": str(root / "home"), **extra}


@contextmanager
def code_server(root: Path, vsix: Path, env: dict[str, str]) -> Iterator[CodeServer]:
    """code-server with the ``vsix`` installed, on a free port; stopped (by its id) on exit."""
    (root / "home").mkdir(parents=True, exist_ok=True)
    dirs = ["--user-data-dir", str(root / "user-data"), "--extensions-dir", str(root / "extensions")]
    subprocess.run(
        [str(CODE_SERVER), *dirs, "--install-extension", str(vsix)],
        env=_env(root, env),
        check=True,
        capture_output=True,
        timeout=300,
    )
    port = free_port()
    config = root / "config.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n", encoding="utf-8")
    log = (root / "code-server.log").open("wb")
    process = subprocess.Popen(
        [str(CODE_SERVER), "--config", str(config), *dirs, "--disable-telemetry", "--disable-update-check",
         "--disable-workspace-trust", "--disable-getting-started-override"],
        env=_env(root, env), stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_for(lambda: _listening(port), 120, f"code-server on port {port}")
        yield CodeServer(root, port, process)
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def chromium(root: Path) -> Iterator[Any]:
    """Headless Chromium with a DevTools port, and a Selenium driver attached to it; both stopped on exit."""
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not try to download a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    port = free_port()
    process = subprocess.Popen(
        [str(CHROMIUM), "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-address=127.0.0.1",
         f"--remote-debugging-port={port}", f"--user-data-dir={root / 'chrome-profile'}", "--window-size=1600,1000",
         "--force-device-scale-factor=1", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--lang=en-US",
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": str(root)},
    )  # fmt: skip
    driver = None
    try:
        wait_for(lambda: _listening(port), 60, f"Chromium's DevTools port {port}")
        options = webdriver.ChromeOptions()
        options.debugger_address = f"127.0.0.1:{port}"
        options.binary_location = str(CHROMIUM)
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        yield driver
    finally:
        if driver is not None:
            driver.quit()
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
