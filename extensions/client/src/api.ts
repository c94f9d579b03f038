/**
 * botbin's requests over any JSON-RPC sender: VS Code's LanguageClient, the Obsidian plugin's plain
 * vscode-jsonrpc connection, and the integration tests. All go through this one module.
 */
import {
  COMMAND_REINDEX,
  COMMAND_SYNC,
  RELATED,
  REMEMBER,
  SEARCH,
  STATUS,
  type RelatedParams,
  type RelatedResult,
  type RememberParams,
  type RememberResult,
  type SearchRequest,
  type SearchResult,
  type StatusResult,
  type SyncResult,
} from "@botbin/protocol";
import { CancellationTokenSource, type CancellationToken } from "vscode-jsonrpc";

/** Sends a request and resolves with its result (LanguageClient and MessageConnection both fit). */
export interface RequestSender {
  sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R>;
}

export class BotbinApi {
  constructor(private readonly sender: RequestSender) {}

  search(params: SearchRequest, signal?: AbortSignal): Promise<SearchResult> {
    return this.request<SearchResult>(SEARCH, params, signal);
  }

  related(params: RelatedParams, signal?: AbortSignal): Promise<RelatedResult> {
    return this.request<RelatedResult>(RELATED, params, signal);
  }

  status(signal?: AbortSignal): Promise<StatusResult> {
    return this.request<StatusResult>(STATUS, {}, signal);
  }

  /** Appends `text` to today's daily note (`memory/YYYY-MM-DD.md`), which the server indexes at once. */
  remember(params: RememberParams): Promise<RememberResult> {
    return this.request<RememberResult>(REMEMBER, params);
  }

  /** `botbin.sync` (changed notes) or `botbin.reindex` (re-chunk all); resolves when the sync is done. */
  sync(what: "sync" | "reindex"): Promise<SyncResult> {
    const command = what === "sync" ? COMMAND_SYNC : COMMAND_REINDEX;
    // no `arguments` key: botbin lsp (pygls) fails on `arguments: []` with a NameError (reported upstream)
    return this.request<SyncResult>("workspace/executeCommand", { command });
  }

  private async request<R>(method: string, params: unknown, signal?: AbortSignal): Promise<R> {
    if (!signal) return this.sender.sendRequest<R>(method, params);
    const source = new CancellationTokenSource();
    const cancel = (): void => source.cancel();
    signal.addEventListener("abort", cancel, { once: true });
    try {
      return await this.sender.sendRequest<R>(method, params, source.token);
    } finally {
      signal.removeEventListener("abort", cancel);
      source.dispose();
    }
  }
}
