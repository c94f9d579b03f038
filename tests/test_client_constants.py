"""The TypeScript client's copy of the server's relevance floor (extensions/client/src/relevance.ts) matches
search/pipeline.py, so a person is never shown a hit the server itself counts as unrelated."""

from __future__ import annotations

import re

from botbin.search import pipeline
from conftest import REPO


def test_client_relevance_floor_matches_the_server() -> None:
    source = (REPO / "extensions" / "client" / "src" / "relevance.ts").read_text(encoding="utf-8")
    found = dict(re.findall(r"export const (RELEVANCE_MIN_\w+) = ([0-9.]+);", source))
    assert found == {
        "RELEVANCE_MIN_COSINE": str(pipeline.RELEVANCE_MIN_COSINE),
        "RELEVANCE_MIN_BM25_SHARE": str(pipeline.RELEVANCE_MIN_BM25_SHARE),
    }
