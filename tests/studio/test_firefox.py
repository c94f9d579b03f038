"""Recall Studio in Firefox (Debian's firefox-esr, headless, over WebDriver BiDi: tests/studio/bidi.py): every view
draws, a search typed with the keyboard shows its hits taken apart, the hostile notes stay text, the tabs follow
the arrow keys. Screenshots in test-artifacts/studio/firefox-*.png. Skipped where Firefox is not installed, unless
BOTBIN_REQUIRE_VSCODE_REAL=1 (scripts/test.sh, whose install script installs it) makes its absence fail."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from conftest import REPO
from editors.vscode_real import wait_for
from studio.bidi import FIREFOX, Firefox, firefox
from studio.conftest import HOSTILE_NAME, Running

ARTIFACTS = REPO / "test-artifacts" / "studio"

pytestmark = pytest.mark.skipif(
    FIREFOX is None and os.environ.get("BOTBIN_REQUIRE_VSCODE_REAL") != "1",
    reason="Firefox is not installed here: run scripts/vscode-real/install.sh (Debian's firefox-esr)",
)

STATE = (
    "(() => { const p = document.getElementById('panel-{view}'); return p && !p.hidden ? p.dataset.state : null; })()"
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Firefox]:
    with firefox(tmp_path_factory.mktemp("firefox")) as session:
        yield session


def ready(browser: Firefox, view: str) -> None:
    wait_for(lambda: browser.js(STATE.replace("{view}", view)) in ("ready", "error"), 60, f"the {view} view")
    assert browser.js(STATE.replace("{view}", view)) == "ready"


def test_every_view_draws_in_firefox(browser: Firefox, studio: Running) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for view in ("search", "context", "rules", "lifecycle", "health"):
        browser.get("about:blank")
        browser.get(f"{studio.server.url}#{view}")
        ready(browser, view)
        assert browser.js("document.querySelector('[role=tab][aria-selected=true]').id") == f"tab-{view}"
        browser.screenshot(ARTIFACTS / f"firefox-{view}.png")
        if view == "rules":
            rows = browser.js("document.querySelectorAll('#panel-rules table.rules tbody tr').length")
            assert rows == len(studio.json("GET", "/api/folders/0/rules")["rules"])


def test_a_search_typed_in_firefox_shows_hits_and_hostile_notes_as_text(browser: Firefox, studio: Running) -> None:
    browser.get("about:blank")
    browser.get(f"{studio.server.url}#search")
    ready(browser, "search")
    browser.js("document.getElementById('search-query').focus()")
    browser.js("(document.getElementById('panel-search').dataset.state = 'asked')")
    browser.keys("what are the llamas called", "Enter")
    ready(browser, "search")
    paths = browser.js("Array.from(document.querySelectorAll('#panel-search li.hit')).map(h => h.dataset.path)")
    assert HOSTILE_NAME in paths
    shown = browser.js("document.querySelector('#panel-search .results').textContent")
    assert "<img src=x onerror=window.__pwned=1> llamas" in shown
    assert (
        browser.js("document.querySelectorAll('#panel-search .results img, #panel-search .results script').length") == 0
    )
    assert browser.js("typeof window.__pwned") == "undefined"
    bars = browser.js("Array.from(document.querySelectorAll('.score-bar')).map(b => b.getAttribute('aria-label'))")
    assert bars and all("cosine" in b for b in bars)
    browser.js("document.getElementById('tab-search').focus()")
    browser.keys("ArrowRight")
    assert browser.js("document.activeElement.id") == "tab-context"
    assert browser.js("document.getElementById('panel-context').hidden") is False
    browser.screenshot(ARTIFACTS / "firefox-search-hits.png")
