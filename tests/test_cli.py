"""The botbin command line, run as a subprocess on a copy of the bundled example workspace (real model)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from botbin.embedding import BUNDLED_MODEL_ID, bundled_model_path
from botbin.search.pipeline import RELEVANCE_MIN_BM25_SHARE
from botbin.sync.lock import workspace_lock
from conftest import REPO, run_checker

pytestmark = pytest.mark.model
EXAMPLES = REPO / "examples"
EXAMPLE_QUESTION = json.loads((EXAMPLES / "queries.jsonl").read_text(encoding="utf-8").splitlines()[0])


def botbin(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("BOTBIN_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "botbin", *args], capture_output=True, cwd=cwd, env=full_env, check=False, timeout=600
    )


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example workspace, synced once by the CLI."""
    root = tmp_path_factory.mktemp("cli") / "workspace"
    shutil.copytree(EXAMPLES / "workspace", root, ignore=shutil.ignore_patterns("aifbin"))
    done = botbin("sync", cwd=root)
    assert done.returncode == 0, done.stderr.decode()
    notes = len(list(root.rglob("*.md")))
    assert done.stdout.decode().startswith(f"synced: {notes} added, 0 modified, 0 deleted")
    return root


def test_help_documents_exit_codes() -> None:
    out = botbin("--help").stdout.decode()
    assert "exit codes" in out and "4  embedding model unavailable" in out


def test_outputs_pass_the_checker_and_nothing_else_is_written(ws: Path) -> None:
    assert run_checker(ws, ws / "memory" / "aifbin").returncode == 0
    written = {p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_file()}
    source = {
        p.relative_to(EXAMPLES / "workspace").as_posix()
        for p in (EXAMPLES / "workspace").rglob("*")
        if p.is_file() and "aifbin" not in p.parts
    }
    assert {w for w in written if not w.startswith("memory/aifbin/")} == source


def test_noop_sync_is_silent_and_json_reports_it(ws: Path) -> None:
    quiet = botbin("--workspace", str(ws), "sync")
    assert quiet.returncode == 0 and quiet.stdout == b"" and quiet.stderr == b""
    report = json.loads(botbin("sync", "--json", "--workspace", str(ws)).stdout)
    assert report["added"] == [] and report["unchanged"] == len(list(ws.rglob("*.md"))) - 0
    assert report["chunksEmbedded"] == 0


def test_batch_search_answers_the_example_questions(ws: Path) -> None:
    queries = [json.loads(line) for line in (EXAMPLES / "queries.jsonl").read_text().splitlines() if line.strip()]
    out = botbin("search", "--batch", str(EXAMPLES / "queries.jsonl"), "--json", "-k", "3", "--best-per-note", cwd=ws)
    assert out.returncode == 0, out.stderr.decode()
    results = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert len(results) == len(queries)
    top3 = sum(q["expect"] in [h["path"] for h in hits] for q, hits in zip(queries, results, strict=True))
    first = sum(hits[0]["path"] == q["expect"] for q, hits in zip(queries, results, strict=True))
    # When written: 7/8 in the top 3, 5/8 first (the release-checklist paraphrase is the miss).
    assert top3 >= 7 and first >= 5, (top3, first, results)
    hit = results[0][0]
    assert {"path", "startLine", "endLine", "headingPath", "kind", "snippet", "score", "cosine", "bm25"} <= set(hit)
    # with the note and neighbour terms off, the score is the paper's hybrid
    plain = botbin(
        "search",
        queries[0]["q"],
        "--json",
        "-k",
        "1",
        cwd=ws,
        env={"BOTBIN_NOTE_WEIGHT": "0", "BOTBIN_NEIGHBOUR_WEIGHT": "0"},
    )
    hit = json.loads(plain.stdout.decode())["hits"][0]
    assert abs(hit["components"]["hybrid"] - (0.7 * hit["cosine"] + 0.3 * hit["bm25"])) < 1e-4


def test_search_text_output_and_filters(ws: Path) -> None:
    out = botbin("search", "Postgres connection pool", "-k", "2", "--tag", "postgres", cwd=ws)
    text = out.stdout.decode()
    assert out.returncode == 0 and text.startswith(" 1. memory/2026-11-05.md:")
    assert "score" in text and "cosine" in text
    german = json.loads(botbin("search", "Besprechung mit dem Partner", "--json", "-k", "1", cwd=ws).stdout)
    assert german["hits"][0]["path"] == "memory/2026-11-20.md"
    japanese = json.loads(botbin("search", "打ち合わせ", "--json", "-k", "1", "--alpha", "0", cwd=ws).stdout)
    assert japanese["hits"][0]["path"] == "memory/2026-11-20.md"


def test_search_hides_hits_under_the_relevance_floor_unless_all(ws: Path) -> None:
    # issue 18/19 changed the floor's keyword arm (bm25Share, not bm25 normalized by the best chunk): the Peru
    # query, which kept its best keyword hits before, now has only weak hits; a database query keeps a part
    query = ["search", "database connection pool", "-k", "10", "--json"]
    shown, every = botbin(*query, cwd=ws), botbin(*query, "--all", cwd=ws)
    kept, all_hits = json.loads(shown.stdout)["hits"], json.loads(every.stdout)["hits"]
    weak = [h for h in all_hits if h["cosine"] < 0.2 and h["bm25Share"] < RELEVANCE_MIN_BM25_SHARE]
    assert weak and len(weak) < len(all_hits), "some hits of a database query are weak, some are not"
    where = [(h["path"], h["startLine"]) for h in kept]  # scores move a little per search (memo decay)
    assert where == [(h["path"], h["startLine"]) for h in all_hits if h not in weak]
    assert json.loads(shown.stdout)["hidden"] == len(weak) and json.loads(every.stdout)["hidden"] == 0
    text = botbin(*query[:-1], cwd=ws).stdout.decode()
    said = "1 weak hit" if len(weak) == 1 else f"{len(weak)} weak hits"
    assert f"({said} under the relevance floor not shown; --all shows them)" in text
    peru = ["search", "what is the capital of Peru", "-k", "10"]
    assert json.loads(botbin(*peru, "--json", cwd=ws).stdout)["hits"] == []
    assert len(json.loads(botbin(*peru, "--json", "--all", cwd=ws).stdout)["hits"]) == 10
    assert botbin(*peru, cwd=ws).stdout.decode() == "no relevant hits (only weak ones; --all shows them)\n"


def test_an_unrelated_query_shows_no_hit_that_only_shares_common_words(ws: Path) -> None:
    # issue 18/19: "zebras grazing on the savanna" matched common words only, yet its best keyword hit had bm25
    # 1.000 (normalized by the best chunk) and passed the floor; its share of the query's IDF is small.
    query = ["search", "zebras grazing on the savanna", "-k", "10", "--json"]
    every = json.loads(botbin(*query, "--all", cwd=ws).stdout)["hits"]
    assert any(h["bm25"] == 1.0 and h["cosine"] < 0.2 for h in every), "the old floor's loophole must be there"
    shown = json.loads(botbin(*query, cwd=ws).stdout)["hits"]
    assert all(h["cosine"] >= 0.2 for h in shown), shown
    answer = json.loads(botbin("search", EXAMPLE_QUESTION["q"], "-k", "10", "--json", cwd=ws).stdout)["hits"]
    assert answer and answer[0]["path"] == EXAMPLE_QUESTION["expect"]


def test_status_info_and_extract(ws: Path) -> None:
    status = json.loads(botbin("status", "--json", cwd=ws).stdout)
    assert status["files"] == len(list(ws.rglob("*.md"))) and status["stale"] == []
    assert status["model"] == "sentence-transformers/all-MiniLM-L6-v2" and status["lastSync"]
    out_file = ws / "memory" / "aifbin" / "memory" / "2026-11-05.aif-bin"
    info = botbin("info", str(out_file))
    assert info.returncode == 0 and b"source:   memory/2026-11-05.md" in info.stdout
    extracted = botbin("extract", str(out_file))
    assert extracted.stdout == (ws / "memory" / "2026-11-05.md").read_bytes()


def test_failures_and_exit_codes(ws: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.aif-bin"
    broken.write_bytes((ws / "memory" / "aifbin" / "MEMORY.aif-bin").read_bytes()[:40])
    bad = botbin("info", str(broken))
    assert bad.returncode == 5 and b"broken.aif-bin" in bad.stderr
    assert botbin("sync", "--workspace", str(tmp_path / "missing")).returncode == 3
    usage = botbin("search", cwd=ws)
    assert usage.returncode == 2


def test_failed_note_gives_exit_1_and_names_it(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "bin.md").write_bytes(b"\x00\x01\x02 binary")
    (root / "botbin.toml").write_text("alpha = 2\n")
    out = botbin("sync", cwd=root)
    assert out.returncode == 1
    assert b"memory/bin.md" in out.stderr and b"binary" in out.stderr
    assert b"botbin.toml" in out.stderr and b"alpha" in out.stderr


def test_locked_workspace_gives_exit_3(ws: Path) -> None:
    with workspace_lock(ws / "memory" / "aifbin", 1.0):
        out = botbin("sync", cwd=ws, env={"BOTBIN_LOCK_TIMEOUT_S": "0.2"})
    assert out.returncode == 3 and b"another botbin process" in out.stderr


def test_a_wrong_model_setting_keeps_the_index_answering_with_its_own_model(ws: Path) -> None:
    """A ``model`` that names no folder is reported and never used: the index keeps its model (no keyword-only
    fallback, nothing re-embedded), and a sync says so with exit 4."""
    out = botbin("search", "webhook retries", "--json", "--model", str(ws / "no-model"), cwd=ws)
    assert out.returncode == 0 and json.loads(out.stdout)["degraded"] is False
    assert b"setting 'model' not used" in out.stderr and b"no-model" in out.stderr
    synced = botbin("sync", "--full", "--json", "--model", str(ws / "no-model"), cwd=ws)
    assert synced.returncode == 4 and json.loads(synced.stdout)["chunksEmbedded"] == 0
    assert json.loads(botbin("status", "--json", cwd=ws).stdout)["model"] == BUNDLED_MODEL_ID


def test_missing_index_model_degrades_search_to_keywords(tmp_path: Path) -> None:
    """The model folder the index was built with is gone: search falls back to keywords and says why."""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "a.md").write_text("# Webhooks\n\nWebhook retries back off exponentially.\n")
    shutil.copytree(bundled_model_path(), tmp_path / "mini")
    assert botbin("sync", "--model", str(tmp_path / "mini"), cwd=root).returncode == 0
    shutil.rmtree(tmp_path / "mini")
    out = botbin("search", "webhook retries", "--json", "--model", str(tmp_path / "mini"), cwd=root)
    assert out.returncode == 0 and json.loads(out.stdout)["degraded"] is True
    assert b"keyword search only" in out.stderr


def test_model_folder_change_migrates_with_no_hub_cache(ws: Path, tmp_path: Path) -> None:
    """--model DIR takes any sentence-transformers folder; a model change migrates the index (every chunk embedded
    once, beside the live index), and switching back embeds nothing; an empty Hugging Face cache and
    HF_HUB_OFFLINE=0 change nothing (the model never comes from the network)."""
    shutil.copytree(bundled_model_path(), tmp_path / "mini")
    env = {"HF_HOME": str(tmp_path / "empty-hf-home"), "HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0"}
    status = json.loads(botbin("status", "--json", cwd=ws).stdout)
    moved = botbin("sync", "--json", "--model", str(tmp_path / "mini"), cwd=ws, env=env)
    assert moved.returncode == 0, moved.stderr.decode()
    migration = json.loads(moved.stdout)["migration"]
    assert migration["switched"] and migration["chunksEmbedded"] == status["chunks"]
    assert migration["notes"] == status["files"]
    back = json.loads(botbin("sync", "--json", cwd=ws, env=env).stdout)["migration"]
    assert back["switched"] and back["chunksEmbedded"] == 0 and back["notes"] == status["files"]
    assert not list((tmp_path / "empty-hf-home").rglob("*.safetensors"))


def test_bad_search_input_is_a_usage_error_not_a_traceback(ws: Path, tmp_path: Path) -> None:
    for args in (
        ["search", ""],
        ["search", "x", "--alpha", "5"],
        ["search", "x", "--alpha", "nan"],
        ["search", "x", "-k", "0"],
        ["search", "x", "--since", "yesterday"],
        ["search", "x", "--since", "2026-02-30"],
        ["search", "--batch", str(tmp_path / "none.jsonl")],
        ["context", "x", "--budget", "0"],
        ["context", "x", "--budget", "99999999999"],
    ):
        out = botbin(*args, cwd=ws)
        assert out.returncode == 2 and b"Traceback" not in out.stderr, (args, out.stderr)
    budget = botbin("context", "x", "--budget", "0", cwd=ws).stderr.decode()
    assert budget.startswith("botbin context: --budget must be a whole number of tokens from 1 to 10,000,000, not 0")
    batch = tmp_path / "bad.jsonl"
    batch.write_text('{"q": "x", "k": "abc"}\n{"q": "x", "k": 1.5}\n{"q": "x", "alpha": "z"}\nnot json\n')
    out = botbin("search", "--batch", str(batch), cwd=ws)
    assert out.returncode == 0 and out.stdout.decode().splitlines() == ["[]"] * 4
    assert out.stderr.count(b"bad query line") == 4 and b"Traceback" not in out.stderr
    batch.write_text('{"q": "database", "kind": "hard", "expect": "MEMORY.md"}\n')  # a flag's key, and the caller's
    flagged = botbin("search", "--batch", str(batch), cwd=ws).stderr.decode()
    assert f"{batch}:1: 'kind' is not read from a batch line (give it as --kind for every line)" in flagged
    assert "expect" not in flagged
    missing = botbin("search", "x", "--workspace", str(tmp_path / "missing"))
    assert missing.returncode == 3 and b"does not exist" in missing.stderr
    unwritable = botbin(
        "extract", str(ws / "memory" / "aifbin" / "MEMORY.aif-bin"), "-o", str(tmp_path / "no" / "dir" / "x.md")
    )
    assert unwritable.returncode == 2 and b"cannot write" in unwritable.stderr


def test_closed_pipe_is_not_an_error(ws: Path) -> None:
    shell = f"{sys.executable} -m botbin search 'database connections' -k 5 | head -c 10"
    out = subprocess.run(shell, shell=True, cwd=ws, capture_output=True, check=False, timeout=300)
    assert out.returncode == 0 and b"Traceback" not in out.stderr and b"BrokenPipe" not in out.stderr
