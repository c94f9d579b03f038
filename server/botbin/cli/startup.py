"""Start-up imports without the cyclic garbage collector: importing botbin's service, pygls and the wire models
makes hundreds of thousands of objects (classes, functions, attrs and pydantic schemas) that live as long as the
process, and each collection during the imports walked all of them made so far (0.6-1.6 s of a 2-4 s import of
``botbin lsp`` on 2 cores)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_done: set[str] = set()
"""The imports already made this way in this process."""


@contextmanager
def importing(what: str, process: bool = True) -> Iterator[None]:
    """``gc`` disabled for the block, then what exists frozen (``gc.freeze``: later collections skip it) and
    ``gc`` enabled again unless it was off before. Only for the process's own start (``process``: not when a test
    or another program calls ``botbin.cli.main``, whose objects it would freeze) and once per ``what``."""
    if what in _done or not process:
        yield
        return
    _done.add(what)
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_on:
            gc.enable()
