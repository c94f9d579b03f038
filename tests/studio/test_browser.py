"""Recall Studio in a real browser: Debian's headless Chromium, driven by Selenium (tests/editors/vscode_real.py
starts it), opens each view on real notes and the real model and checks what it shows through the DOM, by
keyboard where a person would use it; the hostile notes' script tags, event attributes and javascript: links are
shown as text and nothing of them runs; the prune and restore buttons ask first, then act. Screenshots go to
test-artifacts/studio/ (git-ignored).

Needs Chromium and chromedriver (scripts/vscode-real/install.sh installs them; scripts/test.sh runs it); skipped
without them, unless BOTBIN_REQUIRE_VSCODE_REAL=1 (as in scripts/test.sh) makes their absence fail."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conftest import REPO
from editors import vscode_real as vr
from studio.conftest import HOSTILE_NAME, Running

ARTIFACTS = REPO / "test-artifacts" / "studio"

pytestmark = pytest.mark.skipif(
    not (vr.CHROMIUM.is_file() and vr.CHROMEDRIVER.is_file()) and os.environ.get("BOTBIN_REQUIRE_VSCODE_REAL") != "1",
    reason="Chromium and chromedriver are not installed here: run scripts/vscode-real/install.sh",
)

STATE_JS = "const p = document.getElementById('panel-' + arguments[0]); return p && !p.hidden ? p.dataset.state : null;"
PWNED_JS = "return typeof window.__pwned === 'undefined' ? null : String(window.__pwned);"
UNLABELLED_JS = r"""
return Array.from(document.querySelectorAll('input, select, textarea'))
  .filter(e => !e.labels?.length && !e.getAttribute('aria-label')).map(e => e.id || e.outerHTML.slice(0, 60));
"""


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with vr.chromium(tmp_path_factory.mktemp("chromium")) as d:
        yield d


def shot(driver: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def open_view(driver: Any, studio: Running, view: str, reload: bool = True) -> None:
    """Open ``view`` by its URL (a fresh page load) and wait until it has drawn."""
    if reload:
        driver.get("about:blank")
    driver.get(f"{studio.server.url}#{view}")
    vr.wait_for(lambda: driver.execute_script(STATE_JS, view) in ("ready", "error"), 60, f"the {view} view")
    assert driver.execute_script(STATE_JS, view) == "ready"


def q(driver: Any, css: str) -> Any:
    return driver.find_element("css selector", css)


def qs(driver: Any, css: str) -> list[Any]:
    return list(driver.find_elements("css selector", css))


def submit(driver: Any, view: str, field: str, text: str) -> None:
    """Type ``text`` into ``field`` and submit its form with the keyboard; wait for the answer."""
    from selenium.webdriver.common.keys import Keys

    box = q(driver, f"#{field}")
    box.clear()
    box.send_keys(text)
    driver.execute_script(f"document.getElementById('panel-{view}').dataset.state = 'asked'")
    if box.tag_name == "textarea":
        q(driver, f"#panel-{view} button[type=submit]").send_keys(Keys.ENTER)
    else:
        box.send_keys(Keys.ENTER)
    vr.wait_for(lambda: driver.execute_script(STATE_JS, view) in ("ready", "error"), 60, f"the {view} answer")
    assert driver.execute_script(STATE_JS, view) == "ready"


def test_search_shows_each_hit_taken_apart_and_hostile_notes_as_text(driver: Any, studio: Running) -> None:
    open_view(driver, studio, "search")
    assert driver.execute_script(UNLABELLED_JS) == []
    submit(driver, "search", "search-query", "how many llamas were counted and what are they called")
    hits = qs(driver, "#panel-search li.hit")
    assert hits
    paths = [h.get_attribute("data-path") for h in hits]
    assert "memory/llamas.md" in paths and HOSTILE_NAME in paths
    llamas = hits[paths.index("memory/llamas.md")]
    text = llamas.text
    assert "<script>" in text or "onerror" in text or "javascript:" in text  # the note's markup, as text
    for hit in hits:
        bar = hit.find_element("css selector", ".score-bar")
        assert bar.get_attribute("role") == "img" and "cosine" in bar.get_attribute("aria-label")
        assert hit.find_elements("css selector", ".score-bar .seg")
    named = hits[paths.index(HOSTILE_NAME)].find_element("css selector", "a.path")
    href = named.get_attribute("href")
    assert href.startswith("vscode://file/") and "%3Cimg" in href and "<" not in href
    assert named.text.startswith(HOSTILE_NAME)
    results = q(driver, "#panel-search .results")
    assert results.find_elements("css selector", "script, img, svg:not(.spark), iframe, b, [onerror]") == []
    assert driver.execute_script(PWNED_JS) is None
    shot(driver, "search")


def test_the_views_are_tabs_the_keyboard_moves_between(driver: Any, studio: Running) -> None:
    from selenium.webdriver.common.keys import Keys

    open_view(driver, studio, "search")
    tab = q(driver, "#tab-search")
    assert tab.get_attribute("role") == "tab" and tab.get_attribute("aria-selected") == "true"
    tab.send_keys(Keys.ARROW_RIGHT)
    vr.wait_for(lambda: q(driver, "#tab-context").get_attribute("aria-selected") == "true", 10, "the context tab")
    assert driver.switch_to.active_element.get_attribute("id") == "tab-context"
    assert q(driver, "#panel-context").is_displayed() and not q(driver, "#panel-search").is_displayed()
    driver.switch_to.active_element.send_keys(Keys.END)
    vr.wait_for(lambda: q(driver, "#tab-health").get_attribute("aria-selected") == "true", 10, "the last tab")
    driver.switch_to.active_element.send_keys(Keys.HOME)
    vr.wait_for(lambda: q(driver, "#tab-search").get_attribute("aria-selected") == "true", 10, "the first tab")
    assert [t.get_attribute("aria-controls") for t in qs(driver, "[role=tab]")] == [
        f"panel-{v}" for v in ("search", "context", "rules", "lifecycle", "health")
    ]


def test_context_preview_shows_the_tiers_the_budget_and_what_was_left_out(driver: Any, studio: Running) -> None:
    open_view(driver, studio, "context")
    q(driver, "#context-budget").clear()
    q(driver, "#context-budget").send_keys("400")
    submit(driver, "context", "context-task", "prepare the v0.4.0 release notes")
    tiers = qs(driver, "#panel-context section.tier")
    assert [t.get_attribute("data-tier") for t in tiers] == ["hard", "guidance", "soft", "recent", "recalled"]
    expected = studio.json(
        "POST", "/api/folders/0/context", {"query": "prepare the v0.4.0 release notes", "budgetTokens": 400}
    )
    summary = q(driver, "#panel-context .summary").text
    assert summary == f"{expected['usedTokens']} of 400 tokens used"
    assert len(qs(driver, "#panel-context .token-bar .seg")) == sum(1 for t in expected["tiers"] if t["tokens"])
    hard = tiers[0]
    assert "Always use tabs for indentation." in hard.text and "Never use tabs for indentation." in hard.text
    assert "<script>window.__pwned='rule'</script>" in hard.text
    left_out = qs(driver, "#panel-context details.cut")
    assert left_out
    left_out[-1].find_element("css selector", "summary").click()
    reasons = {r.text for r in qs(driver, "#panel-context details.cut .reason") if r.text}
    assert reasons and reasons <= {
        "repeats a passage already chosen",
        "over the token budget",
        "over this tier's share of the budget",
        "after an entry that was left out (this tier keeps a prefix)",
    }
    assert driver.execute_script(PWNED_JS) is None
    shot(driver, "context")


def test_rules_list_every_rule_and_conflicts_side_by_side(driver: Any, studio: Running) -> None:
    open_view(driver, studio, "rules")
    expected = studio.json("GET", "/api/folders/0/rules")
    rows = qs(driver, "#panel-rules table.rules tbody tr")
    assert len(rows) == len(expected["rules"])
    [conflict] = [c for c in qs(driver, "#panel-rules li.conflict") if "tabs" in c.text]
    sides = conflict.find_elements("css selector", ".side")
    assert "Always use tabs" in sides[0].text and "Never use tabs" in sides[1].text
    assert sides[0].find_element("css selector", "a.path").get_attribute("href").startswith("vscode://file/")
    hostile = [r for r in rows if "__pwned" in r.text]
    assert hostile and "<script>" in hostile[0].text
    q(driver, "#rules-kind").send_keys("soft")
    shown = [r for r in rows if r.is_displayed()]
    assert shown and all(r.get_attribute("data-kind") == "soft" for r in shown)
    assert driver.execute_script(PWNED_JS) is None
    shot(driver, "rules")


def test_lifecycle_shows_the_memos_and_their_curves(driver: Any, studio: Running) -> None:
    open_view(driver, studio, "lifecycle")
    expected = studio.json("GET", "/api/folders/0/lifecycle")
    rows = qs(driver, "#panel-lifecycle table.memos tbody tr")
    assert len(rows) == len(expected["faded"]) > 0
    spark = rows[0].find_element("css selector", "svg.spark")
    assert spark.get_attribute("role") == "img" and "retention" in spark.get_attribute("aria-label")
    assert spark.find_elements("css selector", "path.curve") and spark.find_elements("css selector", "line.threshold")
    assert f"Next prune would archive ({expected['prunableCount']})" in q(driver, "#panel-lifecycle").text
    shot(driver, "lifecycle")


def test_health_shows_the_index(driver: Any, studio: Running) -> None:
    open_view(driver, studio, "health")
    status = studio.json("GET", "/api/folders/0/health")["status"]
    facts = {e.get_attribute("data-fact"): e.text for e in qs(driver, "#panel-health dd")}
    assert facts["index"] == f"{status['files']} notes, {status['chunks']} chunks"
    assert facts["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert facts["team"] == "none (embedded index)"
    shot(driver, "health")


def test_prune_and_restore_ask_first_then_act(driver: Any, own_studio: Callable[..., Running]) -> None:
    studio = own_studio(decay_half_life_days=0.00002)
    studio.json("POST", "/api/folders/0/search", {"query": "llama"})  # the memos, as a first search makes them
    time.sleep(2.5)
    open_view(driver, studio, "lifecycle")
    count = studio.json("GET", "/api/folders/0/lifecycle")["prunableCount"]
    assert count > 0
    prune = next(b for b in qs(driver, "#panel-lifecycle .actions button") if b.text.startswith("Prune"))
    prune.click()
    dialog = vr.wait_for(lambda: q(driver, "dialog[open]"), 10, "the confirmation")
    assert driver.switch_to.active_element.text == "Cancel"  # the safe choice has the focus
    dialog.find_element("css selector", "button.secondary").click()  # cancelled: nothing happens
    assert studio.json("GET", "/api/folders/0/lifecycle")["prunableCount"] == count
    prune = next(b for b in qs(driver, "#panel-lifecycle .actions button") if b.text.startswith("Prune"))
    prune.click()
    vr.wait_for(lambda: q(driver, "dialog[open]"), 10, "the confirmation").find_element(
        "css selector", "[data-confirm]"
    ).click()
    vr.wait_for(lambda: "archived" in q(driver, "#panel-lifecycle .notice").text, 60, "the prune's answer")
    vr.wait_for(lambda: qs(driver, "#panel-lifecycle li.archived"), 60, "the archived memos")
    shot(driver, "lifecycle-pruned")
    archived = len(studio.json("GET", "/api/folders/0/lifecycle")["archived"])
    assert archived == min(100, count)
    qs(driver, "#panel-lifecycle li.archived button")[0].click()
    vr.wait_for(lambda: q(driver, "dialog[open]"), 10, "the confirmation").find_element(
        "css selector", "[data-confirm]"
    ).click()
    vr.wait_for(lambda: "restored 1" in q(driver, "#panel-lifecycle .notice").text, 60, "the restore's answer")
    assert len(studio.json("GET", "/api/folders/0/lifecycle")["archived"]) == archived - 1


def test_first_paint_of_each_view(driver: Any, studio: Running) -> None:
    """When each view has drawn after a fresh page load (printed; bench/bench_studio.py holds the target)."""
    paints = {}
    for view in ("search", "context", "rules", "lifecycle", "health"):
        open_view(driver, studio, view)
        mark = driver.execute_script(f"return performance.getEntriesByName('botbin:ready:{view}')[0].startTime")
        paints[view] = round(mark)
    print("first paint (ms after navigation start):", paints)
    assert all(ms > 0 for ms in paints.values())
