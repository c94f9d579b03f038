"""``python -m botbin``: the same as the ``botbin`` command."""

from __future__ import annotations

import sys

from botbin.cli import main

sys.exit(main())
