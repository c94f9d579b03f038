"""Warm answers from the language server: each open workspace folder's service answers ``botbin search`` and
``botbin context`` over its socket (cli/warm_server.py) while the server runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botbin.cli.warm_server import WarmServer

if TYPE_CHECKING:
    from botbin.lsp.folders import Folders

_SERVING: dict[str, WarmServer] = {}
"""Folder URI -> its socket, for the folders open now (one language server per process)."""


def serve_folders(folders: Folders) -> None:
    """Listen for each open folder (a folder whose service was replaced, by new settings, listens anew) and
    stop listening for folders closed since."""
    for uri in list(_SERVING):
        folder = folders.folders.get(uri)
        if folder is None or folder.service is not _SERVING[uri].memory:
            _SERVING.pop(uri).stop()
    for uri, folder in folders.folders.items():
        if uri not in _SERVING:
            warm = WarmServer(folder.service)
            if warm.start():
                _SERVING[uri] = warm


def stop_serving() -> None:
    """Stop every socket (shutdown)."""
    while _SERVING:
        _SERVING.popitem()[1].stop()
