"""``botbin.studio`` through the real ``botbin lsp`` over stdio: Recall Studio over the folders the language server
has open, started once (a second call answers the same URL), its API behind the token, searching the server's own
warm index; a bad editor argument is refused with its kind."""

from __future__ import annotations

import http.client
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from lsp.conftest import serve


def _get(url: str, path: str, body: Any = None) -> tuple[int, Any]:
    port, token = re.match(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)$", url).groups()  # type: ignore[union-attr]
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
    headers = {"Host": f"127.0.0.1:{port}", "X-Botbin-Token": token, "Content-Type": "application/json"}
    conn.request("GET" if body is None else "POST", path, None if body is None else json.dumps(body), headers)
    response = conn.getresponse()
    return response.status, json.loads(response.read())


async def test_the_studio_command_serves_the_open_folders(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "second"
    shutil.copytree(workspace, other)
    async with serve([workspace, other]) as client:
        ask = types.ExecuteCommandParams(command="botbin.studio", arguments=[{"editor": "obsidian"}])
        opened = await client.workspace_execute_command_async(ask)
        assert opened is not None
        url = opened["url"]
        assert url.startswith("http://127.0.0.1:") and "token=" in url
        status, info = _get(url, "/api/info")
        assert status == 200 and [f["path"] for f in info["folders"]] == [str(workspace), str(other)]
        assert info["editor"] == "obsidian"
        status, found = _get(url, "/api/folders/1/search", {"query": "v0.4.0 release tag", "k": 3})
        assert status == 200 and found["hits"]
        assert found["hits"][0]["editorUrl"].startswith("obsidian://open?path=")
        again = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="botbin.studio"))
        assert again is not None and again["url"] == url
        bad = types.ExecuteCommandParams(command="botbin.studio", arguments=[{"editor": "emacs"}])
        with pytest.raises(JsonRpcInvalidParams, match="editor must be one of"):
            await client.workspace_execute_command_async(bad)
