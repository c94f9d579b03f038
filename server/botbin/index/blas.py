"""One BLAS thread for the long-lived processes that alternate the model and searches (language and MCP servers)."""

from __future__ import annotations

import logging
import os
from typing import Any

log = logging.getLogger(__name__)


def single_threaded_blas() -> Any:
    """Limit numpy's BLAS (OpenBLAS) to one thread in this process; returns threadpoolctl's limiter (its
    ``restore_original_limits()`` undoes it), or None when threadpoolctl is missing or OPENBLAS_NUM_THREADS is set.

    Each search is one matrix-vector product, and OpenBLAS's threads busy-wait for each other after it:
    - on 2 shared cores a 1,387 x 384 product cost ~8 ms of CPU with its 2 threads against 0.07 ms with one,
      and a burst of language-server hovers and searches ran 2-5x slower (bench/bench_lsp_load.py);
    - their spinning also takes the cores from the model's own threads (torch, OpenMP, which this does not
      limit): embedding a query right after a search took p50 / p95 39 / 116 ms with 2 BLAS threads against
      20 / 23 ms with one, and the search itself 6.6 / 13 against 5.1 / 6.6 ms (the 60 Obsidian help queries,
      2 cores, 2026-12-01).
    Only libraries already loaded are limited: call it after numpy is imported.
    """
    if "OPENBLAS_NUM_THREADS" in os.environ:
        return None
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
    except ImportError:  # a dependency of scikit-learn, itself one of sentence-transformers
        log.info("threadpoolctl is not installed; BLAS keeps its default threads")
        return None
    return threadpool_limits(limits=1, user_api="blas")
