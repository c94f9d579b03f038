"""The team database's consistency check after concurrent writers (and kill -9s): every note has exactly its
chunks, numbered 0..n-1, all of one version, the version its fingerprint names (tests and bench)."""

from __future__ import annotations

import re
from typing import Any

#: One statement: one snapshot, as a reader sees the database.
CHECK_SQL = """
SELECT n.namespace, n.path, n.chunk_count, n.fingerprint, count(c.ord),
       COALESCE(array_agg(c.ord ORDER BY c.ord) FILTER (WHERE c.ord IS NOT NULL), '{}'),
       COALESCE(array_agg(DISTINCT substring(c.text from '^writer [0-9]+ version [0-9]+'))
                FILTER (WHERE c.ord IS NOT NULL), '{}')
FROM botbin_notes n LEFT JOIN botbin_chunks c ON c.namespace = n.namespace AND c.path = n.path
GROUP BY n.namespace, n.path
"""
ORPHANS_SQL = """
SELECT count(*) FROM botbin_chunks c
WHERE NOT EXISTS (SELECT 1 FROM botbin_notes n WHERE n.namespace = c.namespace AND n.path = c.path)
"""


def problems(conn: Any) -> tuple[list[str], int]:
    """(what is wrong, notes checked) in the database ``conn`` reaches; [] when consistent."""
    out: list[str] = []
    rows = conn.execute(CHECK_SQL).fetchall()
    for ns, path, count, fingerprint, found, ords, versions in rows:
        where = f"{ns}/{path}"
        if found != count or list(ords) != list(range(count)):
            out.append(f"{where}: {found} chunks {list(ords)}, note says {count}")
        writer, _, version = fingerprint.partition(":")
        if [v for v in versions] != [f"writer {writer} version {version}"]:
            out.append(f"{where}: chunk versions {versions}, fingerprint {fingerprint}")
        if not re.fullmatch(r"\d+:\d+", fingerprint):
            out.append(f"{where}: fingerprint {fingerprint!r}")
    orphans = conn.execute(ORPHANS_SQL).fetchone()[0]
    if orphans:
        out.append(f"{orphans} chunks without a note")
    return out, len(rows)
