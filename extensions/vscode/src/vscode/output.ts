/**
 * The "botbin" output channel: the server's log (its stderr, which the language client copies here), the
 * client's own log and protocol trace, and the extension's lines. The server's last stderr lines of the
 * current run are kept so that a failed start can say why. A passphrase given to `redact` never reaches the
 * channel (a verbose protocol trace would otherwise show it in the `initialize` params).
 */
import * as vscode from "vscode";
import { RecentLines } from "@botbin/client";

const HIDDEN = "••••••";

export class ServerLog implements vscode.Disposable {
  /** The channel to hand to the language client (a tee of the real one). */
  readonly channel: vscode.OutputChannel;
  private readonly inner: vscode.OutputChannel;
  /** Lines the server wrote to stderr (the client copies them with append()). */
  private readonly server = new RecentLines();
  /** Texts never written: each passphrase given to `redact`, as it is and as it appears in JSON. */
  private readonly hidden: string[] = [];
  /** Set by dispose(): nothing more is written (a closed channel throws "Channel has been closed"). */
  private disposed = false;

  constructor(name = "botbin") {
    const inner = (this.inner = vscode.window.createOutputChannel(name));
    this.channel = {
      name: inner.name,
      append: (text: string) => {
        const clean = this.clean(text);
        this.server.add(clean);
        this.write(() => inner.append(clean));
      },
      appendLine: (text: string) => this.write(() => inner.appendLine(this.clean(text))),
      replace: (text: string) => this.write(() => inner.replace(this.clean(text))),
      clear: () => this.write(() => inner.clear()),
      show: (a?: boolean | vscode.ViewColumn, b?: boolean) =>
        this.write(() => (typeof a === "boolean" ? inner.show(a) : inner.show(a, b))),
      hide: () => this.write(() => inner.hide()),
      dispose: () => this.dispose(),
    };
  }

  /** A line of the extension's own, timestamped (not taken for the server's error). */
  info(message: string): void {
    this.write(() => this.inner.appendLine(this.clean(`[${new Date().toISOString()}] extension: ${message}`)));
  }

  /** From now on, `secret` is written as dots wherever it would appear. */
  redact(secret: string): void {
    for (const form of [secret, JSON.stringify(secret).slice(1, -1)]) {
      if (form && !this.hidden.includes(form)) this.hidden.push(form);
    }
    this.hidden.sort((a, b) => b.length - a.length);
  }

  /** A new server run begins: forget the last one's lines. */
  newRun(): void {
    this.server.clear();
  }

  /** The last error-like line the server wrote to stderr in this run (a Python traceback's last line). */
  lastError(): string | undefined {
    return this.server.lastError();
  }

  show(): void {
    this.write(() => this.inner.show(true));
  }

  /** Closes the channel once; later lines (a server stopping after deactivation) are dropped. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.inner.dispose();
  }

  private write(action: () => void): void {
    if (!this.disposed) action();
  }

  private clean(text: string): string {
    return this.hidden.reduce((out, secret) => out.split(secret).join(HIDDEN), text);
  }
}
