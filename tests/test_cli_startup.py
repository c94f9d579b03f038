"""cli/startup.py: the start-up imports run without the cyclic garbage collector, once per process, and leave it
as they found it."""

from __future__ import annotations

import gc

from botbin.cli.startup import importing


def test_importing_pauses_the_collector_once_and_restores_it() -> None:
    assert gc.isenabled()
    try:
        with importing("test-first"):
            assert not gc.isenabled()
        assert gc.isenabled() and gc.get_freeze_count() > 0
        gc.unfreeze()
        with importing("test-first"):  # done already: nothing paused, nothing frozen
            assert gc.isenabled()
        assert gc.get_freeze_count() == 0
        gc.disable()
        with importing("test-second"):
            assert not gc.isenabled()
        assert not gc.isenabled()  # off before, off after
        gc.enable()
        gc.unfreeze()
        with importing("test-third", process=False):  # botbin.cli.main called by a test or a host
            assert gc.isenabled()
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()
        gc.unfreeze()
