"""``botbin studio``: Recall Studio, the local web app over one workspace (botbin/studio/)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from botbin.cli.common import EXIT_OK, add, service


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``botbin studio`` to the ``botbin`` parser."""
    p = add(
        sub,
        common,
        "studio",
        "Recall Studio: see what the memory holds, why a hit ranked and what an agent gets (a local web page)",
        cmd_studio,
    )
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the URL only; do not open a browser")
    p.add_argument("--read-only", action="store_true", help="no action buttons (sync, prune, restore, consolidate)")
    p.add_argument(
        "--editor",
        choices=["auto", "vscode", "obsidian", "none"],
        default="auto",
        help="which editor the notes' links open (default auto: Obsidian in a vault, else VS Code where installed)",
    )


def cmd_studio(args: argparse.Namespace) -> int:
    from botbin.cli.warm_server import WarmServer

    memory = service(args)
    memory.warm_in_background()  # the first search finds the index and the model ready
    from botbin.studio.app import StudioConfig
    from botbin.studio.links import detect_editor
    from botbin.studio.serve import StudioServer, open_browser

    editor = detect_editor(memory.root) if args.editor == "auto" else args.editor
    server = StudioServer(StudioConfig(lambda: (memory,), editor, args.read_only), args.port)
    warm = WarmServer(memory)  # `botbin search` in a terminal is answered by this process too
    warm_started = warm.start()
    print(f"botbin: Recall Studio for {memory.root} at {server.url}", flush=True)
    print("botbin: the URL holds this session's token: keep it to yourself (Ctrl+C to stop)", file=sys.stderr)
    redirect = None if args.no_browser else open_browser(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # uvicorn stops serving on Ctrl+C, then raises it again for its caller
        pass
    finally:
        if warm_started:
            warm.stop()
        if redirect is not None:
            redirect.unlink(missing_ok=True)
        memory.lifecycle.close()
    return EXIT_OK
