// Payloads as botbin lsp sends them, for tests that need no server.
import type { Hit, SearchResult, StatusResult } from "@botbin/protocol";

export function hit(over: Partial<Hit> = {}): Hit {
  return {
    path: "MEMORY.md",
    uri: "file:///ws/MEMORY.md",
    startLine: 32,
    endLine: 36,
    range: { start: { line: 32, character: 0 }, end: { line: 36, character: 0 } },
    headingPath: ["Lighthouse", "Decisions"],
    kind: "hard",
    title: "MEMORY",
    snippet: "Postgres over SQLite (2026-09): several server replicas\n need one shared …",
    score: 0.7134,
    cosine: 0.66,
    bm25: 0.83,
    bm25Share: 0.41,
    snippetStartLine: 33,
    snippetEndLine: 34,
    components: { hybrid: 0.7134 },
    namespace: null,
    ...over,
  };
}

export function searchResult(hits: Hit[], over: Partial<SearchResult> = {}): SearchResult {
  return {
    hits,
    indexedAt: "2026-11-29T13:22:26Z",
    indexing: false,
    degraded: false,
    stale: false,
    hidden: 0,
    ...over,
  };
}

export function statusResult(over: Partial<StatusResult> = {}): StatusResult {
  return {
    files: 15,
    chunks: 46,
    pending: 0,
    lastSync: "2026-11-29T13:22:26Z",
    model: "sentence-transformers/all-MiniLM-L6-v2",
    degraded: false,
    indexing: false,
    folders: [
      {
        uri: "file:///ws",
        workspace: "/ws",
        outputDir: "/ws/memory/aifbin",
        stateFile: "/ws/memory/aifbin/sync-state.json",
        model: "sentence-transformers/all-MiniLM-L6-v2",
        files: 15,
        chunks: 46,
        lastSync: "2026-11-29T13:22:26Z",
        tracked: 15,
        stale: [],
        warnings: [],
        conflicts: [],
        encryption: "off",
        migration: null,
        lastError: null,
        lastErrorKind: null,
        modelError: null,
      },
    ],
    ...over,
  };
}
