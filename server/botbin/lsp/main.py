"""``botbin lsp``: build the language server with every feature registered, and serve it on stdio."""

from __future__ import annotations

import logging
import os
import sys

from botbin import __version__
from botbin.facade import single_threaded_blas
from botbin.lsp.features import register_all
from botbin.lsp.server import BotbinLanguageServer

log = logging.getLogger(__name__)


def create_server() -> BotbinLanguageServer:
    """A server with every feature registered."""
    server = BotbinLanguageServer()
    register_all(server)
    return server


def main(tcp_port: int | None = None, host: str = "127.0.0.1") -> int:
    """Serve LSP on stdio (or TCP for debugging). stdout carries only the protocol: print() goes to stderr."""
    logging.getLogger("pygls").setLevel(logging.WARNING)  # pygls logs every message body at INFO
    # stderr is the editor's log view (VS Code's output channel): botbin's own INFO lines belong there
    logging.getLogger("botbin").setLevel(logging.INFO)
    single_threaded_blas()
    server = create_server()
    if tcp_port is not None:
        server.start_tcp(host, tcp_port)
        return 0
    log.info("botbin %s language server on stdio (pid %d)", __version__, os.getpid())
    rpc_out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never corrupt the JSON-RPC stream
    server.start_io(sys.stdin.buffer, rpc_out)
    return server.exit_code
