/**
 * The plugin's settings (saved by Obsidian in data.json), checked on load, and what the server gets of
 * them: botbin.toml keys as `initializationOptions`, in vault mode unless include folders are set (the
 * server itself always leaves out `.obsidian/` and `.trash/`). The passphrase of an encrypted store is no
 * setting: it joins what the server gets, never data.json.
 */
import {
  describeCommand,
  isNumber,
  isRecord,
  isString,
  isStringArray,
  resolveServerCommand,
  withPassphrase,
} from "@botbin/client";
import { EDITOR_SETTINGS, type ServerOptions, type ServerSettings } from "@botbin/protocol";

export { describeCommand };

export interface PluginSettings {
  /** The `botbin` executable, run as `<path> lsp` ("" when unset). */
  serverPath: string;
  /** A Python with botbin installed, run as `<python> -m botbin lsp` ("" when unset). */
  pythonPath: string;
  /** Folders or globs of tracked notes (empty: the whole vault). */
  include: string[];
  /** Folders or globs never tracked. */
  exclude: string[];
  /** Hybrid weight of meaning against keywords, 0-1; null keeps botbin.toml's value. */
  alpha: number | null;
  /** Hits per search, 1-1000; null keeps botbin.toml's value. */
  topK: number | null;
  /** Tags added to every "Remember selection", without `#`. */
  rememberTags: string[];
  /** Quiet time after typing before the search modal asks the server, in milliseconds. */
  searchDebounceMs: number;
}

export const DEFAULT_SETTINGS: PluginSettings = {
  serverPath: "",
  pythonPath: "",
  include: [],
  exclude: [],
  alpha: null,
  topK: null,
  rememberTags: [],
  searchDebounceMs: 200,
};

export interface LoadedSettings {
  settings: PluginSettings;
  /** One line per saved value of the wrong type or out of range (it falls back to its default). */
  problems: string[];
}

/** Settings from whatever `loadData()` returned (null on first run); unknown keys are dropped. */
export function loadSettings(saved: unknown): LoadedSettings {
  const problems: string[] = [];
  const data = isRecord(saved) ? saved : {};
  const take = <K extends keyof PluginSettings>(
    key: K,
    check: (v: unknown) => v is PluginSettings[K],
    expected: string,
  ): PluginSettings[K] => {
    const value = data[key];
    if (value === undefined) return DEFAULT_SETTINGS[key];
    if (check(value)) return value;
    problems.push(`${key} must be ${expected}; using the default`);
    return DEFAULT_SETTINGS[key];
  };
  return {
    settings: {
      serverPath: take("serverPath", isString, "a path").trim(),
      pythonPath: take("pythonPath", isString, "a path").trim(),
      include: take("include", isStringArray, "a list of globs"),
      exclude: take("exclude", isStringArray, "a list of globs"),
      alpha: take("alpha", (v): v is number | null => v === null || within(v, EDITOR_SETTINGS.alpha), bounds("alpha")),
      topK: take("topK", (v): v is number | null => v === null || within(v, EDITOR_SETTINGS.top_k), bounds("top_k")),
      rememberTags: take("rememberTags", isStringArray, "a list of tags"),
      searchDebounceMs: take("searchDebounceMs", (v): v is number => isNumber(v) && v >= 0, "milliseconds"),
    },
    problems,
  };
}

/** True for a number within a server setting's bounds (a whole one for an integer setting). */
function within(v: unknown, setting: { type: string; minimum: number; maximum: number }): v is number {
  return (
    isNumber(v) && v >= setting.minimum && v <= setting.maximum && (setting.type !== "integer" || Number.isInteger(v))
  );
}

/** "0-1": the bounds of a server setting, as a problem names them. */
function bounds(key: "alpha" | "top_k"): string {
  return `${EDITOR_SETTINGS[key].minimum}-${EDITOR_SETTINGS[key].maximum}`;
}

/**
 * Globs from the settings text box: one per line or comma. A bare folder (`Projects`, `Projects/`) means
 * every note below it (`Projects/**`); a path with a glob character or ending in `.md` is kept as it is.
 */
export function parseGlobs(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((s) => s.trim().replace(/^\.?\//, ""))
    .filter(Boolean)
    .map((s) => (/[*?[\]{}]/.test(s) || s.endsWith(".md") ? s : `${s.replace(/\/+$/, "")}/**`));
}

/** Tags from the settings text box: separated by spaces or commas, `#` optional. */
export function parseTags(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((t) => t.replace(/^#+/, ""))
    .filter(Boolean);
}

/** A number setting from its text box: "" is null (unset); anything else must parse. */
export function parseOptionalNumber(text: string): number | null | undefined {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

/** Where Remember selection writes (`memory/YYYY-MM-DD.md`): always tracked, so remembered text is found. */
export const REMEMBER_GLOB = "memory/**";

/**
 * `initializationOptions` of `initialize`: vault mode (every note) when no include folders are set, else
 * those folders plus `memory/` (the server's vault mode would ignore `include`); the keys the user set; and
 * the passphrase of an encrypted store when the user gave one.
 */
export function initializationOptions(settings: PluginSettings, passphrase?: string): ServerOptions {
  return withPassphrase(serverSettings(settings), passphrase);
}

function serverSettings(settings: PluginSettings): ServerSettings {
  const options: ServerSettings = { vault: settings.include.length === 0 };
  if (settings.include.length > 0) options.include = [...new Set([...settings.include, REMEMBER_GLOB])];
  if (settings.exclude.length > 0) options.exclude = [...settings.exclude];
  if (settings.alpha !== null) options.alpha = settings.alpha;
  if (settings.topK !== null) options.top_k = settings.topK;
  return options;
}

/** Params of `workspace/didChangeConfiguration` after a server setting (or the passphrase) changed. */
export function configurationChange(
  settings: PluginSettings,
  passphrase?: string,
): { settings: { botbin: ServerOptions } } {
  return { settings: { botbin: initializationOptions(settings, passphrase) } };
}

/** True when the server must be started again: its command line changed. */
export function commandChanged(before: PluginSettings, after: PluginSettings): boolean {
  return before.serverPath !== after.serverPath || before.pythonPath !== after.pythonPath;
}

/** True when the server must be told: a botbin.toml key changed. */
export function serverSettingsChanged(before: PluginSettings, after: PluginSettings): boolean {
  return JSON.stringify(serverSettings(before)) !== JSON.stringify(serverSettings(after));
}

export interface ServerCommand {
  command: string;
  args: string[];
}

/** `<serverPath> lsp`, else `<pythonPath> -m botbin lsp`, else `python3 -m botbin lsp` (@botbin/client's rule; `~`
 * is expanded). */
export function serverCommand(settings: PluginSettings, platform: string, home?: string): ServerCommand {
  const { command, args } = resolveServerCommand({ ...settings, platform, home });
  return { command, args };
}
