// A PluginConnection without a process: answers botbin's requests from a table and records what it was sent.
import { BotbinApi, type ProgressTracker } from "@botbin/client";
import type { ServerSettings } from "@botbin/protocol";
import type { PluginConnection } from "../../src/core/session";

export type Handler = (params: unknown) => unknown;

export class FakeConnection implements PluginConnection {
  readonly api: BotbinApi;
  readonly notifications: { method: string; params: unknown }[] = [];
  readonly settingsSent: { settings: { botbin: ServerSettings } }[] = [];
  readonly requests: { method: string; params: unknown }[] = [];
  started = false;
  stopped = false;

  constructor(
    readonly handlers: Record<string, Handler>,
    readonly onClosed: () => void,
    readonly progress?: ProgressTracker,
    private readonly startError?: string,
  ) {
    this.api = new BotbinApi({
      sendRequest: async <R>(method: string, params: unknown): Promise<R> => {
        this.requests.push({ method, params });
        const key = method === "workspace/executeCommand" ? (params as { command: string }).command : method;
        const handler = handlers[key];
        if (!handler) throw new Error(`no handler for ${key}`);
        return (await handler(params)) as R;
      },
    });
  }

  async start(): Promise<void> {
    if (this.startError) throw new Error(this.startError);
    this.started = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  notify(method: string, params: unknown): void {
    this.notifications.push({ method, params });
  }

  sendSettings(change: { settings: { botbin: ServerSettings } }): void {
    this.settingsSent.push(change);
  }

  /** The server process exits on its own. */
  crash(): void {
    this.onClosed();
  }
}
