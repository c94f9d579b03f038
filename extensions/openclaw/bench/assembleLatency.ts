// The engine's assemble as OpenClaw calls it (extensions/openclaw, its real socket client), timed against a running
// botbin server: bundled and run by bench/bench_openclaw.py (typechecked with the package). Prints one JSON object.
import { performance } from "node:perf_hooks";
import { createEngine } from "../src/index";
import type { PluginApi } from "../src/host";

interface Job {
  workspace: string;
  agentDir: string;
  prompts: string[];
  budgetTokens: number;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[process.argv.length - 1]!) as Job;
  const lines: string[] = [];
  const logger = {
    info: (m: string) => lines.push(m),
    warn: (m: string) => lines.push(m),
    error: (m: string) => lines.push(m),
  };
  const api: PluginApi = {
    id: "botbin",
    pluginConfig: {
      workspace: job.workspace,
      startServer: false,
      budgetTokens: job.budgetTokens,
    },
    logger,
    registerContextEngine: () => undefined,
  };
  const engine = createEngine(api, {
    agentDir: job.agentDir,
    workspaceDir: job.workspace,
  });
  const runs: { ms: number; chars: number; addition: string }[] = [];
  for (const [i, prompt] of job.prompts.entries()) {
    const messages = [
      {
        role: "user",
        content: prompt,
        idempotencyKey: `bench-${i}:user`,
        timestamp: Date.now(),
      },
    ];
    const start = performance.now();
    const out = await engine.assemble({
      sessionId: "bench",
      messages,
      tokenBudget: 100_000,
      prompt,
    });
    const addition = out.systemPromptAddition ?? "";
    runs.push({
      ms: performance.now() - start,
      chars: addition.length,
      addition,
    });
  }
  process.stdout.write(JSON.stringify({ runs, log: lines, node: process.version }));
}

void main();
