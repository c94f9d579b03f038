"""LSP feature handlers, one module per area; each module's ``register`` adds its handlers to the server."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from botbin.lsp.server import BotbinLanguageServer


def register_all(server: BotbinLanguageServer) -> None:
    from botbin.lsp.features import agent, commands, diagnostics, hover, search, session, studio, textsync

    for module in (session, textsync, hover, search, commands, diagnostics, agent, studio):
        module.register(server)
