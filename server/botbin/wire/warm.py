"""Payloads of a warm answer: ``botbin search`` and ``botbin context`` sent to a running server of the workspace over
its socket (cli/warm.py, the client, standard library only; cli/answers.py, the server side), one JSON line each way.

The request carries the typed request itself (a SearchRequest or ContextRequest, validated by the server as every
surface validates it), the settings the command's flags override, and the ``BOTBIN_*`` environment: the server
answers only when those give its own settings, so the index is the one the command would read in-process."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from botbin.wire.model import WireModel
from botbin.wire.requests import ContextRequest, SearchRequest

WARM_PROTOCOL: Final = 2
"""Version of the warm request: a server of another version declines (and the command answers in-process)."""
#: The commands a warm server answers.
WarmCommand = Literal["search", "context"]


class WarmSettings(WireModel):
    """The settings a command's flags override (cli/flags.py SETTING_FLAGS); an absent one is not overridden."""

    include: list[str] | None = None
    """``--include`` globs."""
    exclude: list[str] | None = None
    """``--exclude`` globs."""
    vault: bool | None = None
    """``--vault``."""
    output_dir: str | None = None
    """``--output-dir``."""
    model: str | None = None
    """``--model``."""
    search_namespaces: str | None = None
    """``--namespace A,B`` (backend ``postgres``)."""
    debounce_ms: int | None = None
    """``--debounce-ms``."""


class WarmRequest(WireModel):
    """One warm command."""

    v: int
    """WARM_PROTOCOL."""
    command: WarmCommand
    """Which command."""
    workspace: str
    """The workspace folder, absolute (the server declines another one)."""
    settings: WarmSettings = Field(default_factory=WarmSettings)
    """The settings its flags override."""
    env: dict[str, str] = Field(default_factory=dict)
    """The ``BOTBIN_*`` environment of the command (the passphrase left out)."""
    as_json: bool = False
    """``--json``: print JSON."""
    search: SearchRequest | None = None
    """The search (``command`` "search")."""
    context: ContextRequest | None = None
    """The context (``command`` "context")."""


class WarmAnswer(WireModel):
    """A warm server's answer: what the command prints and its exit status, or why it declined."""

    v: int
    """WARM_PROTOCOL."""
    served: bool
    """False when the server declined: the command answers in its own process."""
    reason: str | None = None
    """Why it declined (``another workspace``, ``other settings``, ``bad usage``, ``busy``, ...)."""
    code: int | None = None
    """The exit status (when served)."""
    stdout: str = ""
    """What the command prints on stdout (when served)."""
    stderr: str = ""
    """What the command prints on stderr (when served)."""
    pid: int | None = None
    """The server's process id (when served)."""


WARM_MODELS: tuple[type[WireModel], ...] = (WarmRequest, WarmAnswer)
"""What the standard-library client mirrors as TypedDicts (cli/host_types.py)."""
