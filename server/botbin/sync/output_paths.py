"""Where a note's AIF-BIN file lives inside the output folder: the note's path mirrored, with the folders named
as an output file could be escaped (pure: strings in, strings out)."""

from __future__ import annotations

import re

#: A folder named as an output file could be (``x.aif-bin``), or as this escape makes one (``x.aif-bin.d``).
_OUTPUT_LIKE = re.compile(r"\.aif-bin(?:\.d)*$", re.IGNORECASE)


def mirrored(rel: str) -> str:
    """Path of note ``rel``'s output inside the output folder (``memory/a.md`` -> ``memory/a.aif-bin``).

    Only ``*.md`` notes are tracked, so swapping the suffix cannot make two notes collide; but note ``x.md``'s output
    ``x.aif-bin`` would be the folder that the outputs of notes in a folder named ``x.aif-bin`` need. Such a folder
    (any case) gets ``.d`` appended (``x.aif-bin.d``; ``x.aif-bin.d`` itself becomes ``x.aif-bin.d.d``), so no
    output folder is named as an output file is, no two notes share a path, and every other path is as it was.
    """
    *folders, name = rel.split("/")
    stem = name[:-3] if name.endswith(".md") else name
    return "/".join([*(f"{f}.d" if _OUTPUT_LIKE.search(f) else f for f in folders), f"{stem}.aif-bin"])


def note_of(mirrored_path: str) -> str:
    """The note whose output is ``mirrored_path`` (inside the output folder): the inverse of ``mirrored``."""
    *folders, name = mirrored_path.split("/")
    stem = name[: -len(".aif-bin")] if name.endswith(".aif-bin") else name
    return "/".join(
        [*(f[:-2] if _OUTPUT_LIKE.search(f) and f[-2:].lower() == ".d" else f for f in folders), f"{stem}.md"]
    )


def unescaped_output_rel(rel: str, output_dir: str) -> str:
    """Where note ``rel``'s output was written before folders named like outputs were escaped (``mirrored``)."""
    return f"{output_dir.strip('/')}/{rel[:-3] if rel.endswith('.md') else rel}.aif-bin"


def output_moved(rel: str, output: str) -> bool:
    """True if ``output`` (a state entry's, workspace-relative) is where note ``rel``'s output was written before
    folders named like outputs were escaped, and is no longer (such a note is written anew, at its new path)."""
    old = unescaped_output_rel(rel, "")[1:]
    return mirrored(rel) != old and output.endswith(f"/{old}")
