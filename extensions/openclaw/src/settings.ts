// The plugin's settings (`plugins.entries.botbin.config` in openclaw.json), checked once: a bad value falls back to
// its default with one warning naming the key, so a typo never costs the host's turn.

export interface Settings {
  /** The botbin executable (a path, or a name looked up on PATH). */
  botbinPath: string;
  /** The botbin workspace (notes folder); default: the OpenClaw agent's workspace. */
  workspace: string;
  /** The most tokens the memory block (systemPromptAddition) may use, in the host's count (chars / 4). */
  budgetTokens: number;
  /** Longest wait for `assemble` before the turn goes on without memory, in milliseconds. */
  assembleTimeoutMs: number;
  /** Longest wait for `ingest`, in milliseconds (turns not acknowledged stay in the spool). */
  ingestTimeoutMs: number;
  /** Longest wait for botbin's summary of older messages, in milliseconds (then OpenClaw's compaction runs). */
  compactTimeoutMs: number;
  /** Start `botbin serve` for the workspace when no server answers. */
  startServer: boolean;
  /** A server the engine started stops after this long without a request, in seconds (0: never). */
  serverIdleExitS: number;
  /** Whose memory the turns go to (the soul file's user); default: the server's ("user"). */
  user: string | undefined;
  /** Under this confidence (cosine of summary to messages) botbin's summary is not used; OpenClaw compacts. */
  minCompactionConfidence: number;
  /** Messages kept verbatim at the end when compacting. */
  keepRecentMessages: number;
}

export const DEFAULTS: Omit<Settings, "workspace"> = {
  botbinPath: "botbin",
  budgetTokens: 1500,
  assembleTimeoutMs: 1500,
  ingestTimeoutMs: 5000,
  compactTimeoutMs: 15000,
  startServer: true,
  serverIdleExitS: 3600,
  user: undefined,
  minCompactionConfidence: 0.6,
  keepRecentMessages: 6,
};

export interface ParsedSettings {
  settings: Settings;
  /** One line per key that was ignored. */
  warnings: string[];
}

type Check = (value: unknown) => boolean;
const isText: Check = (v) => typeof v === "string" && v.trim().length > 0;
const isBool: Check = (v) => typeof v === "boolean";
const intIn =
  (lo: number, hi: number): Check =>
  (v) =>
    typeof v === "number" && Number.isInteger(v) && v >= lo && v <= hi;
const numIn =
  (lo: number, hi: number): Check =>
  (v) =>
    typeof v === "number" && Number.isFinite(v) && v >= lo && v <= hi;

const CHECKS: Record<keyof Settings, [Check, string]> = {
  botbinPath: [isText, "a non-empty path"],
  workspace: [isText, "a folder path"],
  budgetTokens: [intIn(1, 1_000_000), "an integer from 1"],
  assembleTimeoutMs: [intIn(10, 600_000), "milliseconds from 10"],
  ingestTimeoutMs: [intIn(10, 600_000), "milliseconds from 10"],
  compactTimeoutMs: [intIn(10, 600_000), "milliseconds from 10"],
  startServer: [isBool, "true or false"],
  serverIdleExitS: [intIn(0, 31_536_000), "seconds from 0"],
  user: [isText, "a non-empty name"],
  minCompactionConfidence: [numIn(-1, 1), "a number from -1 to 1"],
  keepRecentMessages: [intIn(0, 10_000), "an integer from 0"],
};

/** Settings from the plugin's config object; `defaultWorkspace` is the agent's workspace (or the current folder). */
export function parseSettings(raw: unknown, defaultWorkspace: string): ParsedSettings {
  const given = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const settings: Settings = { ...DEFAULTS, workspace: defaultWorkspace };
  const warnings: string[] = [];
  for (const [key, value] of Object.entries(given)) {
    const entry = CHECKS[key as keyof Settings];
    if (entry === undefined) {
      warnings.push(`botbin: unknown setting "${key}" ignored`);
      continue;
    }
    if (value === undefined || value === null) continue;
    const [ok, expected] = entry;
    if (!ok(value)) {
      warnings.push(`botbin: setting "${key}" must be ${expected}, not ${JSON.stringify(value)}; using the default`);
      continue;
    }
    (settings as unknown as Record<string, unknown>)[key] = value;
  }
  return { settings, warnings };
}
