"""Rendering of CLI results (human text and JSON); nothing here touches notes or the index."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import ValidationError

from botbin.cli.flags import FLAG_NAMES
from botbin.wire.requests import SearchRequest, problem

if TYPE_CHECKING:
    from botbin.agent.rules import DirectiveReport
    from botbin.aifbin import AifBinDocument
    from botbin.directives.conflicts import Conflict
    from botbin.index.hits import Hit
    from botbin.service import MemoryService
    from botbin.sync.engine import SyncReport
    from botbin.workspace.migration import MigrationReport
    from botbin.workspace.status import Status


def print_sync(report: SyncReport) -> None:
    """Failures and warnings on stderr; a summary on stdout only when something changed."""
    for failure in report.failed:
        print(f"botbin: failed: {failure.path}: {failure.reason}", file=sys.stderr)
    for warning in report.warnings:
        print(f"botbin: warning: {warning}", file=sys.stderr)
    if not report.changed:
        return
    extra = "".join(
        f", {len(paths)} {word}"
        for word, paths in (
            ("excluded", report.excluded),
            ("renamed", report.renamed),
            ("re-chunked", report.rechunked),
        )
        if paths
    )
    print(
        f"synced: {len(report.added)} added, {len(report.modified)} modified, {len(report.deleted)} deleted"
        f"{extra}, {report.unchanged} unchanged; {report.chunks_embedded} chunks embedded, "
        f"{report.chunks_reused} reused ({report.elapsed_ms / 1000:.1f} s)"
    )


def print_migration(moved: MigrationReport) -> None:
    """What a model migration did: a summary on stdout when it switched, why not on stderr otherwise."""
    for warning in moved.warnings:
        print(f"botbin: warning: {warning}", file=sys.stderr)
    if not moved.switched:
        print(f"botbin: the index stays on {moved.from_model}: {moved.message}", file=sys.stderr)
        return
    print(
        f"migrated: {moved.notes} notes to {moved.to_model}; {moved.chunks_embedded} chunks embedded, "
        f"{moved.chunks_reused} reused ({moved.elapsed_ms / 1000:.1f} s)"
    )


def print_hits(
    hits: list[Hit],
    filtered: bool = False,
    out: TextIO | None = None,
    hidden: int = 0,
    stale: bool = False,
    namespaces: tuple[str, ...] = (),
) -> None:
    """Hits as ``path:line`` (1-based, as editors show) with heading path, scores and a snippet, on ``out``
    (default: stdout). ``hidden``: weak hits left out (under the relevance floor); ``stale``: hits of notes
    deleted or excluded by these settings were left out (the search's warning names them); ``namespaces``:
    the team database's namespaces searched, when other than the workspace's own (each hit then shows its
    namespace: ``ns:path:line``)."""
    if not hits:
        empty = (
            "no relevant hits (only weak ones; --all shows them)"
            if hidden
            else "no hits matching the filters"
            if filtered
            else "no hits among the notes these settings track (indexed notes were left out: see the warning;"
            " synced with --vault? search with it too)"
            if stale
            else f"no hits in namespaces {', '.join(namespaces)} of the team database (one your role has no grant "
            "on reads as empty)"
            if namespaces
            else "no hits (is the workspace synced? try `botbin status`)"
        )
        print(empty, file=out)
        return
    for rank, hit in enumerate(hits, 1):
        where = " > ".join(hit.heading_path)
        ns = f"{hit.namespace}:" if namespaces and hit.namespace else ""
        print(f"{rank:>2}. {ns}{hit.path}:{hit.start_line + 1}-{hit.end_line}  {where}".rstrip(), file=out)
        print(
            f"    score {hit.score:.3f} (cosine {hit.cosine:.3f}, bm25 {hit.bm25:.3f}, share {hit.bm25_share:.3f})",
            file=out,
        )
        print(f"    {hit.snippet}", file=out)
    if hidden:
        weak = "1 weak hit" if hidden == 1 else f"{hidden} weak hits"
        print(f"({weak} under the relevance floor not shown; --all shows them)", file=out)


def print_status(status: Status, already_shown: tuple[str, ...] = ()) -> None:
    """The status report on stdout; its warnings not in ``already_shown`` on stderr."""
    print(f"workspace:   {status.workspace}")
    print(f"output:      {status.output_dir}")
    print(f"state file:  {status.state_file}")
    print(f"model:       {status.model}")
    print(f"indexed:     {status.files} notes, {status.chunks} chunks (tracked on disk: {status.tracked})")
    print(f"last sync:   {status.last_sync or 'never'}")
    print(f"encryption:  {status.encryption}")
    if status.migration is not None:
        print(f"migration:   {status.migration.describe()}")
    team = status.team
    if team is not None:
        what = (
            team.error
            if team.error
            else "reads only (postgres_publish = false)"
            if not team.publishes
            else f"{team.unpublished} notes to publish (`botbin sync` or `botbin db publish`)"
            if team.unpublished
            else "up to date"
        )
        print(f"team:        {team.url} namespace {team.namespace}: {what}")
    if status.stale:
        print(f"stale:       {len(status.stale)} notes (run `botbin sync`)")
        for note in status.stale[:50]:
            print(f"  {note.path}: {note.reason}")
    else:
        print("stale:       none")
    print(f"conflicts:   {len(status.conflicts) or 'none'}")
    _print_conflicts(list(status.conflicts))
    for warning in status.warnings:
        if warning not in already_shown:
            print(f"botbin: warning: {warning}", file=sys.stderr)


def _print_conflicts(conflicts: list[Conflict]) -> None:
    for conflict in conflicts:
        print(f"  {conflict.describe()}")


def directives_json(report: DirectiveReport) -> dict[str, Any]:
    """The ``botbin directives --json`` result: directives (0-based lines) and conflicts."""
    return {
        "directives": [{"path": d.path, "modality": d.modality, **d.to_dict()} for d in report.directives],
        "conflicts": [c.to_dict() for c in report.conflicts],
    }


_MARKUP_ONLY = re.compile(r"^(?:---|>?\s*\[![^\]]*\].*|>)\s*$")


def _first_words(text: str) -> str:
    """The first line that says something: not a frontmatter fence or a callout's ``> [!note]`` title."""
    lines = [ln.strip() for ln in text.strip().split("\n")]
    return next((ln for ln in lines if ln and not _MARKUP_ONLY.match(ln)), lines[0] if lines else "")


def print_directives(report: DirectiveReport) -> None:
    """One line per directive (``path:line  kind  modality  "cue"  first line``), then the conflicts."""
    if not report.directives:
        print("no directives (is the workspace synced? try `botbin status`)")
    for d in report.directives:
        cue = f'"{d.cues[0].cue}"' if d.cues else "-"
        first = _first_words(d.text)
        first = first if len(first) <= 90 else first[:89] + "…"
        lines = f"{d.start_line + 1}" if d.end_line - d.start_line <= 1 else f"{d.start_line + 1}-{d.end_line}"
        print(f"{d.path}:{lines}  {d.kind}  {d.modality or 'rule'}  {cue}  {first}")
    if report.conflicts:
        print(f"\n{len(report.conflicts)} conflicts:")
        _print_conflicts(report.conflicts)


def print_info(doc: AifBinDocument, path: Path, as_json: bool) -> None:
    meta = {k: v for k, v in doc.metadata.items() if k != "source_text"}
    chunks: list[dict[str, Any]] = [
        {
            "id": c.id,
            "lines": [c.start_line, c.end_line],
            "headingPath": list(c.heading_path),
            "kind": c.kind,
            "tokens": c.tokens,
        }
        for c in doc.chunks
    ]
    info = {
        "file": str(path),
        "bytes": path.stat().st_size,
        "flags": doc.flags,
        "chunkCount": len(doc.chunks),
        "metadata": meta,
        "chunks": chunks,
    }
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
        print(
            f"  #{c['id']:<3} lines {c['lines'][0] + 1}-{c['lines'][1]}  {c['tokens']:>3} tokens  "
            f"{c['kind']:<4} {' > '.join(c['headingPath'])}"
        )


def _batch_request(line: str, fields: Mapping[str, Any]) -> tuple[SearchRequest, list[str]]:
    """The search of one batch line ``{"q": ..., "k"?: int, "alpha"?: number}`` with the command's flags
    ``fields`` (a line's ``k`` and ``alpha`` win), and the line's keys that name a flag a line does not set (its
    own keys such as ``expect`` are the caller's and pass silently). Raises ValueError with the reason."""
    try:
        item = json.loads(line)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    query = item.get("q") if isinstance(item, dict) else None
    if not isinstance(query, str) or not query.strip():
        raise ValueError('expected {"q": "a non-empty query", "k"?: int, "alpha"?: number}')
    asked = {key: item[key] for key in ("k", "alpha") if item.get(key) is not None}
    try:
        request = SearchRequest.model_validate({**fields, "query": query, **asked})
    except ValidationError as exc:
        raise ValueError(problem(exc)) from None
    return request, [key for key in item if key in BATCH_FLAGS]


def run_batch(service: MemoryService, path: Path, fields: Mapping[str, Any]) -> int:
    """``search --batch``: one JSON query per line in, one JSON hit list per line out (model loaded once), each
    line searched with every flag of the command (``fields``: filters, ``--per-note``, ``--best-per-note``,
    ``--all``...) as a single search is; hits under the relevance floor are left out unless ``--all``.

    A bad line is reported on stderr and answered with ``[]``, so output lines stay aligned with input lines.
    Returns 2 if the file cannot be read.
    """
    try:
        source = sys.stdin if str(path) == "-" else path.open(encoding="utf-8")
        with source:
            lines = source.readlines()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"botbin: error: {path}: cannot read the batch file ({exc})", file=sys.stderr)
        return 2
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            request, unread = _batch_request(line, fields)
        except ValueError as exc:
            print(f"botbin: {path}:{number}: bad query line ({exc}); answered with []", file=sys.stderr)
            print("[]", flush=True)
            continue
        for key in unread:
            print(f"botbin: {path}:{number}: {key!r} is not read from a batch line (give it as {BATCH_FLAGS[key]} "
                  "for every line)", file=sys.stderr)  # fmt: skip
        result = service.search(request)
        for warning in result.warnings:
            print(f"botbin: {path}:{number}: warning: {warning}", file=sys.stderr)
        if not result.hits and result.hidden:
            print(f"botbin: {path}:{number}: only weak hits ({result.hidden}; --all shows them)", file=sys.stderr)
        print(json.dumps([h.to_dict() for h in result.hits], ensure_ascii=False), flush=True)
    return 0


#: A batch line's key that names a search flag (the field, or the flag's word), and the flag that sets it for the
#: whole batch: every flag of cli/flags.py's FLAG_NAMES but the ones a line may set, and a few spellings more.
BATCH_FLAGS = {
    **{field: flag for field, flag in FLAG_NAMES.items() if field not in ("k", "alpha", "budget_tokens")},
    **{
        flag.lstrip("-").replace("-", "_"): flag
        for flag in FLAG_NAMES.values()
        if flag not in ("-k", "--alpha", "--budget")
    },
    "best_per_note": "--best-per-note",
    "all": "--all",
    "show_all": "--all",
    "filters": "the filter flags",
}
