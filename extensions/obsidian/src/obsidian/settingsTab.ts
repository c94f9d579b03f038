/**
 * Settings → botbin. Edits go into a draft that is saved and applied when the tab closes, so typing a
 * path does not restart the server on every keystroke.
 */
import { type App, type Plugin, PluginSettingTab, Setting } from "obsidian";
import { parseGlobs, parseOptionalNumber, parseTags, type PluginSettings } from "../core/settings";

export interface SettingsHost {
  readonly settings: PluginSettings;
  /** Saves new settings and applies them (restart or didChangeConfiguration as needed). */
  updateSettings(next: PluginSettings): Promise<void>;
}

export class BotbinSettingTab extends PluginSettingTab {
  private draft: PluginSettings | undefined;

  constructor(
    app: App,
    plugin: Plugin,
    private readonly host: SettingsHost,
  ) {
    super(app, plugin);
  }

  display(): void {
    const draft = (this.draft = structuredClone(this.host.settings));
    const { containerEl } = this;
    containerEl.empty();
    const text = (name: string, desc: string, value: string, placeholder: string, set: (v: string) => void): Setting =>
      new Setting(containerEl)
        .setName(name)
        .setDesc(desc)
        .addText((t) => t.setPlaceholder(placeholder).setValue(value).onChange(set));
    const area = (name: string, desc: string, value: string[], set: (v: string[]) => void): Setting =>
      new Setting(containerEl)
        .setName(name)
        .setDesc(desc)
        .addTextArea((t) =>
          t
            .setPlaceholder("one per line")
            .setValue(value.join("\n"))
            .onChange((v) => set(parseGlobs(v))),
        );
    text(
      "botbin executable",
      "Path to `botbin`; the plugin runs `<path> lsp`. Leave empty to use the Python below.",
      draft.serverPath,
      "~/.local/bin/botbin",
      (v) => (draft.serverPath = v.trim()),
    );
    text(
      "Python",
      "A Python with botbin installed; runs `<python> -m botbin lsp`. Empty: python3.",
      draft.pythonPath,
      "python3",
      (v) => (draft.pythonPath = v.trim()),
    );
    area(
      "Include folders",
      "Folders or globs to index (empty: the whole vault). memory/, where Remember selection writes, is always indexed.",
      draft.include,
      (v) => (draft.include = v),
    );
    area(
      "Exclude folders",
      "Folders or globs never indexed (.obsidian and .trash never are).",
      draft.exclude,
      (v) => (draft.exclude = v),
    );
    text(
      "Alpha",
      "Weight of meaning against keywords, 0-1 (empty: botbin.toml, else 0.7).",
      numberText(draft.alpha),
      "0.7",
      (v) => {
        const n = parseOptionalNumber(v);
        if (n === null || (n !== undefined && n >= 0 && n <= 1)) draft.alpha = n;
      },
    );
    text("Top-k", "Hits per search, 1-1000 (empty: botbin.toml, else 10).", numberText(draft.topK), "10", (v) => {
      const n = parseOptionalNumber(v);
      if (n === null || (n !== undefined && Number.isInteger(n) && n >= 1 && n <= 1000)) draft.topK = n;
    });
    text(
      "Remember tags",
      'Tags added to every "Remember selection" (space-separated).',
      draft.rememberTags.join(" "),
      "#inbox",
      (v) => {
        draft.rememberTags = parseTags(v);
      },
    );
  }

  override hide(): void {
    super.hide();
    const draft = this.draft;
    this.draft = undefined;
    if (draft && JSON.stringify(draft) !== JSON.stringify(this.host.settings)) void this.host.updateSettings(draft);
  }
}

function numberText(value: number | null): string {
  return value === null ? "" : String(value);
}
