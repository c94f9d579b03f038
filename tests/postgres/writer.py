"""A writer process for the concurrency tests and bench/bench_postgres.py: publishes synthetic notes again and
again into the team database (no model: random unit vectors), printing one line per note published.

Usage: python writer.py URL NAMESPACE WRITER_ID ROUNDS [SHARED_NOTES] [OWN_NOTES]
Each version of a note has 1 to 4 chunks whose texts all start ``writer W version V`` and a fingerprint
``W:V``: a note whose chunks disagree with each other or with its fingerprint was seen half-written."""

from __future__ import annotations

import hashlib
import sys

import numpy as np

from botbin.aifbin import AifBinDocument, ChunkRecord
from botbin.index.postgres.connect import ConnectOptions
from botbin.index.postgres.index import PostgresIndex


def synthetic_doc(path: str, writer: int, version: int, rng: np.random.Generator) -> AifBinDocument:
    """A note of 1 to 4 chunks, each text starting ``writer W version V``."""
    chunks = []
    for j in range(1 + (version + writer) % 4):
        text = f"writer {writer} version {version} chunk {j} of {path}: lorem ipsum team memory"
        vec = rng.standard_normal(384).astype(np.float32)
        vec /= np.linalg.norm(vec)
        md5 = hashlib.md5(text.encode()).hexdigest()
        chunks.append(ChunkRecord(j, text, j * 3, j * 3 + 3, ("Heading",), "lore", 20, md5, vec))
    meta = {"source": path, "source_md5": f"{writer}-{version}", "model": {"dim": 384}, "note": {"title": path}}
    return AifBinDocument(meta, tuple(chunks))


def main(argv: list[str]) -> None:
    url, namespace, writer, rounds = argv[0], argv[1], int(argv[2]), int(argv[3])
    shared, own = (int(argv[4]), int(argv[5])) if len(argv) > 5 else (3, 3)
    index = PostgresIndex(ConnectOptions(url, max_connections=1), namespace)
    other = PostgresIndex(ConnectOptions(url, max_connections=1), f"{namespace}-w{writer}")
    rng = np.random.default_rng(writer)
    version = 0
    while rounds <= 0 or version < rounds:
        for target, paths in (
            (index, [f"shared/{i}.md" for i in range(shared)]),
            (other, [f"own/{i}.md" for i in range(own)]),
        ):
            for path in paths:
                target.publish(synthetic_doc(path, writer, version, rng), f"{writer}:{version}")
                print(f"{target.namespace} {path} {version}", flush=True)
        version += 1


if __name__ == "__main__":
    main(sys.argv[1:])
