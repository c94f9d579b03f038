/**
 * botbin for Obsidian: a thin desktop client of `botbin lsp`. Loading wires settings, the supervised server,
 * the status bar, the search modal, the related pane, the commands and the vault events; unloading stops
 * the server. Indexing, search and ranking all run in the server process, never in Obsidian's. The
 * passphrase of an encrypted store is held in memory for the session only (never saved with the settings).
 */
import { homedir } from "node:os";
import { FileSystemAdapter, Notice, Plugin } from "obsidian";
import { systemClock } from "@botbin/client";
import type { Hit } from "@botbin/protocol";
import { uriMaker } from "./core/places";
import { RelatedTracker } from "./core/relatedTracker";
import { Session } from "./core/session";
import { lockedMessage } from "./core/statusModel";
import {
  commandChanged,
  configurationChange,
  DEFAULT_SETTINGS,
  describeCommand,
  initializationOptions,
  loadSettings,
  type PluginSettings,
  serverCommand,
  serverSettingsChanged,
} from "./core/settings";
import { BotbinConnection, type ConnectionDeps } from "./node/connection";
import { registerCommands } from "./obsidian/commands";
import { openHit } from "./obsidian/openHit";
import { PassphraseModal } from "./obsidian/passphraseModal";
import {
  RELATED_VIEW_TYPE,
  RelatedView,
  relatedPaneOpen,
  renderRelatedPanes,
  revealRelatedPane,
} from "./obsidian/relatedView";
import { openSearchModal, type SearchModal } from "./obsidian/searchModal";
import { BotbinSettingTab } from "./obsidian/settingsTab";
import { StatusBar } from "./obsidian/statusBar";
import { followCursor, forwardVaultEvents } from "./obsidian/wiring";

/** How long the cursor rests before the related pane asks the server, in milliseconds. */
const RELATED_REST_MS = 400;
const MESSAGE_ERROR = 1;
const MESSAGE_WARNING = 2;
/** How long the "enter its passphrase" Notice stays, in milliseconds. */
const LOCKED_NOTICE_MS = 20_000;

export default class BotbinPlugin extends Plugin {
  settings: PluginSettings = DEFAULT_SETTINGS;
  session: Session<BotbinConnection> | undefined;
  related: RelatedTracker | undefined;
  /** Starts one server; tests replace it with a fake. */
  connectServer = (deps: ConnectionDeps, onClosed: () => void): BotbinConnection =>
    new BotbinConnection(deps, onClosed);
  /** The passphrase of an encrypted store, from Unlock encrypted memory: this session only, never saved. */
  private passphrase: string | undefined;

  override async onload(): Promise<void> {
    const { settings, problems } = loadSettings(await this.loadData());
    this.settings = settings;
    if (problems.length > 0) new Notice(`botbin settings: ${problems.join("; ")}`);
    const adapter = this.app.vault.adapter;
    if (!(adapter instanceof FileSystemAdapter)) {
      new Notice("botbin needs a vault on disk (Obsidian desktop).");
      return;
    }
    const vaultPath = adapter.getBasePath();
    const uriOf = uriMaker(vaultPath);
    const command = (): ReturnType<typeof serverCommand> => serverCommand(this.settings, process.platform, homedir());
    const statusBar = new StatusBar(this.addStatusBarItem());
    const open = this.openNote;

    const session = (this.session = new Session<BotbinConnection>({
      connect: async (onClosed, progress) =>
        this.connectServer(
          {
            command: command(),
            vaultPath,
            vaultName: this.app.vault.getName(),
            initializationOptions: initializationOptions(this.settings, this.passphrase),
            progress,
            onMessage: (type, message) => {
              if (this.session?.serverMessage(message)) return;
              if (type === MESSAGE_ERROR || type === MESSAGE_WARNING) new Notice(message);
            },
            onError: (report) => this.session?.serverError(report),
            log: (line) => console.debug(`[botbin] ${line}`),
          },
          onClosed,
        ),
      commandLine: () => describeCommand(command()),
      uriOf,
      clock: systemClock,
      render: (view) => statusBar.render(view),
      notice: (message) => new Notice(message, 10_000),
      onIndexChanged: () => this.related?.refresh(),
      offerPassphrase: (reason) => {
        const notice = new Notice(lockedMessage(reason), LOCKED_NOTICE_MS);
        notice.noticeEl.addEventListener("click", () => this.openUnlock());
      },
    }));
    const related = (this.related = new RelatedTracker({
      related: (place, signal) => {
        const api = session.api;
        if (!api) return Promise.reject(new Error("the language server is not running"));
        return api.related({ uri: place.uri, position: place.position }, signal);
      },
      render: (state) => renderRelatedPanes(this.app.workspace, state),
      visible: () => relatedPaneOpen(this.app.workspace),
      clock: systemClock,
      restMs: RELATED_REST_MS,
    }));

    this.registerView(
      RELATED_VIEW_TYPE,
      (leaf) => new RelatedView(leaf, { current: () => related.state, opened: () => related.refresh(), open }),
    );
    registerCommands(this, {
      session,
      openSearch: () => this.openSearch(),
      openRelatedPane: () => this.openRelatedPane(),
      rememberTags: () => this.settings.rememberTags,
      unlock: () => this.openUnlock(),
    });
    this.addSettingTab(new BotbinSettingTab(this.app, this, this));
    followCursor(this, uriOf, (place) => related.moved(place));
    this.app.workspace.onLayoutReady(() => forwardVaultEvents(this, session.vault));
    session.start();
  }

  override onunload(): void {
    this.related?.dispose();
    void this.session?.dispose();
  }

  /** Saves new settings; a new command line restarts the server, new server keys are sent to it. */
  async updateSettings(next: PluginSettings): Promise<void> {
    const before = this.settings;
    this.settings = next;
    await this.saveData(next);
    await this.session?.settingsChanged({
      command: commandChanged(before, next),
      server: serverSettingsChanged(before, next) ? configurationChange(next, this.passphrase) : undefined,
    });
  }

  /** The unlock modal: the passphrase it takes goes to the server, and stays in memory for this session. */
  openUnlock(): PassphraseModal {
    const modal = new PassphraseModal(this.app, (passphrase) => this.unlock(passphrase));
    modal.open();
    return modal;
  }

  /** Opens the encrypted store with `passphrase` (sent with the settings; a failed server starts again). */
  async unlock(passphrase: string): Promise<void> {
    this.passphrase = passphrase;
    new Notice("botbin: opening the encrypted memory…");
    await this.session?.unlocked(configurationChange(this.settings, passphrase));
  }

  /** Opens a hit's note at its lines. */
  readonly openNote = (hit: Hit): Promise<void> => openHit(this.app, hit);

  /** The search modal (undefined, after a Notice, when the server is not running). */
  openSearch(): SearchModal | undefined {
    return this.session && openSearchModal(this.app, this.session, this.settings.searchDebounceMs, this.openNote);
  }

  openRelatedPane(): Promise<void> {
    return revealRelatedPane(this.app.workspace);
  }
}
