// The studio's JSON API (server/botbin/studio/app.py), typed by the wire contract: every request carries the
// session's token in a header (the page's URL has it as ?token=), and POSTs send JSON.
import type { ErrorData } from "@botbin/protocol";

export const TOKEN_HEADER = "X-Botbin-Token";

/** A refused or failed request, with the server's ``{kind, message}``. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

/** The token of the page's URL (``?token=``), or "" without one. */
export function tokenOf(search: string): string {
  return new URLSearchParams(search).get("token") ?? "";
}

export class Api {
  constructor(
    private readonly token: string,
    private readonly fetcher: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  /** ``GET path``. */
  get<T>(path: string): Promise<T> {
    return this.send<T>(path, { method: "GET" });
  }

  /** ``POST path`` with ``body`` as JSON. */
  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.send<T>(path, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "Content-Type": "application/json" },
    });
  }

  private async send<T>(path: string, init: RequestInit): Promise<T> {
    const headers = { ...(init.headers as Record<string, string> | undefined), [TOKEN_HEADER]: this.token };
    const response = await this.fetcher(path, { ...init, headers, credentials: "omit", cache: "no-store" });
    const text = await response.text();
    if (!response.ok) {
      let data: Partial<ErrorData> = {};
      try {
        data = JSON.parse(text) as ErrorData;
      } catch {
        data = { message: text.trim() || response.statusText };
      }
      throw new ApiError(response.status, data.kind ?? "error", data.message ?? `HTTP ${response.status}`);
    }
    return JSON.parse(text) as T;
  }
}

/** The path of folder ``folder``'s ``what``. */
export function folderPath(folder: number, what: string): string {
  return `/api/folders/${folder}/${what}`;
}
