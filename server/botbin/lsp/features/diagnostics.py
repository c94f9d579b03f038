"""``textDocument/publishDiagnostics``: conflicting directives, as warnings on both rules, each with
related information pointing at the other. Recomputed after every sync of a folder."""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING

from lsprotocol import types

from botbin.lsp import protocol
from botbin.lsp.positions import lines_range

if TYPE_CHECKING:
    from botbin.directives.conflicts import Conflict, RuleRef
    from botbin.lsp.folders import Folder
    from botbin.lsp.server import BotbinLanguageServer
    from botbin.sync.engine import SyncReport

log = logging.getLogger(__name__)


def _location(folder: Folder, ref: RuleRef) -> types.Location:
    return types.Location(uri=folder.uri_of(ref.directive.path), range=lines_range(ref.cue.line, ref.cue.line + 1))


def conflict_diagnostics(folder: Folder, conflicts: list[Conflict], related: bool) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics by note URI: each conflict marks both of its rules."""
    out: dict[str, list[types.Diagnostic]] = defaultdict(list)
    for conflict in conflicts:
        for here, there in ((conflict.first, conflict.second), (conflict.second, conflict.first)):
            location = _location(folder, there)
            info = [types.DiagnosticRelatedInformation(location, f'the other rule: "{there.cue.phrase}"')]
            where = f"{there.directive.path}:{there.cue.line + 1}"
            out[folder.uri_of(here.directive.path)].append(
                types.Diagnostic(
                    range=lines_range(here.cue.line, here.cue.line + 1),
                    message=f'"{here.cue.phrase}" contradicts "{there.cue.phrase}" ({where})',
                    severity=types.DiagnosticSeverity.Warning,
                    source=protocol.DIAGNOSTIC_SOURCE,
                    code="conflicting-directives",
                    related_information=info if related else None,
                )
            )
    return out


def publish_conflicts(ls: BotbinLanguageServer, folder: Folder, _report: SyncReport | None = None) -> None:
    """Publish conflict diagnostics of ``folder`` and clear those of notes whose conflicts are gone."""
    try:
        conflicts = folder.service.directives().conflicts
    except Exception:
        log.exception("cannot compute directive conflicts for %s", folder.root)
        return
    related = ls.client_supports("text_document.publish_diagnostics.related_information")
    by_uri = conflict_diagnostics(folder, conflicts, related)
    prefix = folder.uri.rstrip("/") + "/"
    stale = {uri for uri in ls.diagnosed if uri.startswith(prefix) and uri not in by_uri}
    for uri in stale:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        ls.diagnosed.discard(uri)
    for uri, diagnostics in by_uri.items():
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
        ls.diagnosed.add(uri)


def register(server: BotbinLanguageServer) -> None:
    server.on_synced.append(lambda folder, report: publish_conflicts(server, folder, report))
