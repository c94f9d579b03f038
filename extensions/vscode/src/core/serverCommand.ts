/** Which command line starts `botbin lsp` (@botbin/client's rule), each source named by the VS Code setting. */
import { type CommandInputs, resolveServerCommand as resolve, type ServerCommand as Command } from "@botbin/client";

export { describeCommand, expandPath } from "@botbin/client";
export type { CommandInputs };

/** Where the command came from, in the order tried, as the log names it. */
export type CommandSource = "botbin.server.path" | "botbin.pythonPath" | "Python extension" | "default";
export type ServerCommand = Command<CommandSource>;

const SOURCES = {
  serverPath: "botbin.server.path",
  pythonPath: "botbin.pythonPath",
  interpreter: "Python extension",
  default: "default",
} as const;

export function resolveServerCommand(inputs: CommandInputs): ServerCommand {
  const command = resolve(inputs);
  return { ...command, source: SOURCES[command.source] };
}
