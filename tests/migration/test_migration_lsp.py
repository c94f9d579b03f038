"""The language server migrates in the background when its ``model`` setting names another model than the index
was built with: ``botbin/status`` (what the editors show) reports the migration's progress while searches answer,
then the new model."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from lsp.conftest import request, serve

from .test_migration import model_id

pytestmark = pytest.mark.model


async def test_the_server_migrates_in_the_background_and_status_shows_it(
    synced_topics: Path, tmp_path: Path, second_model: Path
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(synced_topics, root)
    seen: list[dict[str, Any]] = []
    async with serve([root], {"vault": True, "model": str(second_model)}) as client:

        async def switched() -> bool:
            status = await request(client, "botbin/status", {})
            folder = status["folders"][0]
            if folder["migration"] is not None:
                seen.append(folder["migration"])
                hits = (await request(client, "botbin/search", {"query": "which database stores measurements"}))["hits"]
                assert hits, "no answer while the migration ran"
            return bool(folder["model"] == model_id(second_model) and folder["migration"] is None)

        deadline = asyncio.get_running_loop().time() + 300.0
        while not await switched():
            assert asyncio.get_running_loop().time() < deadline, f"the server did not switch models; saw {seen[-1:]}"
            await asyncio.sleep(0.2)
        assert seen, "botbin/status never showed the migration"
        assert {m["toModel"] for m in seen} == {model_id(second_model)}
        assert {m["phase"] for m in seen} <= {"embedding", "switching", "paused"}
        assert all(m["notesTotal"] == 40 for m in seen)
        status = await request(client, "botbin/status", {})
        assert status["model"] == model_id(second_model) and status["files"] == 40
