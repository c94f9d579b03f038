"""IndexBackend: what the search pipeline needs from an index. The embedded MemoryIndex (index/store.py) and
the team database's PostgresIndex (index/postgres/) both provide it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from botbin.index.hits import Hit, SearchFilters


class IndexBackend(Protocol):
    """Search and related over chunks, with filters; a note's stored chunk vectors."""

    def __len__(self) -> int:
        """Number of chunks searched."""
        ...

    def search(
        self,
        query: str,
        query_vector: npt.NDArray[np.float32] | None,
        k: int = ...,
        alpha: float = ...,
        filters: SearchFilters | None = ...,
        best_per_note: bool = ...,
        max_hits_per_note: int = ...,
        note_weight: float = ...,
        neighbour_weight: float = ...,
        exempt_daily: bool = ...,
    ) -> list[Hit]:
        """The ``k`` best chunks by hybrid score, best first (MemoryIndex.search states the arguments)."""
        ...

    def chunk_vector(self, path: str, lines: tuple[int, int], source_md5: str) -> npt.NDArray[np.float32] | None:
        """float32 (dim,) stored embedding of the chunk of ``path`` overlapping ``lines`` the most, when the
        index holds version ``source_md5`` of the note; else None."""
        ...
