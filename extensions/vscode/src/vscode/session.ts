/**
 * The extension's running state: the supervised language server, its settings, indexing progress and
 * status, and the status bar that shows them. Commands reach the server only through `api`. The passphrase
 * of an encrypted store lives in secret storage and in this object's memory only; the server gets it in
 * `initializationOptions` and `didChangeConfiguration`, never through the settings.
 */
import { homedir } from "node:os";
import * as vscode from "vscode";
import type { ErrorReport, StatusResult } from "@botbin/protocol";
import {
  type BotbinApi,
  Debouncer,
  CoveredMessages,
  lockedError,
  type LockedError,
  lockedReason,
  PassphraseOffer,
  ProgressTracker,
  RestartPolicy,
  type ServerState,
  Supervisor,
  systemClock,
} from "@botbin/client";
import { COMMAND_IDS } from "../core/commandIds";
import {
  ENTER_PASSPHRASE,
  failureMessage,
  lockedMessage,
  notRunningMessage,
  OPEN_SETTINGS,
  RESTART,
  SHOW_LOG,
} from "../core/messages";
import { describeCommand, resolveServerCommand, type ServerCommand } from "../core/serverCommand";
import { commandChanged, type ExtensionSettings, serverSettingsChanged } from "../core/settings";
import { statusView } from "../core/statusModel";
import { BotbinConnection } from "./client";
import { onConfigChange, openSettings, readConfig } from "./config";
import type { ServerLog } from "./output";
import { askPassphrase, type PassphraseStore } from "./passphrase";
import { StatusBar } from "./statusBar";

/** How often the status bar asks for fresh status while the server runs, in milliseconds. */
const STATUS_POLL_MS = 60_000;
/** Wait after a save before asking for status (the server syncs the note first), in milliseconds. */
const AFTER_SAVE_MS = 1500;

export type InterpreterLookup = (resource: vscode.Uri | undefined) => Promise<string | undefined>;

export class Session implements vscode.Disposable {
  settings: ExtensionSettings;
  private readonly progress: ProgressTracker;
  private readonly supervisor: Supervisor<BotbinConnection>;
  private readonly statusBar = new StatusBar();
  private readonly afterSave = new Debouncer(systemClock, AFTER_SAVE_MS);
  private readonly disposables: vscode.Disposable[] = [];
  private status: StatusResult | undefined;
  private command: ServerCommand | undefined;
  private passphrase: string | undefined;
  /** When a sync was last seen to end (ISO 8601), a no-op Sync Now included (see StatusInputs.checkedAt). */
  private checkedAt: string | undefined;
  /** Offers "Enter passphrase" once per try when the server says the store is encrypted. */
  private readonly locked = new PassphraseOffer((error) => void this.offerPassphrase(error));
  private readonly covered = new CoveredMessages();

  constructor(
    readonly log: ServerLog,
    private readonly findInterpreter: InterpreterLookup,
    private readonly secrets: PassphraseStore,
  ) {
    this.settings = this.loadSettings();
    this.progress = new ProgressTracker(
      () => this.render(),
      () => this.synced(),
    );
    this.supervisor = new Supervisor(
      (onClosed) => this.connect(onClosed),
      new RestartPolicy(),
      systemClock,
      (state) => this.stateChanged(state),
    );
    const poll = setInterval(() => this.refreshStatus(), STATUS_POLL_MS);
    this.disposables.push(
      this.statusBar,
      { dispose: () => clearInterval(poll) },
      onConfigChange(() => void this.configChanged()),
      vscode.workspace.onDidSaveTextDocument((document) => {
        if (document.languageId === "markdown") this.afterSave.run(() => this.refreshStatus());
      }),
    );
    this.render();
  }

  start(): void {
    this.supervisor.start();
  }

  restart(): Promise<void> {
    return this.supervisor.restart();
  }

  /** The running server's requests, or undefined. */
  get api(): BotbinApi | undefined {
    return this.supervisor.running?.api;
  }

  /** The running server's requests, else undefined after telling the user why there is none. */
  requireApi(): BotbinApi | undefined {
    const running = this.supervisor.running;
    if (running) return running.api;
    if (this.supervisor.state.kind === "failed") void this.reportFailure(this.supervisor.state);
    else void vscode.window.showWarningMessage(notRunningMessage(this.supervisor.state));
    return undefined;
  }

  /** Asks for the passphrase, keeps it in secret storage, and opens the store with it. */
  async setPassphrase(): Promise<void> {
    const passphrase = await askPassphrase();
    if (!passphrase) return;
    this.log.redact(passphrase);
    try {
      await this.secrets.store(passphrase);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      void vscode.window.showWarningMessage(
        `botbin: the passphrase could not be saved (${why}); it is used until VS Code closes.`,
      );
    }
    this.passphrase = passphrase;
    this.locked.reset();
    this.log.info("passphrase given; opening the encrypted memory");
    const running = this.supervisor.running;
    if (running) await running.sendSettings(this.settings, this.passphrase);
    else if (this.supervisor.state.kind === "failed") await this.restart();
  }

  /** Removes the passphrase from secret storage and restarts the server without it. */
  async forgetPassphrase(): Promise<void> {
    await this.secrets.delete();
    this.passphrase = undefined;
    this.locked.reset();
    this.log.info("passphrase forgotten; restarting the language server without it");
    await this.restart();
    void vscode.window.showInformationMessage("botbin: passphrase forgotten.");
  }

  /** A sync ended (an indexing report, or Sync Now / Reindex answered): note when, and ask for status. */
  synced(): void {
    this.checkedAt = new Date().toISOString();
    this.refreshStatus();
  }

  /** Asks the server for status, then redraws the status bar. */
  refreshStatus(): void {
    const api = this.supervisor.running?.api;
    if (!api) return;
    const attempt = this.locked.attempt;
    api.status().then(
      (status) => {
        this.status = status;
        this.render();
        this.locked.check(lockedReason(status), attempt);
      },
      (error: unknown) =>
        this.log.info(`botbin/status failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  private loadSettings(): ExtensionSettings {
    const { settings, problems } = readConfig();
    for (const problem of problems) this.log.info(problem);
    if (problems.length > 0) void vscode.window.showWarningMessage(`botbin: ${problems.join("; ")}`);
    return settings;
  }

  private async connect(onClosed: () => void): Promise<BotbinConnection> {
    // read afresh at every (re)start: a changed executable setting applies even if no change event came
    this.settings = readConfig().settings;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const { serverPath, pythonPath } = this.settings;
    const activeInterpreter = serverPath || pythonPath ? undefined : await this.findInterpreter(folder?.uri);
    this.command = resolveServerCommand({
      serverPath,
      pythonPath,
      activeInterpreter,
      platform: process.platform,
      workspaceFolder: folder?.uri.fsPath,
      home: homedir(),
    });
    this.passphrase =
      (await this.secrets.get().catch((error: unknown) => {
        this.log.info(`cannot read the passphrase from secret storage: ${String(error)}`);
        return undefined;
      })) ?? this.passphrase;
    if (this.passphrase) this.log.redact(this.passphrase);
    this.log.newRun();
    this.log.info(`starting ${describeCommand(this.command)} (from ${this.command.source})`);
    const deps = {
      command: this.command,
      settings: () => this.settings,
      passphrase: () => this.passphrase,
      onMessage: (type: number, message: string) => this.serverMessage(type, message),
      onError: (report: ErrorReport) => {
        if (this.locked.check(lockedError(report))) this.covered.cover(report);
      },
      log: this.log,
      progress: this.progress,
      cwd: folder?.uri.fsPath,
    };
    return new BotbinConnection(deps, onClosed);
  }

  private stateChanged(state: ServerState): void {
    this.log.info(`server ${state.kind}${"error" in state ? `: ${state.error}` : ""}`);
    if (state.kind !== "running") {
      this.status = undefined;
      this.progress.clear();
    } else {
      this.refreshStatus();
    }
    if (state.kind === "failed") void this.reportFailure(state);
    this.render();
  }

  private async reportFailure(state: Extract<ServerState, { kind: "failed" }>): Promise<void> {
    const commandLine = this.command ? describeCommand(this.command) : "botbin lsp";
    const message = failureMessage(state.reason, commandLine, state.error);
    const choice = await vscode.window.showErrorMessage(message, OPEN_SETTINGS, SHOW_LOG, RESTART);
    if (choice === OPEN_SETTINGS) await openSettings();
    else if (choice === SHOW_LOG) this.log.show();
    else if (choice === RESTART) await this.restart();
  }

  /** A `window/showMessage` of the server, unless a `botbin/error` already covered it (the passphrase box). */
  private serverMessage(type: number, message: string): void {
    if (this.covered.take(message)) return;
    if (type === 1) void vscode.window.showErrorMessage(message);
    else if (type === 2) void vscode.window.showWarningMessage(message);
    else void vscode.window.showInformationMessage(message);
  }

  private async offerPassphrase(error: LockedError): Promise<void> {
    this.log.info(`the memory needs its passphrase (${error.kind}): ${error.message}`);
    const choice = await vscode.window.showErrorMessage(lockedMessage(error), ENTER_PASSPHRASE);
    if (choice === ENTER_PASSPHRASE) await vscode.commands.executeCommand(COMMAND_IDS.setPassphrase);
  }

  private async configChanged(): Promise<void> {
    const before = this.settings;
    this.settings = this.loadSettings();
    if (commandChanged(before, this.settings)) {
      await this.supervisor.restart();
    } else if (serverSettingsChanged(before, this.settings)) {
      await this.supervisor.running
        ?.sendSettings(this.settings, this.passphrase)
        .catch((error: unknown) => this.log.info(String(error)));
    }
  }

  private render(): void {
    this.statusBar.render(
      statusView({
        server: this.supervisor.state,
        progress: this.progress.current,
        status: this.status,
        checkedAt: this.checkedAt,
      }),
    );
  }

  async dispose(): Promise<void> {
    this.log.info("extension deactivated; stopping the language server");
    this.afterSave.cancel();
    for (const disposable of this.disposables) disposable.dispose();
    await this.supervisor.stop();
  }
}
