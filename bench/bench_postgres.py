"""Team memory on PostgreSQL + pgvector against the embedded index, in the same run: the same answers (Obsidian
help queries, SciFact --tiny subset), query latency at N synthetic chunks (HNSW ``ef_search`` chosen for
recall@10 >= 0.99 against exact search), and a soak of concurrent writers, readers and ``kill -9``s.

Run from the repo root with the venv active:
``python bench/bench_postgres.py [--quick] [--chunks 100000] [--soak-s 300] [--skip quality,latency,soak]``.
The database: ``BOTBIN_TEST_POSTGRES_URL`` (a superuser URL of a scratch server), else a ``pgserver`` started in a
temp folder. ``--quick``: 20,000 chunks, a 20 s soak with 4 kills. Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg

import postgres_quality
from bench_query import Clusters
from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index.ann_live import AnnConfig
from botbin.index.hits import IndexQuery
from botbin.index.postgres.connect import ConnectOptions
from botbin.index.postgres.index import PostgresIndex
from botbin.index.postgres.schema import HNSW_EF_CONSTRUCTION, HNSW_M
from botbin.index.store import MemoryIndex
from botbin.service import MemoryService
from common import log, r

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "postgres"))
from consistency import problems  # noqa: E402

MAINTENANCE_WORK_MEM = "2GB"
"""For the HNSW build: pgvector builds fastest while the graph fits in it (~2 KB a chunk at m 32)."""
EF_CHOICES = (100, 200, 400, 800, 1000)
"""ef_search values tried, lowest first (the backend keeps at least its candidate pool, 100; pgvector's max: 1000)."""


def database(tmp: Path) -> tuple[str, Any]:
    given = os.environ.get("BOTBIN_TEST_POSTGRES_URL")
    if given:
        return given, None
    import pgserver

    server = pgserver.get_server(tmp / "pg", cleanup_mode="stop")
    return str(server.get_uri()), server


def new_db(admin: str, name: str) -> str:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(admin)._replace(path="/" + name))


# -- latency at N chunks ---------------------------------------------------------------------------------
VECTORS = ("spread", "clusters")
"""``spread``: 200 wide clusters (noise 0.6 per coordinate: hardly any low-dimensional structure, HNSW's hard case;
the recorded 100,000-chunk runs). ``clusters``: bench_query.Clusters, clusters of ~50 with cosine ~0.5 inside one,
seed 0: the very vectors and queries of ``bench_ann.py``'s graph at that size (the embedded HNSW's recall figures)."""


def synthetic(
    n_chunks: int, n_queries: int, rng: np.random.Generator, vectors: str = "spread"
) -> tuple[list[AifBinDocument], np.ndarray, np.ndarray]:
    """Notes of 10 chunks (text: a few words of a 2,000-word vocabulary), their vectors, and the queries."""
    if vectors == "clusters":
        gen = Clusters(np.random.default_rng(0), n_chunks, uniform=False)
        vecs, queries = gen.draw(n_chunks), gen.draw(n_queries)
    else:
        centres = rng.standard_normal((200, 384)).astype(np.float32)
        labels = rng.integers(0, 200, n_chunks)
        vecs = centres[labels] + 0.6 * rng.standard_normal((n_chunks, 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    words = [f"w{i}" for i in range(2000)]
    docs = []
    for start in range(0, n_chunks, 10):
        chunks = tuple(
            ChunkRecord(
                j,
                " ".join(words[int(x)] for x in rng.integers(0, 2000, 12)),
                j,
                j + 1,
                (),
                "lore",
                16,
                f"{start + j:032x}",
                vecs[start + j],
            )
            for j in range(min(10, n_chunks - start))
        )
        docs.append(AifBinDocument({"source": f"n{start // 10}.md", "model": {"dim": 384}}, chunks))
    if vectors != "clusters":  # noisy copies of random chunks
        queries = vecs[rng.integers(0, n_chunks, n_queries)] + 0.3 * rng.standard_normal((n_queries, 384)).astype(
            np.float32
        )
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return docs, vecs, queries


def latency_db(vectors: str) -> str:
    """The latency database's name for these synthetic vectors (one per kind, so --reuse never mixes them)."""
    return "botbin_bench_latency" if vectors == "spread" else f"botbin_bench_latency_{vectors}"


def loaded(admin: str, n_chunks: int, name: str) -> str | None:
    """The latency database's URL when an earlier run left it with ``n_chunks`` chunks published."""
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return None
    url = urlunsplit(urlsplit(admin)._replace(path="/" + name))
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('botbin_chunks')").fetchone() in ((None,), None):
            return None
        row = conn.execute("SELECT count(*) FROM botbin_chunks").fetchone()
    return url if row and row[0] == n_chunks else None


def index_params(url: str) -> tuple[int, int] | None:
    """(m, ef_construction) of the HNSW index in ``url``, or None when there is none."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'botbin_chunks_embedding'").fetchone()
    if not row:
        return None
    found = dict(re.findall(r"(m|ef_construction)='?(\d+)", row[0]))
    return int(found.get("m", 16)), int(found.get("ef_construction", 64))


def build_hnsw(url: str, m: int, ef_construction: int, work_mem: str = MAINTENANCE_WORK_MEM) -> float:
    """(Re)build the HNSW index with these parameters and ``maintenance_work_mem``; returns the build's seconds."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX IF EXISTS botbin_chunks_embedding")
        t0 = time.perf_counter()
        conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (work_mem,))
        conn.execute(
            "CREATE INDEX botbin_chunks_embedding ON botbin_chunks USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
        )
        build_s = time.perf_counter() - t0
        conn.execute("VACUUM ANALYZE botbin_chunks")
    return build_s


def build(admin: str, docs: list[AifBinDocument], name: str) -> tuple[str, dict[str, Any]]:
    """A new latency database holding ``docs``, published note by note (the HNSW index is built afterwards)."""
    url = new_db(admin, name)
    MemoryService(Path(tempfile.mkdtemp()), {"backend": "postgres", "postgres_url": url}, env={}).team.init()
    remote = PostgresIndex(ConnectOptions(url, statement_timeout_ms=3_600_000), "bench")
    with psycopg.connect(url, autocommit=True) as conn:  # bulk load: the HNSW index is built once, afterwards
        conn.execute("DROP INDEX botbin_chunks_embedding")
    t0 = time.perf_counter()
    for i, doc in enumerate(docs):
        remote.publish(doc, f"0:{i}")
    publish_s = time.perf_counter() - t0
    log(f"published {sum(len(d.chunks) for d in docs)} chunks in {publish_s:.0f} s")
    remote.close()
    return url, {"publish_s": r(publish_s)}


def sizes(url: str) -> dict[str, float]:
    """MB on disk of the chunks table (with its TOAST), its HNSW index and its GIN index."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_table_size('botbin_chunks'), pg_relation_size('botbin_chunks_embedding'), "
            "pg_relation_size('botbin_chunks_terms')"
        ).fetchone()
    assert row is not None
    return {name: r(v / 2**20) for name, v in zip(("table_mb", "hnsw_mb", "gin_mb"), row, strict=True)}


def latency(
    admin: str,
    n_chunks: int,
    n_queries: int,
    m: int = HNSW_M,
    ef_construction: int = HNSW_EF_CONSTRUCTION,
    reuse: bool = False,
    work_mem: str = MAINTENANCE_WORK_MEM,
    vectors: str = "spread",
    ann_cache: Path | None = None,
) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    docs, vecs, queries = synthetic(n_chunks, n_queries, rng, vectors)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    if ann_cache is not None:
        ann_cache.mkdir(parents=True, exist_ok=True)
    cache = None if ann_cache is None else ann_cache / f"{latency_db(vectors)}-{n_chunks}.usearch"
    local = MemoryIndex(384, AnnConfig(path=cache, model="bench"))
    for doc in docs:
        local.upsert(doc)
    local.prepare_ann()  # past ANN_MIN_ROWS: loads or builds the HNSW graph on a thread while postgres loads
    local.search(IndexQuery("w1", vecs[0], k=10))  # assembles the matrix and BM25
    embedded_build_s = time.perf_counter() - t0
    url = loaded(admin, n_chunks, latency_db(vectors)) if reuse else None
    built: dict[str, Any] = {"reused": True}
    if url is None:
        url, built = build(admin, docs, latency_db(vectors))
    if index_params(url) != (m, ef_construction):
        log(f"building the HNSW index (m {m}, ef_construction {ef_construction})")
        built["hnsw_build_s"] = r(build_hnsw(url, m, ef_construction, work_mem))
        built["maintenance_work_mem"] = work_mem
    local.wait_ann()
    ann_ready_s = time.perf_counter() - t0
    local.save_ann()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    remote = PostgresIndex(ConnectOptions(url, statement_timeout_ms=3_600_000), "bench")
    exact = [set(np.argsort(-(vecs @ q))[:10].tolist()) for q in queries]
    row_of = {(f"n{i // 10}.md", i % 10): i for i in range(n_chunks)}
    out: dict[str, Any] = {
        "chunks": n_chunks,
        "vectors": vectors,
        "queries": n_queries,
        **built,
        "db_sizes": sizes(url),
        "embedded": {
            "load_and_first_search_s": r(embedded_build_s),
            "hnsw": local.ann_active(),
            "hnsw_ready_s": r(ann_ready_s) if local.ann_active() else None,
            "max_rss_growth_mb": r((rss1 - rss0) / 1024),
        },
        "hnsw": {"m": m, "ef_construction": ef_construction},
        "ef_search": {},
    }
    chosen = None
    for ef in EF_CHOICES:
        remote.ef_search = ef
        rec, times = [], []
        for q, truth in zip(queries, exact, strict=True):
            t = time.perf_counter()
            hits = remote.search(IndexQuery("", q, k=10, alpha=1.0, max_hits_per_note=0))
            times.append(time.perf_counter() - t)
            rec.append(len({row_of[(h.path, h.start_line)] for h in hits} & truth) / 10)
        out["ef_search"][ef] = {"recall@10": r(float(np.mean(rec))), "p95_ms": r(float(np.percentile(times, 95)) * 1e3)}
        log(f"ef_search {ef}: {out['ef_search'][ef]}")
        if np.mean(rec) >= 0.99:
            chosen = ef
            break
    out["chosen_ef_search"] = chosen
    rec = []
    for q, truth in zip(queries, exact, strict=True):
        hits = local.search(
            IndexQuery("", q, k=10, alpha=1.0, max_hits_per_note=0, note_weight=0.0, neighbour_weight=0.0)
        )
        rec.append(len({row_of[(h.path, h.start_line)] for h in hits} & truth) / 10)
    out["embedded"]["recall@10"] = r(float(np.mean(rec)))
    log(f"embedded: {out['embedded']}")
    remote.ef_search = chosen or EF_CHOICES[-1]
    for mode, text, alpha in (("vector", "", 1.0), ("hybrid", "w1 w20 w300", 0.7)):
        times: dict[str, list[float]] = {"postgres": [], "embedded": []}
        for q in queries:
            for name, index in (("postgres", remote), ("embedded", local)):
                t = time.perf_counter()
                index.search(IndexQuery(text, q, k=10, alpha=alpha))
                times[name].append(time.perf_counter() - t)
        p95 = {name: float(np.percentile(ts, 95)) for name, ts in times.items()}
        out[f"{mode}_p95_ms"] = {
            **{name: r(v * 1e3) for name, v in p95.items()},
            "postgres_p50": r(float(np.median(times["postgres"])) * 1e3),
            "embedded_p50": r(float(np.median(times["embedded"])) * 1e3),
            "ratio": r(p95["postgres"] / p95["embedded"]),
        }
        log(f"{mode}: {out[f'{mode}_p95_ms']}")
    remote.close()
    return out


# -- soak ------------------------------------------------------------------------------------------------
def soak(admin: str, seconds: float, kills: int) -> dict[str, Any]:
    url = new_db(admin, "botbin_bench_soak")
    MemoryService(Path(tempfile.mkdtemp()), {"backend": "postgres", "postgres_url": url}, env={}).team.init()
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'server'}{os.pathsep}{REPO / 'tests' / 'postgres'}"}
    script = str(REPO / "tests" / "postgres" / "writer.py")

    def start(w: int) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, script, url, "team", str(w), "0"], stdout=subprocess.DEVNULL, env=env)

    writers = {w: start(w) for w in range(4)}
    stop, checks, bad = threading.Event(), [0], []

    def read() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            while not stop.is_set():
                found, _ = problems(conn)
                bad.extend(found[:5])
                checks[0] += 1

    readers = [threading.Thread(target=read) for _ in range(2)]
    for t in readers:
        t.start()
    rng, done, t0 = np.random.default_rng(1), 0, time.monotonic()
    while time.monotonic() - t0 < seconds:
        time.sleep(max(0.1, seconds / (kills + 1) * float(rng.uniform(0.5, 1.0))))
        if done < kills:
            w = int(rng.integers(0, 4))
            writers[w].send_signal(signal.SIGKILL)
            writers[w].wait()
            writers[w] = start(w)
            done += 1
    for p in writers.values():
        p.send_signal(signal.SIGKILL)
        p.wait()
    stop.set()
    for t in readers:
        t.join()
    with psycopg.connect(url, autocommit=True) as conn:
        final, notes = problems(conn)
    return {
        "seconds": r(seconds),
        "kills": done,
        "reader_checks": checks[0],
        "torn_reads": len(bad),
        "final_problems": final[:10],
        "notes": notes,
        "consistent": not final and not bad,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--chunks", type=int, default=None)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hnsw-m", type=int, default=HNSW_M, help="HNSW m of the latency run (default: the schema's)")
    parser.add_argument("--ef-construction", type=int, default=HNSW_EF_CONSTRUCTION, help="HNSW ef_construction")
    parser.add_argument(
        "--maintenance-work-mem",
        default=MAINTENANCE_WORK_MEM,
        help=f"Postgres memory for the HNSW build (default {MAINTENANCE_WORK_MEM}); pgvector builds fast only while "
        "the graph fits (203 MB at 100k chunks: give ~3GB for 1M)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="latency: reuse a published database of --chunks chunks (HNSW rebuilt if m / ef differ)",
    )
    parser.add_argument("--vectors", choices=VECTORS, default="spread", help="latency: the synthetic vectors (VECTORS)")
    parser.add_argument(
        "--ann-cache", type=Path, help="latency: keep the embedded index's HNSW graph here and load it in later runs"
    )
    parser.add_argument("--soak-s", type=float, default=None)
    parser.add_argument("--kills", type=int, default=None)
    parser.add_argument("--obsidian-only", action="store_true", help="quality: leave out SciFact")
    parser.add_argument("--skip", default="", help="comma-separated: quality,latency,soak")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    tmp = Path(tempfile.mkdtemp(prefix="botbin-bench-pg-"))
    admin, server = database(tmp)
    out: dict[str, Any] = {}
    try:
        if "quality" not in skip:
            from botbin.embedding import SentenceTransformerEmbedder, resolve_model

            embedder = SentenceTransformerEmbedder(resolve_model(None))
            url = new_db(admin, "botbin_bench_quality")
            if not args.obsidian_only:
                out["scifact_tiny"] = postgres_quality.scifact(url, embedder)
                log(f"scifact: {out['scifact_tiny']}")
            out["obsidian"] = postgres_quality.obsidian(url, embedder)
        if "latency" not in skip:
            n_chunks = args.chunks or (20_000 if args.quick else 100_000)
            out["latency"] = latency(
                admin,
                n_chunks,
                args.queries,
                args.hnsw_m,
                args.ef_construction,
                args.reuse,
                args.maintenance_work_mem,
                args.vectors,
                args.ann_cache,
            )
        if "soak" not in skip:
            seconds = args.soak_s or (20.0 if args.quick else 300.0)
            out["soak"] = soak(admin, seconds, args.kills if args.kills is not None else (4 if args.quick else 20))
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
