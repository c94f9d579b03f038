"""The service's calls that take no one workspace (beside service.py, the composition root): one AIF-BIN file read
(``botbin info`` / ``extract``), the paragraph at a line of any note (hover, related), the results of several
folders merged (the language server's), and the process-wide set-up of a server (BLAS threads, the bundled model's
session opened early). No logic: each call names the module that does the work."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from botbin.config import Settings
from botbin.directives.paragraph import paragraph_at as find_paragraph
from botbin.notes_io import extract_source, read_document
from botbin.search.pipeline import Merged, SearchResult, merge

if TYPE_CHECKING:
    from botbin.aifbin import AifBinDocument
    from botbin.directives.paragraph import Paragraph

T = TypeVar("T")


def paragraph_at(text: str, path: str, line: int, settings: Settings | None = None) -> Paragraph | None:
    """The block of note ``text`` holding 0-based ``line`` and its directive, by the instruction notes of
    ``settings`` (a folder's; default settings without one) (directives/paragraph.py)."""
    return find_paragraph(text, path, line, (settings or Settings()).instruction_globs)


def merged(results: Iterable[tuple[SearchResult, T]], k: int) -> Merged[T]:
    """Several folders' results (each with its folder ``T``) as one, the best ``k`` by score (search/pipeline.py)."""
    return merge(results, k)


def read_aifbin(path: Path, passphrase: Callable[[], str | None]) -> AifBinDocument:
    """The AIF-BIN file at ``path``, decoded (notes_io.py). Raises AifBinFormatError, DecryptionError."""
    return read_document(path, passphrase)


def note_of_aifbin(path: Path, passphrase: Callable[[], str | None]) -> bytes:
    """The note's bytes an AIF-BIN file keeps (notes_io.py). Raises AifBinFormatError."""
    return extract_source(path, passphrase)


def single_threaded_blas() -> Any:
    """numpy's BLAS limited to one thread in this process (index/blas.py)."""
    from botbin.index.blas import single_threaded_blas as limit

    return limit()


def preload_bundled_model() -> threading.Thread:
    """The bundled model's ONNX session opened on a daemon thread now (embedding/auto.py): the language server calls
    this before importing pygls."""
    from botbin.embedding.auto import preload_bundled

    return preload_bundled()
