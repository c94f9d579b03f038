"""The speed, load and conversation sections of docs/benchmarks.md: chosen figures of each benchmark's JSON,
as tables a reader can check against ``bench/out/results/NAME.json`` (the key of each figure is in the JSON
under the same name). report_render.py puts them together; each section tolerates missing keys ("–")."""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]


def get(data: Any, path: str) -> Any:
    """``data["a"]["b"][0]["c"]`` for ``path`` ``"a.b.0.c"``; None where any step is missing."""
    for key in path.split("."):
        if isinstance(data, list) and key.isdigit() and int(key) < len(data):
            data = data[int(key)]
        elif isinstance(data, dict) and key in data:
            data = data[key]
        else:
            return None
    return data


def ratio(a: Any, b: Any) -> float | None:
    """``a / b`` when both are numbers and b is not 0."""
    if isinstance(a, int | float) and isinstance(b, int | float) and b:
        return float(a) / float(b)
    return None


def load(data: Json, *paths: str) -> str:
    """The first load average found under ``paths``, as "1.2 / 1.5 / 1.4" (1, 5, 15 min)."""
    for path in paths:
        value = get(data, path)
        if isinstance(value, dict):  # {"start": [...], "end": [...]}: the start of the run
            value = next(iter(value.values()), None)
        if isinstance(value, list) and value and all(isinstance(v, int | float) for v in value):
            return " / ".join(f"{v:.1f}" for v in value)
    return "?"


Rows = list[list[Any]]


def embed(d: Json) -> tuple[list[str], Rows, list[str]]:
    plain_s = get(d, "variants.plain.seconds")
    rows = [
        [
            name,
            get(v, "chunks_per_s"),
            ratio(plain_s, get(v, "seconds")),
            get(v, "quality_hybrid.hit_at_10"),
            get(v, "quality_hybrid.mrr_at_10"),
            get(v, "quality_drop_vs_plain"),
            get(v, "min_cosine_vs_plain"),
            "kept" if name == "botbin" else get(v, "adoptable"),
        ]
        for name, v in (get(d, "variants") or {}).items()
    ]
    notes = [
        f"{d.get('chunks')} chunks of the Obsidian help vault, batch {d.get('batch_size')}, torch "
        f"{d.get('torch')} on {d.get('torch_threads')} threads; load {load(d, 'load_average_1_5_15')}. "
        f"Adoption rule: {d.get('adoption_rule')}; the drop is the larger of hit@10's and MRR@10's on the 60 "
        "Obsidian help queries (hybrid search over the 10 best chunks, target note only, so below the Obsidian "
        "section's per-note figures), against plain encode's vectors.",
        f"ONNX: {d['onnx_skipped']}" if d.get("onnx_skipped") else "",
    ]
    return (
        [
            "variant",
            "chunks/s",
            "speed vs plain encode",
            "hit@10",
            "MRR@10",
            "quality drop",
            "min cosine vs plain",
            "adoptable",
        ],
        rows,
        notes,
    )


def sync(d: Json) -> tuple[list[str], Rows, list[str]]:
    o, v = "obsidian_help.", "vault_10k."
    rows = [
        ["cold sync, 173 notes, real model (s)", get(d, o + "cold_sync.seconds"), ""],
        [
            "  chunks/s; time outside the model (s)",
            get(d, o + "cold_sync.chunks_per_s"),
            get(d, o + "cold_sync.non_model_seconds"),
        ],
        ["plain SentenceTransformer.encode of the same texts (s)", get(d, o + "baseline_encode.seconds"), ""],
        [
            "ratio encode / cold sync (wall; CPU time)",
            get(d, o + "ratio_baseline_over_cold_sync"),
            get(d, o + "ratio_cpu_time"),
        ],
        ["no-op re-sync, in process (s)", get(d, o + "noop_resync_inprocess.median_s"), "target < 0.3"],
        [
            "no-op re-sync, CLI (s; Python start-up floor)",
            get(d, o + "noop_resync_cli.median_s"),
            get(d, o + "noop_resync_cli.cli_startup_floor_s"),
        ],
        ["one-paragraph edit re-sync, warm model (s)", get(d, o + "edit_resync_warm_model.median_s"), ""],
        ["AIF-BIN bytes per chunk (each file keeps its note's source)", get(d, o + "aifbin_bytes_per_chunk"), ""],
        ["peak RSS of the sync (MiB)", get(d, o + "peak_rss_mb_after_botbin_runs"), ""],
        [
            "10k notes: cold sync, fake embedder: botbin's own work (s)",
            get(d, v + "cold_sync_fake_embedder.seconds"),
            f"{_num(get(d, v + 'chunks'))} chunks",
        ],
        ["10k notes: real-model cold sync, estimated (s)", get(d, v + "real_model_sync_estimate_s"), ""],
        ["10k notes: no-op re-sync, in process (s)", get(d, v + "noop_resync_inprocess.median_s"), "target < 1"],
        ["10k notes: no-op re-sync, CLI (s)", get(d, v + "noop_resync_cli.median_s"), "target < 1"],
        [
            "10k notes: no-op by a fresh service loads the model",
            get(d, v + "noop_fresh_service_default_model.embedder_created"),
            "target: no",
        ],
    ]
    met = get(d, "targets_met") or {}
    return (
        ["figure", "value", "also"],
        rows,
        ["Targets met: " + ", ".join(f"`{k}` {'yes' if val else 'no'}" for k, val in met.items()) + "."] if met else [],
    )


def _num(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "–"


def lsp(d: Json) -> tuple[list[str], Rows, list[str]]:
    labels = {
        "hover": "hover (saved note: stored embedding)",
        "hover_repeat": "hover, same paragraph again",
        "hover_unsaved_buffer": "hover on an unsaved edit (embeds it)",
        "search": "botbin/search",
        "workspace_symbol": "workspace/symbol",
        "save_to_searchable": "save, then searchable",
    }
    rows = [
        [label, get(d, f"lsp.{k}.n"), get(d, f"lsp.{k}.p50_ms"), get(d, f"lsp.{k}.p95_ms"), get(d, f"lsp.{k}.p99_ms")]
        for k, label in labels.items()
    ]
    return ["request (Obsidian help vault, real model)", "n", "p50 ms", "p95 ms", "p99 ms"], rows, []


def lsp_load(d: Json) -> tuple[list[str], Rows, list[str]]:
    rows = [
        [
            b.replace("_", " "),
            get(d, f"lsp_load.{b}.requests"),
            get(d, f"lsp_load.{b}.seconds"),
            get(d, f"lsp_load.{b}.requests_per_s"),
            get(d, f"lsp_load.{b}.failed"),
            get(d, f"lsp_load.rss_after_{b}.rss_mb"),
        ]
        for b in ("burst_1", "burst_2")
    ]
    notes = [
        f"{get(d, 'lsp_load.window')} requests in flight over {get(d, 'lsp_load.open_documents')} open "
        f"documents; RSS before {get(d, 'lsp_load.rss_before.rss_mb')} MiB, growth during the second burst "
        f"{get(d, 'lsp_load.growth_mb_burst_2')} MiB; {get(d, 'lsp_load.sequential_hovers_after.requests')} "
        f"hovers one after another right after: {get(d, 'lsp_load.sequential_hovers_after.seconds')} s in all."
    ]
    return ["burst", "requests", "seconds", "requests/s", "failed", "RSS after (MiB)"], rows, notes


def encryption(d: Json) -> tuple[list[str], Rows, list[str]]:
    rows = [
        [label, get(d, f"plain.{k}"), get(d, f"encrypted.{k}"), ratio(get(d, f"encrypted.{k}"), get(d, f"plain.{k}"))]
        for k, label in (
            ("cold_sync_s", "cold sync (s)"),
            ("index_load_s", "index load (s)"),
            ("bytes_per_chunk", "bytes per chunk"),
        )
    ]
    notes = [
        f"{get(d, 'vault.notes')} notes, {get(d, 'plain.chunks')} chunks, {d.get('embedder')}. Argon2id key "
        f"derivation {get(d, 'kdf_default_ms')} ms; converting the store in place: encrypt "
        f"{get(d, 'convert.encrypt_s')} s, decrypt {get(d, 'convert.decrypt_s')} s, "
        f"{get(d, 'convert.re_embedded_chunks')} chunks re-embedded."
    ]
    return ["figure", "plain", "encrypted", "ratio"], rows, notes


def peer(d: Json) -> tuple[list[str], Rows, list[str]]:
    pairs = [
        ("cold index (s)", "cold_index.seconds"),
        ("chunks", "chunks"),
        ("no-op re-index (s)", "noop_reindex.median_s"),
        ("peak RSS while indexing (MiB)", "cold_index.peak_tree_rss_mb"),
        ("index on disk (bytes)", "index_bytes_on_disk"),
        ("query p50 (ms)", "query.p50_ms"),
        ("query p95 (ms)", "query.p95_ms"),
        ("peak RSS of the query process (MiB)", "query.process_peak_rss_mb"),
        ("hit@5, target note", "quality.target.hit_at_5"),
        ("hit@10, target note", "quality.target.hit_at_10"),
        ("MRR@10, target note", "quality.target.mrr_at_10"),
        ("MRR@10, target or an also-right note", "quality.target_or_also.mrr_at_10"),
    ]
    rows = [
        [label, get(d, f"botbin.{k}"), get(d, f"memsearch.{k}"), ratio(get(d, f"botbin.{k}"), get(d, f"memsearch.{k}"))]
        for label, k in pairs
    ]
    known = d.get("known_memsearch_figures") or {}
    notes = [
        f"memsearch {get(d, 'memsearch_install.versions.memsearch')} (`{get(d, 'memsearch.command')}`) "
        f"against `{get(d, 'botbin.command')}`, both on the bundled all-MiniLM-L6-v2; load "
        f"{load(d, 'load_average_1_5_15')}. Queries run in one long-lived process each, the 60 Obsidian help "
        f"queries. The issue's memsearch figures for this vault, from another machine: {known.get('index_s')} s "
        f"to index {known.get('chunks')} chunks, {known.get('noop_reindex_s')} s no-op, "
        f"{known.get('peak_rss_mb')} MB peak RSS, ~{known.get('query_ms')} ms a query."
    ]
    return ["figure", "botbin", "memsearch", "botbin / memsearch"], rows, notes


def planted(d: Json) -> tuple[list[str], Rows, list[str]]:
    rows = [
        [
            get(s, "chatter_turns"),
            get(s, "recall_at_5"),
            get(s, "write_ms_p50"),
            get(s, "write_ms_p95"),
            get(s, "read_ms_p50"),
            get(s, "admission_rate"),
            get(s, "soul_bytes"),
            get(s, "store_bytes"),
        ]
        for s in d.get("sizes") or []
    ]
    return (
        [
            "chatter turns",
            "recall@5",
            "write p50 ms",
            "write p95 ms",
            "read p50 ms",
            "admitted",
            "soul file bytes",
            "store bytes",
        ],
        rows,
        [f"Target recall@5 {d.get('target_recall_at_5')}; load {load(d, 'load_average')}."],
    )


def locomo_ingest(d: Json) -> tuple[list[str], Rows, list[str]]:
    rows = [
        [
            get(c, "method"),
            get(c, "recall@5"),
            get(c, "recall@10"),
            get(c, "turn_budget@5"),
            get(c, "turn_budget@10"),
            get(c, "turns_in_top@10"),
        ]
        for c in d.get("comparison") or []
    ]
    i = d.get("ingest") or {}
    notes = [
        f"{d.get('questions')} questions over {i.get('turns_ingested')} turns through `botbin ingest`: "
        f"{i.get('admitted_fraction')} of the turns admitted, {i.get('evidence_with_a_bullet')} of the evidence "
        f"turns kept as a bullet, {i.get('soul_bytes')} bytes of soul files, {i.get('ingest_ms_per_turn')} ms a "
        "turn. `ingest_bullet`: the evidence turn's own bullet is in the hit; `ingest_block`: its block is; "
        "`turn_budget@k`: hits cut to k turns' worth."
    ]
    return ["method", "recall@5", "recall@10", "turn budget @5", "turn budget @10", "turns in top 10"], rows, notes


def lifecycle(d: Json) -> tuple[list[str], Rows, list[str]]:
    rows = [
        [label, get(d, f"{k}.p50_ms"), get(d, f"{k}.p95_ms")]
        for k, label in (
            ("search_plain", "plain (no decay, no reinforcement)"),
            ("search_ranked", "decay ranking"),
            ("search_ranked_reinforced", "decay ranking + reinforcement (default)"),
        )
    ]
    notes = [
        f"{d.get('notes')} synthetic notes, {d.get('chunks')} chunks, fake embedder; load "
        f"{load(d, 'load_average')}. Seeding the memos {d.get('seed_memos_s')} s, a no-op check "
        f"{d.get('ensure_noop_ms')} ms; prune --dry-run a year later {d.get('prune_dry_run_s')} s "
        f"({d.get('prune_candidates')} candidates); consolidate --dry-run {d.get('consolidate_dry_run_s')} s "
        f"({d.get('roots_found')} roots); sidecar {d.get('sidecar_bytes_per_memo')} bytes per memo."
    ]
    return ["search (k 10)", "p50 ms", "p95 ms"], rows, notes


def _status(data: Json | None, value: float | None, ok: bool) -> str:
    if data is None:
        return "not run"
    if "failed" in data or "skipped" in data:
        return "failed" if "failed" in data else "skipped"
    if value is None:
        return "no figure"
    return "met" if ok else "not met"


def targets(results: dict[str, Json | None]) -> Rows:
    """One row per target the benchmarks check: the target, the measured value, and met / not met / not run /
    failed / skipped / no figure (the JSON lacks that key)."""
    checks: list[tuple[str, str, str, str, float]] = [
        # (target, benchmark, key path, comparison, bound)
        ("SciFact test: default hybrid nDCG@10 ≥ 0.74", "scifact", "results.hybrid.ndcg@10", ">=", 0.74),
        ("LoCoMo best layout: recall@5 ≥ 0.60", "locomo", "layouts.best.recall.all.overall.@5", ">=", 0.60),
        ("LoCoMo best layout: recall@10 ≥ 0.70", "locomo", "layouts.best.recall.all.overall.@10", ">=", 0.70),
        (
            "cold sync: plain encode s / botbin s ≥ 1.0",
            "sync",
            "obsidian_help.ratio_baseline_over_cold_sync",
            ">=",
            1.0,
        ),
        (
            "no-op re-sync, 173 notes, in process < 0.3 s",
            "sync",
            "obsidian_help.noop_resync_inprocess.median_s",
            "<",
            0.3,
        ),
        ("no-op re-sync, 173 notes, CLI < 0.3 s", "sync", "obsidian_help.noop_resync_cli.median_s", "<", 0.3),
        ("one-paragraph edit re-sync < 0.5 s", "sync", "obsidian_help.edit_resync_warm_model.median_s", "<", 0.5),
        ("no-op re-sync, 10,000 notes, CLI < 1 s", "sync", "vault_10k.noop_resync_cli.median_s", "<", 1.0),
        ("query p95 < 10 ms at 100,000 chunks (1 BLAS thread)", "query", "100000_chunks.hybrid.p95_ms", "<", 10.0),
        ("hover p95 < 50 ms (language server)", "lsp", "lsp.hover.p95_ms", "<", 50.0),
        ("save to searchable p95 < 1,000 ms (language server)", "lsp", "lsp.save_to_searchable.p95_ms", "<", 1000.0),
        ("planted facts: recall@5 = 1.0 after 10,000 turns", "planted", "sizes.1.recall_at_5", ">=", 1.0),
        (
            "Obsidian help queries: MRR@10 botbin / memsearch > 1",
            "peer",
            "ratios_botbin_over_memsearch.mrr_at_10_target",
            ">",
            1.0,
        ),
    ]
    rows: Rows = []
    for label, name, path, op, bound in checks:
        data = results.get(name)
        raw = get(data, path)
        value = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
        ok = value is not None and (value >= bound if op == ">=" else value < bound if op == "<" else value > bound)
        rows.append([label, raw if value is not None else None, _status(data, value, ok)])
    return rows
