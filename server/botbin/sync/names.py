"""Note paths that cannot be taken as they are: names that are not valid UTF-8, and folders whose permissions
keep botbin from looking at their notes (a sync keeps those notes, a search still shows them)."""

from __future__ import annotations

import os
from pathlib import Path

BAD_NAME_REASON = "the file name is not valid UTF-8 (shown with its bytes escaped); rename it to index it"
"""Why a note in ``ScanResult.bad_names`` is not synced."""


def valid_name(rel: str) -> bool:
    """True if ``rel`` (as os.scandir gives it: undecodable bytes as lone surrogates) is valid UTF-8 text."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(rel: str) -> str:
    """``rel`` with the bytes that are not UTF-8 escaped (``bad\\xff.md``): printable, and valid in JSON."""
    try:
        raw = rel.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no byte made (a Windows name)
        raw = rel.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


KEPT = "its notes are kept as they were"
"""What a sync does with the notes of a folder it cannot read (a permission may be back tomorrow)."""


def blocked_folder(root: Path, rel: str) -> str:
    """The folder (relative POSIX, "" for the root) whose permissions keep note ``rel`` from being looked at: the
    first one on the way that cannot be searched; the note's own folder when none is found (fixed meanwhile)."""
    names = rel.split("/")
    for i in range(1, len(names) + 1):
        try:
            os.stat(os.path.join(root, *names[:i]))
        except PermissionError:
            return "/".join(names[: i - 1])
        except OSError:
            break
    return "/".join(names[:-1])
