"""Recall Studio's JSON API over real notes and the real model: each view answers what the service says (search
with its score parts, the context an agent gets with what was left out and why, rules and conflicts, the memo
lifecycle, health), looking counts no retrieval, bad params are refused with a reason, and the actions (sync,
prune, restore, consolidate) do what the CLI's commands do."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from urllib.parse import quote

import pytest

from botbin.wire.agent import ContextResult
from botbin.wire.convert import context as wire_context
from botbin.wire.requests import ContextRequest
from studio.conftest import Running

F = "/api/folders/0"


def memo_counts(studio: Running) -> dict[str, int]:
    """Retrievals counted per memo (the memos made first, as the first search would)."""
    studio.service.lifecycle.ensure()
    studio.service.lifecycle.flush()
    return {m.id: m.reinforcement_count for m in studio.service.lifecycle.store.all()}


def test_info_names_the_folder(studio: Running) -> None:
    info = studio.json("GET", "/api/info")
    assert info["folders"] == [{"id": 0, "name": studio.service.root.name, "path": str(studio.service.root)}]
    assert info["readOnly"] is False and info["editor"] == "vscode"


def test_search_takes_each_hit_apart_and_counts_no_retrieval(studio: Running) -> None:
    before = memo_counts(studio)
    result = studio.json("POST", F + "/search", {"query": "when is the v0.4.0 release tagged", "k": 5})
    assert result["hits"] and len(result["hits"]) <= 5
    top = result["hits"][0]
    assert top["path"].startswith("memory/2026-11-")
    for hit in result["hits"]:
        assert sum(p["points"] for p in hit["parts"]) == pytest.approx(hit["score"], abs=1e-4)
        assert {p["name"] for p in hit["parts"]} >= {"cosine", "keywords", "note", "neighbours"}
        assert hit["startLine"] <= hit["snippetStartLine"] < hit["snippetEndLine"] <= hit["endLine"]
        path = studio.service.root / hit["path"]
        assert hit["editorUrl"] == f"vscode://file{quote(path.as_posix())}:{hit['startLine'] + 1}:1"
    assert result["elapsedMs"] > 0 and result["indexedAt"]
    assert memo_counts(studio) == before  # looking is not retrieving


def test_search_refuses_bad_params_with_a_reason(studio: Running) -> None:
    for body, says in (
        ({"query": "  "}, "the query is empty"),
        ({"query": "x", "k": 0}, "k must be a whole number"),
        ({"query": "x", "filters": {"dateFrom": "last week"}}, "filters.dateFrom"),
        ({"query": "x", "filters": {"kind": "rumour"}}, "filters.kind"),
        ({"query": "x", "colour": "red"}, "colour"),
        ({"k": 3}, "query"),
    ):
        status, _, data = studio.request("POST", F + "/search", body)
        assert status == 400, body
        assert says in data.decode(), (body, data)
    # worded as the LSP and the CLI word them (wire/requests.py problem), camelCase keys named as sent
    for body, message in (
        ({"query": "  "}, "the query is empty"),
        ({"query": "x", "k": 0}, "k must be a whole number from 1 to 1000, not 0"),
        (
            {"query": "x", "filters": {"dateFrom": "last week"}},
            "filters.dateFrom takes a date as YYYY, YYYY-MM or YYYY-MM-DD, not 'last week'",
        ),
    ):
        assert json.loads(studio.request("POST", F + "/search", body)[2])["message"] == message
    status, _, data = studio.request("POST", F + "/search", headers={"Content-Type": "application/json"})
    assert status == 400 and b"query" in data
    assert studio.request("POST", "/api/folders/7/search", {"query": "x"})[0] == 404
    assert studio.request("GET", "/api/folders/x/rules")[0] == 404


def test_context_is_what_get_context_gives_with_what_was_left_out_and_why(studio: Running) -> None:
    before = memo_counts(studio)
    task = "prepare the v0.4.0 release notes"
    shown = ContextResult.model_validate(studio.json("POST", F + "/context", {"query": task, "budgetTokens": 400}))
    agent = wire_context(studio.service.context(ContextRequest(query=task, budget_tokens=400), reinforce=False))
    assert shown.text == agent.text and shown.used_tokens == agent.used_tokens <= 400
    assert [t.name for t in shown.tiers] == ["hard", "guidance", "soft", "recent", "recalled"]
    assert [t.tier for t in shown.tiers] == ["1", "1.5", "2", "3", "4"]
    hard = shown.tiers[0]
    assert any("use tabs" in i.text for i in hard.items)
    cut = [c for t in shown.tiers for c in t.cut]
    assert cut and {c.reason for c in cut} <= {"duplicate", "budget", "share", "after_cut"}
    assert sum(t.tokens for t in shown.tiers) == shown.used_tokens
    assert memo_counts(studio) == before  # a preview is not a retrieval
    status, _, data = studio.request("POST", F + "/context", {"query": task, "budgetTokens": 5})
    assert status == 400 and b"hard rules" in data  # the rules alone need more: no rule dropped silently


def test_rules_show_kind_modality_cue_and_line_and_conflicts_side_by_side(studio: Running) -> None:
    rules = studio.json("GET", F + "/rules")
    tabs = [r for r in rules["rules"] if "use tabs" in r["text"]]
    assert {r["cues"][0]["modality"] for r in tabs} == {"obligation", "prohibition"}
    agents = (studio.service.root / "AGENTS.md").read_text(encoding="utf-8").splitlines()
    for rule in rules["rules"]:
        assert rule["kind"] in ("hard", "soft")
        note = (studio.service.root / rule["path"]).read_text(encoding="utf-8").splitlines()
        assert rule["text"].splitlines()[0] == note[rule["startLine"]]
    [conflict] = [c for c in rules["conflicts"] if "tabs" in c["action"]]
    assert agents[conflict["first"]["line"]] == "- Always use tabs for indentation."
    assert agents[conflict["second"]["line"]] == "- Never use tabs for indentation."
    assert conflict["firstUrl"].endswith(f"AGENTS.md:{conflict['first']['line'] + 1}:1")


def test_lifecycle_shows_curves_and_writes_nothing(studio: Running) -> None:
    studio.service.lifecycle.flush()
    stored = {m.id: m.decay_score for m in studio.service.lifecycle.store.all()}
    view = studio.json("GET", F + "/lifecycle")
    assert view["live"] > 0 and view["threshold"] == 0.05 and view["halfLifeDays"] == 30.0
    assert view["prunableCount"] == 0 and view["archived"] == []
    assert not any(m["path"] in ("AGENTS.md", "MEMORY.md") for m in view["faded"])  # instruction notes never fade
    memo = view["faded"][0]
    assert memo["curve"][0]["score"] == pytest.approx(1.0) and memo["curve"][-1]["day"] > memo["fadesInDays"]
    assert {m.id: m.decay_score for m in studio.service.lifecycle.store.all()} == stored


def test_health_reports_the_index(studio: Running) -> None:
    health = studio.json("GET", F + "/health")
    status = health["status"]
    assert status["files"] == status["tracked"] > 0 and status["chunks"] > 0
    assert status["model"] == "sentence-transformers/all-MiniLM-L6-v2" and status["encryption"] == "off"
    assert health["team"] is None and health["indexing"] is False
    assert len(status["conflicts"]) >= 1


def test_sync_finds_the_changed_note_and_the_one_that_fails(own_studio: Callable[..., Running]) -> None:
    studio = own_studio(max_note_bytes=16384)
    (studio.service.root / "memory" / "ideas.md").write_text("# Ideas\n\nA llama petting zoo.\n", encoding="utf-8")
    (studio.service.root / "memory" / "huge.md").write_text("# Huge\n\n" + "words " * 4000, encoding="utf-8")
    health = studio.json("GET", F + "/health")
    assert {s["path"] for s in health["status"]["stale"]} == {"memory/ideas.md", "memory/huge.md"}
    synced = studio.json("POST", F + "/sync", {})
    assert synced["report"]["modified"] == ["memory/ideas.md"] and synced["publishError"] is None
    health = studio.json("GET", F + "/health")
    [failed] = health["failed"]
    assert failed["path"] == "memory/huge.md" and "max_note_bytes" in failed["reason"]
    assert health["lastRun"]["modified"] == ["memory/ideas.md"]


def test_prune_then_restore_go_through_the_lifecycle(own_studio: Callable[..., Running]) -> None:
    studio = own_studio(decay_half_life_days=0.00002)  # a memo halves in under 2 s
    studio.json("POST", F + "/search", {"query": "llama"})  # the memos (a search made them; this one counts none)
    time.sleep(2.5)
    view = studio.json("GET", F + "/lifecycle")
    assert view["prunableCount"] > 0 and all(m["kind"] == "lore" for m in view["prunable"])
    pruned = studio.json("POST", F + "/prune", {})
    assert len(pruned["archived"]) == view["prunableCount"]
    assert (studio.service.output_dir / "archive.md").is_file()
    view = studio.json("GET", F + "/lifecycle")
    assert len(view["archived"]) == min(100, len(pruned["archived"])) and view["prunableCount"] == 0
    one = view["archived"][0]["id"]
    restored = studio.json("POST", F + "/restore", {"ids": [one[:12]]})
    assert [m["id"] for m in restored["restored"]] == [one] and restored["unknown"] == []
    status, _, data = studio.request("POST", F + "/restore", {})
    assert status == 400 and b"name memo ids" in data


def test_consolidate_previews_then_writes_the_roots_note(own_studio: Callable[..., Running]) -> None:
    studio = own_studio()
    fact = "- The staging database moved to host kestrel-db-2 in the blue rack.\n"
    for day in ("2026-11-23", "2026-11-24"):  # a memo that recurs in two notes is a root
        (studio.service.root / "memory" / f"{day}.md").write_text(f"# {day}\n\n{fact}", encoding="utf-8")
    studio.json("POST", F + "/sync", {})
    roots_note = studio.service.root / studio.service.settings.roots_note
    preview = studio.json("POST", F + "/consolidate", {"dryRun": True})
    assert preview["dryRun"] is True and not roots_note.exists()
    recurring = [r for r in preview["roots"] if "kestrel-db-2" in r["text"]]
    assert recurring and {s["path"] for s in recurring[0]["sources"]} >= {
        "memory/2026-11-23.md",
        "memory/2026-11-24.md",
    }
    done = studio.json("POST", F + "/consolidate", {"dryRun": False})
    assert [r["text"] for r in done["roots"]] == [r["text"] for r in preview["roots"]] and roots_note.is_file()
    view = studio.json("GET", F + "/lifecycle")
    assert [r["text"] for r in view["roots"]] == [r["text"] for r in done["roots"]]
    [shown] = [r for r in view["roots"] if "kestrel-db-2" in r["text"]]
    assert [(s["path"], s["startLine"]) for s in shown["sources"]] == [
        (s["path"], s["startLine"]) for s in recurring[0]["sources"]
    ]
    assert shown["reason"].startswith("recurs in 2 notes")
