"""IndexBackend: what the search pipeline needs from an index. The embedded MemoryIndex (index/store.py) and
the team database's PostgresIndex (index/postgres/) both provide it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from botbin.index.hits import Hit, IndexQuery


class IndexBackend(Protocol):
    """Search and related over chunks, with filters; a note's stored chunk vectors."""

    def __len__(self) -> int:
        """Number of chunks searched."""
        ...

    def search(self, request: IndexQuery) -> list[Hit]:
        """The ``request.k`` best chunks by hybrid score, best first (IndexQuery states each part)."""
        ...

    def chunk_vector(self, path: str, lines: tuple[int, int], source_md5: str) -> npt.NDArray[np.float32] | None:
        """float32 (dim,) stored embedding of the chunk of ``path`` overlapping ``lines`` the most, when the
        index holds version ``source_md5`` of the note; else None."""
        ...
