"""botbin: persistent, local-first semantic memory for markdown notes."""

from __future__ import annotations

__version__ = "0.1.0"
TOOL_NAME = "botbin"
