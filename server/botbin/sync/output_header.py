"""An output read without its chunk block: its header and public metadata (what the state file's rebuild and a
killed sync's check need), and the output folder guessed from the outputs when the caller does not know it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from botbin.aifbin import HEADER, HEADER_SIZE, decode_metadata
from botbin.errors import AifBinFormatError
from botbin.sync.confine import Confined

#: The output folder a workspace uses unless its settings say otherwise (config.Settings.output_dir).
DEFAULT_OUTPUT_DIR = "memory/aifbin"
#: Folders above the output folder tried when the workspace root must be guessed.
_MAX_DEPTH = 6


def read_header(path: Path, folder: Path) -> tuple[int, int, dict[str, Any]]:
    """(flags, chunk_count, metadata) of the AIF-BIN file at ``path`` in the output folder ``folder``, reading
    no chunk.

    Raises OSError if it cannot be read (also when a link takes it out of ``folder``), AifBinFormatError if its
    header or metadata is bad.
    """
    with Confined(folder).open(path) as handle:
        head = handle.read(HEADER_SIZE)
        meta_len = HEADER.unpack_from(head)[4] if len(head) == HEADER_SIZE else 0
        head += handle.read(meta_len)
    return decode_metadata(head, str(path))


def guess_output_rel(out_dir: Path) -> str | None:
    """The output folder relative to its workspace, when the caller does not know it: the default one if
    ``out_dir`` ends with it, else the shortest tail under which the outputs' notes exist. None if unknown."""
    posix = out_dir.as_posix().rstrip("/")
    if posix.endswith("/" + DEFAULT_OUTPUT_DIR):
        return DEFAULT_OUTPUT_DIR
    sources = []
    for path in sorted(out_dir.rglob("*.aif-bin"))[:20]:
        try:
            source = read_header(path, out_dir)[2].get("source")
        except (OSError, AifBinFormatError):
            continue
        if isinstance(source, str):
            sources.append(source)
    for depth in range(1, min(_MAX_DEPTH, len(out_dir.parts) - 1) + 1):
        root = out_dir.parents[depth - 1]
        if sources and any((root / s).is_file() for s in sources):
            return out_dir.relative_to(root).as_posix()
    return None
