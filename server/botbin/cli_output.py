"""Rendering of CLI results (human text and JSON); nothing here touches notes or the index."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botbin.aifbin import AifBinDocument
    from botbin.index.store import Hit, SearchFilters
    from botbin.service import MemoryService, Status
    from botbin.sync.engine import SyncReport


def sync_json(report: SyncReport) -> dict[str, Any]:
    """The ``botbin sync --json`` report."""
    return {
        "added": list(report.added), "modified": list(report.modified), "deleted": list(report.deleted),
        "renamed": [{"from": a, "to": b} for a, b in report.renamed], "unchanged": report.unchanged,
        "failed": [{"path": f.path, "reason": f.reason} for f in report.failed],
        "warnings": list(report.warnings), "chunksEmbedded": report.chunks_embedded,
        "chunksReused": report.chunks_reused, "elapsedMs": round(report.elapsed_ms, 1),
    }


def print_sync(report: SyncReport) -> None:
    """Failures and warnings on stderr; a summary on stdout only when something changed."""
    for failure in report.failed:
        print(f"botbin: failed: {failure.path}: {failure.reason}", file=sys.stderr)
    for warning in report.warnings:
        print(f"botbin: warning: {warning}", file=sys.stderr)
    if not report.changed:
        return
    renamed = f", {len(report.renamed)} renamed" if report.renamed else ""
    print(
        f"synced: {len(report.added)} added, {len(report.modified)} modified, {len(report.deleted)} deleted"
        f"{renamed}, {report.unchanged} unchanged; {report.chunks_embedded} chunks embedded, "
        f"{report.chunks_reused} reused ({report.elapsed_ms / 1000:.1f} s)"
    )


def print_hits(hits: list[Hit]) -> None:
    """Hits as ``path:line`` (1-based, as editors show) with heading path, scores and a snippet."""
    if not hits:
        print("no hits (is the workspace synced? try `botbin status`)")
        return
    for rank, hit in enumerate(hits, 1):
        where = " > ".join(hit.heading_path)
        print(f"{rank:>2}. {hit.path}:{hit.start_line + 1}-{hit.end_line}  {where}".rstrip())
        print(f"    score {hit.score:.3f} (cosine {hit.cosine:.3f}, bm25 {hit.bm25:.3f})")
        print(f"    {hit.snippet}")


def print_status(status: Status) -> None:
    print(f"workspace:   {status.workspace}")
    print(f"output:      {status.output_dir}")
    print(f"state file:  {status.state_file}")
    print(f"model:       {status.model}")
    print(f"indexed:     {status.files} notes, {status.chunks} chunks (tracked on disk: {status.tracked})")
    print(f"last sync:   {status.last_sync or 'never'}")
    if status.stale:
        print(f"stale:       {len(status.stale)} notes (run `botbin sync`)")
        for note in status.stale[:50]:
            print(f"  {note.path}: {note.reason}")
    else:
        print("stale:       none")
    for warning in status.warnings:
        print(f"botbin: warning: {warning}", file=sys.stderr)


def print_info(doc: AifBinDocument, path: Path, as_json: bool) -> None:
    meta = {k: v for k, v in doc.metadata.items() if k != "source_text"}
    chunks: list[dict[str, Any]] = [
        {"id": c.id, "lines": [c.start_line, c.end_line], "headingPath": list(c.heading_path),
         "kind": c.kind, "tokens": c.tokens}
        for c in doc.chunks
    ]
    info = {"file": str(path), "bytes": path.stat().st_size, "flags": doc.flags, "chunkCount": len(doc.chunks),
            "metadata": meta, "chunks": chunks}
    if as_json:
        print(json.dumps(info, ensure_ascii=False, default=str))
        return
    print(f"file:     {path} ({info['bytes']:,} bytes, AIF-BIN v2, flags {doc.flags:#04x})")
    print(f"source:   {doc.source} ({meta.get('source_bytes', '?')} bytes, md5 {meta.get('source_md5', '?')})")
    model = meta.get("model", {})
    print(f"model:    {model.get('name')} (dim {model.get('dim')}, max {model.get('max_tokens')} tokens)")
    print(f"synced:   {meta.get('synced_at')} (created {meta.get('created_at')})")
    print(f"chunks:   {len(doc.chunks)}")
    for c in chunks:
        print(f"  #{c['id']:<3} lines {c['lines'][0] + 1}-{c['lines'][1]}  {c['tokens']:>3} tokens  "
              f"{c['kind']:<4} {' > '.join(c['headingPath'])}")


def run_batch(service: MemoryService, path: Path, k: int | None, alpha: float | None,
              filters: SearchFilters, best_per_note: bool) -> int:
    """``search --batch``: one JSON query per line in, one JSON hit list per line out (model loaded once)."""
    source = sys.stdin if str(path) == "-" else path.open(encoding="utf-8")
    with source:
        for number, line in enumerate(source, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                query = item["q"] if isinstance(item, dict) else None
                if not isinstance(query, str):
                    raise ValueError('expected {"q": "..."}')
            except (ValueError, KeyError) as exc:
                print(f"botbin: {path}:{number}: bad query line ({exc}); answered with []", file=sys.stderr)
                print("[]")
                continue
            result = service.search(query, item.get("k", k), item.get("alpha", alpha), filters, best_per_note)
            print(json.dumps([h.to_dict() for h in result.hits], ensure_ascii=False), flush=True)
    return 0
