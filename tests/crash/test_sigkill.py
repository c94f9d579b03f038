"""SIGKILL harness: the real `botbin sync` CLI killed at 50 random moments on a 200-note vault.

Promises checked (issue 9, "Crash safety"):
- after every kill: every ``.aif-bin`` present passes the independent checker against the note version it was
  made from; the state file parses as JSON or is absent, never names a temp file, and every output it would
  trust holds the version it records; no output is orphaned (verify.py); no user file was modified (MD5 of
  every file outside the output folder, before and after each run: the harness edits only between runs);
- a killed sync never leaves the workspace locked: every run that ends by itself exits 0, with no failed note
  and no temp file left behind;
- after the last kill, one uninterrupted sync converges to an uninterrupted sync of the same notes into a
  fresh copy: same output files, chunk texts and line ranges, embeddings allclose, state entries equal
  except times; and both pass `python aifbin_check.py --root WS OUTDIR`.

Kill moments: the first run of each kind of change (--full, bulk edits, renames and deletes, text edits) and
the cold sync run uninterrupted and are measured. Later, a quarter of the kills fall uniformly over the
measured span of the run; the rest fall at a random delay within the measured write phase after the run's
first output is replaced (the harness polls that file), since a kill during process start or model load
tests little. The cold sync itself is killed once, just after its first output is written. Between kills
the harness edits, adds, deletes or renames notes (vault.py), so every run has work to do.
Runtime: about 3-4 minutes on 2 shared CPU cores (two cold syncs of ~1,400 chunks dominate).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from botbin.sync.documents import output_rel
from botbin.sync.state import STATE_FILE
from conftest import CHECKER, needs_shared

from .vault import ENV, OUTPUT_DIR, Mutator, build_vault, copy_user_files, note_paths, sync_cmd, user_files
from .verify import StoreVerifier, assert_same_store, outputs, temp_files

SEED = 20260509
NOTES = 200
KILLS = 50
UNIFORM_SHARE = 0.25
"""Share of kills drawn uniformly over the measured span of a run (the rest are anchored on its writes)."""


@dataclass(frozen=True)
class Profile:
    """When an uninterrupted run of one kind wrote, in seconds since its process started."""

    end_s: float
    write_start_s: float
    write_span_s: float
    """From the first output written to the last file written (the state file included)."""


@dataclass(frozen=True)
class Plan:
    """Kill ``at_s`` seconds after the start, or ``delay_s`` after output ``anchor`` is replaced."""

    at_s: float = 0.0
    anchor: Path | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class Outcome:
    killed: bool
    rc: int | None
    stdout: str
    stderr: str
    profile: Profile | None
    """For a run that ended by itself."""


def _sig(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _written_files(ws: Path) -> dict[Path, tuple[int, int, int] | None]:
    return {p: _sig(p) for p in [*outputs(ws), ws / OUTPUT_DIR / STATE_FILE]}


def launch(ws: Path, args: list[str], plan: Plan | None) -> Outcome:
    """Run `botbin sync` on ``ws``; SIGKILL it as ``plan`` says (None: let it finish and profile it)."""
    before = _written_files(ws)
    anchor_before = _sig(plan.anchor) if plan is not None and plan.anchor is not None else None
    wall0, t0 = time.time_ns(), time.monotonic()
    proc = subprocess.Popen(sync_cmd(ws, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    killed = False
    if plan is not None:
        if plan.anchor is not None:
            while proc.poll() is None and _sig(plan.anchor) == anchor_before and time.monotonic() - t0 < 300:
                time.sleep(0.001)
            time.sleep(plan.delay_s)
        else:
            time.sleep(max(0.0, t0 + plan.at_s - time.monotonic()))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed = True
    out, err = proc.communicate(timeout=300)
    elapsed_s = time.monotonic() - t0
    profile = None
    if not killed:
        moments = sorted((s[1] - wall0) / 1e9 for p, s in _written_files(ws).items() if s and s != before.get(p))
        profile = (
            Profile(elapsed_s, moments[0], moments[-1] - moments[0]) if moments else Profile(elapsed_s, elapsed_s, 0.0)
        )
    return Outcome(killed, proc.returncode, out, err, profile)


def assert_completed(outcome: Outcome, ws: Path) -> None:
    """A sync that ran to the end succeeded for every note and left no temp file."""
    assert outcome.rc == 0, f"botbin sync exited {outcome.rc}: {outcome.stderr[-2000:]}"
    report = json.loads(outcome.stdout)
    assert report["failed"] == [], report["failed"]
    assert temp_files(ws) == []


def _bulk(m: Mutator) -> list[str]:
    m.blank_edit(m.rng.randint(15, 60))
    return []


def _full(m: Mutator) -> list[str]:
    m.blank_edit(m.rng.randint(0, 2))
    return ["--full"]


def _tree(m: Mutator) -> list[str]:
    m.rename(m.rng.randint(1, 3))
    m.delete(m.rng.randint(0, 2))
    m.blank_edit(m.rng.randint(1, 3))
    return []


def _text(m: Mutator) -> list[str]:
    m.text_edit(m.rng.randint(1, 3))
    m.add(m.rng.randint(0, 1))
    m.delete(m.rng.randint(0, 1))
    m.rename(m.rng.randint(0, 1), keep_name=False)
    return []


RECIPES: dict[str, tuple[float, Callable[[Mutator], list[str]]]] = {
    "bulk": (0.4, _bulk),  # 15-60 notes rewritten, nothing embedded: the longest write bursts per CPU second
    "tree": (0.35, _tree),  # notes moved to new folders (outputs moved, embeddings reused) and deletes
    "full": (0.15, _full),  # every output rewritten in groups of 512 chunks
    "text": (0.1, _text),  # new text: the model loads (seconds of CPU) and embeds before the writes
}


def _plan(rng: random.Random, profile: Profile, ws: Path, first_written: str | None) -> Plan:
    if first_written is None or rng.random() < UNIFORM_SHARE:
        return Plan(at_s=rng.uniform(0.05, profile.end_s))
    return Plan(anchor=ws / output_rel(first_written, OUTPUT_DIR), delay_s=rng.uniform(0, profile.write_span_s + 0.01))


def _classify(ws: Path, before: dict[Path, tuple[int, int, int] | None]) -> str:
    after = _written_files(ws)
    state = ws / OUTPUT_DIR / STATE_FILE
    if after[state] != before.get(state):
        return "after a state save"
    if temp_files(ws) or any(s != before.get(p) for p, s in after.items()) or set(before) - set(after):
        return "mid-write"
    return "before any write"


@pytest.mark.crash
@needs_shared
def test_sigkill_at_random_moments_never_corrupts_and_converges(tmp_path: Path) -> None:
    started = time.monotonic()
    rng = random.Random(SEED)
    ws = build_vault(tmp_path / "ws", NOTES, SEED)
    assert len(note_paths(ws)) == NOTES
    mutator = Mutator(ws, rng)
    verifier = StoreVerifier(ws, mutator.history, tmp_path / "shadow")
    log = (tmp_path / "harness.log").open("a", encoding="utf-8")
    profiles: dict[str, Profile] = {}
    stats: Counter[str] = Counter()
    kills = runs = 0
    args: list[str]
    while kills < KILLS:
        runs += 1
        assert runs < KILLS * 3, f"too many runs ended before their kill moment: {dict(stats)}"
        if runs == 1:  # the cold sync, once right after its first output is written (the state file is next)
            kind, args, plan = (
                "cold",
                [],
                Plan(anchor=ws / output_rel(note_paths(ws)[0], OUTPUT_DIR), delay_s=rng.uniform(0, 0.3)),
            )
            mutator.take_written()
        elif "cold" not in profiles:  # the rest of the cold sync, measured
            kind, args, plan = "cold", [], None
        else:
            kind = rng.choices(list(RECIPES), [w for w, _ in RECIPES.values()])[0]
            args = RECIPES[kind][1](mutator)
            written = [rel for rel in mutator.take_written() if (ws / rel).is_file()]
            first = note_paths(ws)[0] if "--full" in args else (written[0] if written else None)
            plan = _plan(rng, profiles[kind], ws, first) if kind in profiles else None
        before_users, before_out = user_files(ws), _written_files(ws)
        outcome = launch(ws, args, plan)
        assert user_files(ws) == before_users, f"run {runs} ({kind}) modified a user file"
        if outcome.killed:
            kills += 1
            what = _classify(ws, before_out)
            stats[f"killed {what}"] += 1
            stats[f"kills in {kind} runs"] += 1
        else:
            assert_completed(outcome, ws)
            stats["runs that ended by themselves"] += 1
            what = "ended by itself"
            if outcome.profile is not None:
                profiles[kind] = outcome.profile
        how = "-" if plan is None else f"+{plan.delay_s:.3f}s after a write" if plan.anchor else f"at {plan.at_s:.2f}s"
        log.write(f"{time.monotonic() - started:7.1f}s run {runs} {kind} {args} plan {how} kills={kills}: {what}\n")
        log.flush()
        problems = verifier.problems()
        assert not problems, f"after run {runs} ({kind}, killed={outcome.killed}):\n" + "\n".join(problems[:20])

    final = launch(ws, [], None)
    assert_completed(final, ws)
    assert not verifier.problems()
    reference = copy_user_files(ws, tmp_path / "reference")
    assert user_files(reference) == user_files(ws)
    fresh = launch(reference, [], None)
    assert_completed(fresh, reference)
    assert_same_store(ws, reference)
    for root in (ws, reference):
        checked = subprocess.run(
            [sys.executable, str(CHECKER), "--root", str(root), str(root / OUTPUT_DIR)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert checked.returncode == 0, checked.stdout[-3000:]
    # A harness whose kills all missed the writes would prove little.
    assert stats["killed mid-write"] >= 10, dict(stats)
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(stats.items()))
    shapes = {k: (round(p.end_s, 2), round(p.write_start_s, 2), round(p.write_span_s, 3)) for k, p in profiles.items()}
    print(
        f"\nsigkill harness: {kills} kills in {runs} runs, {time.monotonic() - started:.0f} s; {summary}; "
        f"deletes/renames held back (output not yet owned): {mutator.held_back}; "
        f"profiles (end, first write, write span in s): {shapes}"
    )
