"""Puts bench/ on the import path of an experiment (its shared helpers, common.py, and the benchmarks it reuses):
each experiment imports this module before them."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
