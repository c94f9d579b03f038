"""Long fuzz run: the tests/fuzz strategies at random, per target, for N inputs or S seconds.

Run from the repo root with the venv active: ``python bench/fuzz_run.py [--examples N] [--seconds S]
[--targets a,b] [--long-chars C]``. Each target stops after N inputs or S seconds, whichever comes first.
Prints one JSON object on stdout: per target, the inputs tried, how many broke the promise (with the first
message and input), the slowest single call (CPU and wall-clock seconds) and, for the AIF-BIN reader, the
largest allocation ratio (tracemalloc peak / input bytes, inputs of 1 KiB or more), the largest peak and the
largest share of the allowed allocation used.
Progress goes to stderr; nothing is written to disk.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

import aifbin_cases as ab
import encrypted_cases as ec
import markdown_cases as md

from common import load_average, log

BATCH = 100
#: The allocation ratio is reported for inputs of at least this size (bytes): below it the fixed cost dominates.
RATIO_MIN_BYTES = 1024
#: A call still running after this many seconds is interrupted (SIGALRM) and counted as broken.
GUARD_S = 10.0


def _interrupt(signum: int, frame: object) -> None:
    raise TimeoutError(f"interrupted after {GUARD_S:.0f} s")


@dataclass
class Stats:
    """What one target did."""

    tried: int = 0
    broken: int = 0
    first_broken: str | None = None
    slowest_cpu_s: float = 0.0
    slowest_input_size: int = 0
    """Bytes or characters of the input that took the most CPU time."""
    slowest_input: str = ""
    """Its repr, cut to 160 characters."""
    slowest_wall_s: float = 0.0
    max_alloc_ratio: float = 0.0
    max_alloc_ratio_input_bytes: int = 0
    max_peak_bytes: int = 0
    max_peak_input_bytes: int = 0
    max_budget_used: float = 0.0
    """Largest peak / (ALLOC_RATIO x input bytes + ALLOC_BASE_BYTES): over 1 breaks the promise."""

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in vars(self).items() if v or k in ("tried", "broken")}
        out["slowest_cpu_s"], out["slowest_wall_s"] = round(self.slowest_cpu_s, 4), round(self.slowest_wall_s, 4)
        out["max_alloc_ratio"], out["max_budget_used"] = round(self.max_alloc_ratio, 1), round(self.max_budget_used, 3)
        return out


def _size(value: Any) -> int:
    """Length of the longest text or bytes in ``value`` (a drawn input or a tuple of them)."""
    items = value if isinstance(value, tuple) else (value,)
    return max((len(v) for v in items if isinstance(v, str | bytes)), default=0)


def _record_time(stats: Stats, cpu_s: float, wall_s: float, value: Any) -> None:
    if cpu_s > stats.slowest_cpu_s:
        stats.slowest_cpu_s, stats.slowest_input_size, stats.slowest_input = cpu_s, _size(value), f"{value!r:.160}"
    stats.slowest_wall_s = max(stats.slowest_wall_s, wall_s)


def aifbin_target(stats: Stats, data: bytes) -> None:
    runs = ab.run_decoders(data)
    _record_time(stats, max(r.cpu_s for r in runs), max(r.wall_s for r in runs), data)
    peak = max(r.peak_bytes for r in runs)
    if peak > stats.max_peak_bytes:
        stats.max_peak_bytes, stats.max_peak_input_bytes = peak, len(data)
    if len(data) >= RATIO_MIN_BYTES and peak / len(data) > stats.max_alloc_ratio:
        stats.max_alloc_ratio, stats.max_alloc_ratio_input_bytes = peak / len(data), len(data)
    stats.max_budget_used = max(stats.max_budget_used, peak / (ab.ALLOC_RATIO * len(data) + ab.ALLOC_BASE_BYTES))
    ab.assert_promise(data, runs)


def encrypted_target(stats: Stats, data: bytes) -> None:
    cpu = time.process_time()
    ec.check_refused(data)
    _record_time(stats, time.process_time() - cpu, time.process_time() - cpu, data)


def markdown_target(check: Callable[..., Any]) -> Callable[[Stats, Any], None]:
    def run(stats: Stats, value: Any) -> None:
        md.CALL_TIMES.clear()
        try:
            if isinstance(value, tuple):
                check(*value)
            else:
                check(value)
        finally:
            _record_time(
                stats,
                max((c for c, _ in md.CALL_TIMES), default=0.0),
                max((w for _, w in md.CALL_TIMES), default=0.0),
                value,
            )

    return run


def targets(long_chars: int) -> dict[str, tuple[st.SearchStrategy[Any], Callable[[Stats, Any], None]]]:
    """Target name -> (strategy of inputs, runner that records stats and asserts the promise)."""
    text, lf_text, data = md.any_text(long_chars), md.lf_texts(long_chars), md.note_bytes(long_chars)
    return {
        "aifbin.truncated": (ab.truncated(), aifbin_target),
        "aifbin.bit_flips": (ab.bit_flipped(), aifbin_target),
        "aifbin.inflated_lengths": (ab.inflated_lengths(), aifbin_target),
        "aifbin.random_bytes": (ab.random_bytes(), aifbin_target),
        "aifbin.random_structure": (ab.random_structure(), aifbin_target),
        "aifbin.zlib_bombs": (ab.zlib_bombs(), aifbin_target),
        "aifbin.large_files": (
            st.one_of(
                ab.truncated(ab.LARGE_FILES), ab.bit_flipped(ab.LARGE_FILES), ab.inflated_lengths(ab.LARGE_FILES)
            ),
            aifbin_target,
        ),
        "aifbin.encrypted": (
            st.one_of(ab.truncated(ec.FILES), ab.bit_flipped(ec.FILES), ec.inflated()),
            encrypted_target,
        ),
        "decode_note": (data, markdown_target(md.check_decode_note)),
        "parse_note": (st.tuples(lf_text, md.note_paths), markdown_target(md.check_parse)),
        "lex": (text, markdown_target(md.check_lex)),
        "partition_note": (
            st.tuples(lf_text, md.note_paths),
            markdown_target(lambda t, p: md.check_partition(md.parse_note(t, p), t)),
        ),
        "chunk_note": (
            st.tuples(md.markdown_texts(long_chars), md.params, md.note_paths),
            markdown_target(md.check_chunk_note),
        ),
        "prepare_note": (st.tuples(md.note_paths, data, md.params), markdown_target(md.check_prepare)),
    }


def drive(
    strategy: st.SearchStrategy[Any], runner: Callable[[Stats, Any], None], examples: int, seconds: float
) -> Stats:
    """Feed ``runner`` random inputs in batches of BATCH until ``examples`` inputs or ``seconds`` have passed."""
    stats = Stats()
    end = time.monotonic() + seconds

    @settings(
        max_examples=BATCH,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(value=strategy)
    def batch(value: Any) -> None:
        if stats.tried >= examples or time.monotonic() > end:
            return
        stats.tried += 1
        signal.setitimer(signal.ITIMER_REAL, GUARD_S)
        try:
            runner(stats, value)
        except Exception as exc:  # an AssertionError, or any exception the function should not raise
            stats.broken += 1
            if stats.first_broken is None:
                message = (str(exc).splitlines() or [""])[0][:200]
                stats.first_broken = f"{type(exc).__name__}: {message} | input of {_size(value):,}: {value!r:.160}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    while stats.tried < examples and time.monotonic() < end:
        before = stats.tried
        batch()
        if stats.tried == before:
            break  # the strategy has nothing new to give
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="most inputs per target")
    parser.add_argument("--seconds", type=float, default=20.0, help="most seconds per target")
    parser.add_argument("--targets", default="", help="comma-separated target names (default: all)")
    parser.add_argument("--long-chars", type=int, default=200_000, help="longest repeated line (characters)")
    args = parser.parse_args()
    table = targets(args.long_chars)
    chosen = [t for t in args.targets.split(",") if t] or list(table)
    md.counter()
    signal.signal(signal.SIGALRM, _interrupt)
    results: dict[str, Any] = {}
    for name in chosen:
        strategy, runner = table[name]
        start = time.monotonic()
        stats = drive(strategy, runner, args.examples, args.seconds)
        results[name] = stats.as_dict() | {"wall_s": round(time.monotonic() - start, 1)}
        log(
            f"{name}: {stats.tried} inputs, {stats.broken} broken, slowest {stats.slowest_cpu_s:.3f} CPU s"
            + (f", alloc ratio {stats.max_alloc_ratio:.0f}" if stats.max_alloc_ratio else "")
        )
    print(
        json.dumps(
            {
                "examples": args.examples,
                "seconds": args.seconds,
                "long_chars": args.long_chars,
                "time_limit_s": md.TIME_LIMIT_S,
                "alloc_bound": f"{ab.ALLOC_RATIO} x input + {ab.ALLOC_BASE_BYTES >> 20} MiB",
                "load_average": load_average(),
                "targets": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
