"""Issue 20, item 7: Excalidraw drawing data, data URIs and long base64 runs are not embedded (and the
sync says what was skipped); a hard link to a note is indexed once."""

from __future__ import annotations

import base64
import os
import random
from collections.abc import Callable

import pytest

from botbin import aifbin
from botbin.parsing import parse_note
from botbin.parsing.binary import PLACEHOLDER, strip_binary
from botbin.service import MemoryService
from botbin.wire.requests import SearchRequest


def _b64(n_bytes: int, seed: int = 0) -> str:
    return base64.b64encode(random.Random(seed).randbytes(n_bytes)).decode()


def _excalidraw(payload_bytes: int = 150_000) -> str:
    data = _b64(payload_bytes)
    lines = "\n".join(data[i : i + 76] for i in range(0, len(data), 76))
    return (
        "---\nexcalidraw-plugin: parsed\ntags: [excalidraw]\n---\n"
        "==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠==\n\n"
        "# Text Elements\nHeron nesting sites by the north shore ^a1b2c3\n\n"
        f"%%\n# Drawing\n```compressed-json\n{lines}\n```\n%%\n"
    )


def test_an_excalidraw_drawing_embeds_its_text_not_its_data(make_service: Callable[..., MemoryService]) -> None:
    note = _excalidraw()
    assert len(note) > 200_000
    service = make_service({"memory/Drawing 2026-11-05.excalidraw.md": note})
    report = service.sync()
    out = service.output_dir / "memory" / "Drawing 2026-11-05.excalidraw.aif-bin"
    doc = aifbin.decode(out.read_bytes(), str(out))
    assert len(doc.chunks) <= 3 and all("compressed-json" not in c.text for c in doc.chunks)
    assert any("Heron nesting sites" in c.text for c in doc.chunks)
    assert doc.source_text == note.encode()  # the note itself is kept whole for extract
    (warning,) = [w for w in report.warnings if "not embedded" in w]
    assert "Drawing 2026-11-05.excalidraw.md" in warning and "1 drawing data block" in warning


def test_data_uris_and_base64_runs_become_a_placeholder() -> None:
    words = "averyveryverylongidentifierwithoutanydigits" * 6  # 258 letters: prose-ish, kept
    text = (
        f"# Pasted\n\nA screenshot ![x](data:image/png;base64,{_b64(3000, 1)}) of the dashboard.\n\n"
        f"Key blob: {_b64(600, 2)}\n\nA long word {words} stays.\n"
    )
    stripped = strip_binary(parse_note(text, "memory/pasted.md"))
    body = "\n".join(b.text for b in stripped.note.blocks)
    assert body.count(PLACEHOLDER) == 2 and "base64," not in body and words in body
    assert "of the dashboard" in body and stripped.replaced_runs == 2 and stripped.dropped_blocks == 0
    assert stripped.warning() is not None and "2 data URI(s) or base64 run(s)" in (stripped.warning() or "")


def test_a_json_fence_is_dropped_only_in_a_drawing_note() -> None:
    fence = '# Config\n\n```json\n{"a": 1}\n```\n'
    assert strip_binary(parse_note(fence, "memory/plain.md")).warning() is None
    drawing = strip_binary(parse_note("---\nexcalidraw-plugin: parsed\n---\n" + fence, "memory/d.md"))
    assert drawing.dropped_blocks == 1 and drawing.dropped_lines == 3


@pytest.mark.skipif(not hasattr(os, "link"), reason="no hard links")
def test_a_hard_link_to_a_note_is_indexed_once(make_service: Callable[..., MemoryService]) -> None:
    service = make_service({"memory/a.md": "# A\n\nThe heron nests by the lake.\n"})
    os.link(service.root / "memory" / "a.md", service.root / "memory" / "b.md")
    report = service.sync()
    assert report.added == ("memory/a.md",)
    assert [h.path for h in service.search(SearchRequest(query="heron nests lake", k=5, show_all=True)).hits] == [
        "memory/a.md"
    ]
    assert not service.sync().changed and service.status().stale == ()
