// OpenClaw plugin entry: registers the botbin context engine (select it with plugins.slots.contextEngine = "botbin").
// Lifecycle only; the engine is in engine.ts.
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompactionStore } from "./compaction";
import { BotbinEngine, ENGINE_ID } from "./engine";
import type { ContextEngineFactoryContext, PluginApi, RuntimeCompaction } from "./host";
import { MemoryLink } from "./link";
import { parseSettings } from "./settings";
import { resolvedPath, socketPath } from "./socketPath";
import { Spool } from "./spool";

async function runtimeCompaction(): Promise<RuntimeCompaction | undefined> {
  // resolved by OpenClaw's plugin loader to the running host's SDK (a variable keeps esbuild from bundling it)
  const sdk = "openclaw/plugin-sdk/core";
  const core = (await import(sdk)) as { delegateCompactionToRuntime?: RuntimeCompaction };
  return core.delegateCompactionToRuntime;
}

export function createEngine(api: PluginApi, ctx: ContextEngineFactoryContext): BotbinEngine {
  const { settings, warnings } = parseSettings(api.pluginConfig, ctx.workspaceDir ?? process.cwd());
  warnings.forEach((w) => api.logger.warn(w));
  const workspace = resolvedPath(settings.workspace);
  const key = createHash("sha256").update(workspace, "utf8").digest("hex").slice(0, 16);
  const stateDir = join(ctx.agentDir ?? join(tmpdir(), "openclaw-botbin"), "botbin", key);
  const link = new MemoryLink({
    socket: socketPath(workspace),
    settings: { ...settings, workspace },
    stateDir,
    logger: api.logger,
  });
  return new BotbinEngine({
    settings: { ...settings, workspace },
    link,
    spool: new Spool(join(stateDir, "spool.jsonl")),
    compactions: new CompactionStore(join(stateDir, "compactions.json")),
    logger: api.logger,
    runtimeCompaction,
  });
}

export default {
  id: ENGINE_ID,
  name: "botbin",
  description:
    "botbin memory as OpenClaw's context engine: your notes' rules and recalled memories in every model call",
  kind: "context-engine",
  register(api: PluginApi): void {
    api.registerContextEngine(ENGINE_ID, (ctx) => createEngine(api, ctx));
  },
};
