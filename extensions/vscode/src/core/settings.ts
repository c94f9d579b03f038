/**
 * The extension's settings (`botbin.*`), read through a getter so that this module needs no vscode, and
 * what the server gets of them: botbin.toml keys as initializationOptions and didChangeConfiguration.
 */
import { isBoolean, isNumber, isString, isStringArray, withPassphrase } from "@botbin/client";
import { EDITOR_SETTINGS, type ServerOptions, type ServerSettings } from "@botbin/protocol";

/** Settings of the extension, each already type-checked; unset server keys are left out. */
export interface ExtensionSettings {
  /** `botbin.server.path`: the `botbin` executable ("" when unset). */
  serverPath: string;
  /** `botbin.pythonPath`: a Python with botbin installed ("" when unset). */
  pythonPath: string;
  /** Keys the user set for the server, named as in botbin.toml. */
  server: ServerSettings;
  /** `botbin.hover.enabled`: show related memories on hover. */
  hoverEnabled: boolean;
  /** `botbin.search.debounceMs`: quiet time after typing before Search Memories queries, in milliseconds. */
  searchDebounceMs: number;
}

/** Reads one setting below the `botbin` section (`"server.path"`); undefined or null when unset. */
export type SettingGetter = (key: string) => unknown;

/** Every key this extension reads, below `botbin.` (package.json contributes exactly these, and trace.server): its
 * own, and the server settings an editor offers (EDITOR_SETTINGS, generated with package.json's entries for them). */
export const SETTING_KEYS = [
  "server.path",
  "pythonPath",
  ...Object.values(EDITOR_SETTINGS).map((setting) => setting.editorKey),
  "hover.enabled",
  "search.debounceMs",
] as const;

/** How each kind of server setting is checked, and what a wrong value is told it must be. */
const CHECKS = {
  globs: { check: isStringArray, expected: "a list of globs" },
  boolean: { check: isBoolean, expected: "true or false" },
  integer: { check: isNumber, expected: "a number" },
  number: { check: isNumber, expected: "a number" },
} as const;

export const DEFAULT_SEARCH_DEBOUNCE_MS = 200;

export interface ReadSettings {
  settings: ExtensionSettings;
  /** One line per setting of the wrong type (it is ignored). */
  problems: string[];
}

export function readSettings(get: SettingGetter): ReadSettings {
  const problems: string[] = [];
  const typed = <T>(key: string, check: (v: unknown) => v is T, expected: string): T | undefined => {
    const value = get(key);
    if (value === undefined || value === null) return undefined;
    if (check(value)) return value;
    problems.push(`botbin.${key} must be ${expected}; ignored`);
    return undefined;
  };
  const server: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(EDITOR_SETTINGS)) {
    const { check, expected } = CHECKS[setting.type];
    const value = typed<unknown>(setting.editorKey, check, expected);
    if (value !== undefined) server[key] = value; // range checks are the server's: it names the key and the reason
  }
  const debounceMs = typed("search.debounceMs", isNumber, "a number of milliseconds");
  return {
    settings: {
      serverPath: (typed("server.path", isString, "a path") ?? "").trim(),
      pythonPath: (typed("pythonPath", isString, "a path") ?? "").trim(),
      server: server as ServerSettings,
      hoverEnabled: typed("hover.enabled", isBoolean, "true or false") ?? true,
      searchDebounceMs: Math.max(0, debounceMs ?? DEFAULT_SEARCH_DEBOUNCE_MS),
    },
    problems,
  };
}

/**
 * `initializationOptions` of `initialize`: the botbin.toml keys the user set, and the passphrase of an
 * encrypted store when one was given (from secret storage, never from the settings).
 */
export function initializationOptions(settings: ExtensionSettings, passphrase?: string): ServerOptions {
  return withPassphrase(settings.server, passphrase);
}

/** Params of `workspace/didChangeConfiguration`; a key left out falls back to botbin.toml. */
export function configurationChange(
  settings: ExtensionSettings,
  passphrase?: string,
): { settings: { botbin: ServerOptions } } {
  return { settings: { botbin: withPassphrase(settings.server, passphrase) } };
}

/** True when the server must be started again: its command line changed. */
export function commandChanged(before: ExtensionSettings, after: ExtensionSettings): boolean {
  return before.serverPath !== after.serverPath || before.pythonPath !== after.pythonPath;
}

/** True when the server must be told: a botbin.toml key changed. */
export function serverSettingsChanged(before: ExtensionSettings, after: ExtensionSettings): boolean {
  return JSON.stringify(before.server) !== JSON.stringify(after.server);
}

/**
 * The command (and its argument) that opens the Settings editor where botbin's settings apply. In a remote
 * window (code-server, Remote-SSH, WSL, Dev Containers: `remoteName` set) the executable settings are
 * `machine-overridable` and greyed out on the User tab, so the Remote tab opens; locally, the User tab.
 */
export function settingsEditor(remoteName: string | undefined, query = "@ext:botbin.botbin"): [string, unknown] {
  return remoteName ? ["workbench.action.openRemoteSettings", { query }] : ["workbench.action.openSettings", query];
}
