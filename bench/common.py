"""Helpers shared by the benchmarks: logging to stderr, timing and memory, a fast fake embedder, a synthetic
vault generator, and running the ``botbin`` CLI."""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

T = TypeVar("T")
DIM = 384
#: Caches of synced copies of shared data, outside the repo (the Obsidian help vault has no license: it is
#: never copied into the repo folder, not even into an ignored one). BOTBIN_BENCH_CACHE moves it.
CACHE_ROOT = Path(os.environ.get("BOTBIN_BENCH_CACHE") or Path.home() / ".cache" / "botbin-bench")
#: Settings of the retrieval-quality benchmarks over a cached store (SciFact, the Obsidian help queries; LoCoMo's
#: layouts take NO_REINFORCEMENT alone, they are not vaults): vault
#: mode, and ``decay_weight`` 0 so that a run never learns from its own queries (with the default every returned
#: hit is reinforced, and a later run would favour what earlier runs returned). On a freshly synced store, where
#: no memo has decayed yet, this ranks exactly as the defaults do.
NO_REINFORCEMENT: dict[str, Any] = {"decay_weight": 0.0}
QUALITY_SETTINGS: dict[str, Any] = {"vault": True, **NO_REINFORCEMENT}


def log(message: str) -> None:
    """Progress line on stderr (stdout is reserved for the JSON result)."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """(seconds, result) of one call of ``fn``."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def timed_cpu(fn: Callable[[], T]) -> tuple[float, float, T]:
    """(wall seconds, CPU seconds of this process, all threads, result) of one call of ``fn``."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages: other work on the machine skews wall-clock timings."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100, linear interpolation) of ``values``."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def r(value: float, digits: int = 4) -> float:
    """Round for the JSON report."""
    return round(float(value), digits)


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    """Resident set size now, in MiB (Linux /proc; falls back to the peak elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            pages = int(handle.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        return peak_rss_mb()


class HashEmbedder:
    """FAKE embedder for benchmarks: a deterministic 384-d unit vector per text, from its BLAKE2b hash.

    It is thousands of times faster than the real model, so a sync timed with it measures botbin's own
    overhead (scan, parse, chunk, tokenize, encode, write). Vectors carry no meaning.
    ``model_id`` may be set to another model's id so that a workspace synced with it counts as up to date
    for that model (only valid for timing no-op syncs, which never embed).
    """

    dim = DIM
    max_tokens = 256

    def __init__(self, model_id: str = "bench/hash-embedder-384") -> None:
        self.model_id = model_id
        self.calls = 0
        self.texts = 0

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        self.texts += len(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
            out[row] = np.random.default_rng(seed).standard_normal(self.dim, dtype=np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


#: The most frequent words of the synthetic vocabulary (rank 1 first).
COMMON_WORDS = ("the", "a", "of", "and", "to", "in", "is", "for", "on", "with", "that", "as", "by", "it", "from")
_SYLLABLES = ("ka", "lo", "mi", "ner", "tus", "va", "qui", "bro", "den", "sel", "ram", "po", "xi", "tor", "lun")


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    """A fixed synthetic vocabulary, most frequent first: COMMON_WORDS, then made-up words."""
    made = sorted({"".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4))) for _ in range(size)})
    return [*COMMON_WORDS, *(w for w in made if w not in COMMON_WORDS)]


def zipf_weights(n: int, s: float = 1.07) -> npt.NDArray[np.float64]:
    """Zipf-like probabilities p(rank) ~ 1 / rank**s over ``n`` ranks (sum 1)."""
    w: npt.NDArray[np.float64] = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    w /= w.sum()
    return w


def generate_vault(root: Path, n_notes: int) -> tuple[int, int]:
    """Deterministic synthetic vault (random.Random(0)): (notes, bytes). Each note: a title, 1-3 sections of
    1-2 paragraphs of 25-90 words from a Zipf-like vocabulary; every 4th note has YAML frontmatter tags."""
    rng = random.Random(0)
    vocab = vocabulary(rng)
    cum = np.cumsum(zipf_weights(len(vocab))).tolist()
    total = 0
    for n in range(n_notes):
        title = " ".join(rng.choices(vocab[len(COMMON_WORDS) :], k=3)).title()
        parts = [f"---\ntags: [{rng.choice(vocab[len(COMMON_WORDS) : 100])}]\n---\n"] if n % 4 == 0 else []
        parts.append(f"# {title}\n")
        for s in range(rng.randint(1, 3)):
            if s:
                parts.append(f"## {' '.join(rng.choices(vocab[len(COMMON_WORDS) :], k=2)).capitalize()}\n")
            for _ in range(rng.randint(1, 2)):
                words = rng.choices(vocab, cum_weights=cum, k=rng.randint(25, 90))
                parts.append(" ".join(words).capitalize() + ".\n")
        path = root / f"folder-{n % 100:02d}" / f"note-{n:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = "\n".join(parts).encode("utf-8")
        path.write_bytes(data)
        total += len(data)
    return n_notes, total


def botbin_exe() -> str:
    exe = Path(sys.executable).with_name("botbin")
    return str(exe) if exe.exists() else (shutil.which("botbin") or "botbin")


def run_cli(args: list[str]) -> float:
    """Seconds for one ``botbin ARGS`` subprocess; raises if it fails."""
    seconds, proc = timed(lambda: subprocess.run([botbin_exe(), *args], capture_output=True, text=True))
    if proc.returncode != 0:
        raise RuntimeError(f"botbin {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return seconds


_PROBE = """import json, sys
from botbin.cli import main
rc = main(sys.argv[1:])
mods = ("torch", "sentence_transformers", "transformers", "tokenizers", "bm25s")
print("PROBE " + json.dumps({"rc": rc, **{m: m in sys.modules for m in mods}}), file=sys.stderr)
"""


def cli_probe(ws: Path) -> dict[str, Any]:
    """Run ``botbin --workspace WS --vault sync --json`` in a child that reports which heavy modules it imported."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, "--workspace", str(ws), "--vault", "sync", "--json"],
        capture_output=True,
        text=True,
    )
    lines = [x for x in proc.stderr.splitlines() if x.startswith("PROBE ")]
    if not lines:
        raise RuntimeError(f"CLI probe failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    probe: dict[str, Any] = json.loads(lines[-1][len("PROBE ") :])
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    probe["report_excerpt"] = {
        k: report.get(k) for k in ("added", "modified", "deleted", "chunksEmbedded") if k in report
    }
    probe["model_loaded"] = bool(probe["torch"] or probe["sentence_transformers"])
    return probe
