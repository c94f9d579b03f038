/** Which command line starts `botbin lsp`: a pure function of the settings and the interpreter found. */

/** Where the command came from, in the order tried. */
export type CommandSource = "botbin.server.path" | "botbin.pythonPath" | "Python extension" | "default";

export interface ServerCommand {
  command: string;
  args: string[];
  source: CommandSource;
}

export interface CommandInputs {
  /** `botbin.server.path` ("" when unset): the botbin executable, run as `<path> lsp`. */
  serverPath: string;
  /** `botbin.pythonPath` ("" when unset): run as `<python> -m botbin lsp`. */
  pythonPath: string;
  /** The Python extension's active interpreter, when that extension is installed and has one. */
  activeInterpreter?: string | undefined;
  platform: NodeJS.Platform;
  /** Filesystem path of the first workspace folder, for `${workspaceFolder}`. */
  workspaceFolder?: string | undefined;
  /** The user's home folder, for `~` and `${userHome}`. */
  home?: string | undefined;
}

export function resolveServerCommand(inputs: CommandInputs): ServerCommand {
  const expand = (path: string): string => expandPath(path, inputs);
  if (inputs.serverPath) {
    return { command: expand(inputs.serverPath), args: ["lsp"], source: "botbin.server.path" };
  }
  const python = (command: string, source: CommandSource): ServerCommand => ({
    command,
    args: ["-m", "botbin", "lsp"],
    source,
  });
  if (inputs.pythonPath) return python(expand(inputs.pythonPath), "botbin.pythonPath");
  if (inputs.activeInterpreter) return python(inputs.activeInterpreter, "Python extension");
  return python(inputs.platform === "win32" ? "python" : "python3", "default");
}

/** `~`, `${userHome}` and `${workspaceFolder}` replaced (left as they are when unknown). */
export function expandPath(path: string, where: Pick<CommandInputs, "workspaceFolder" | "home">): string {
  let out = path;
  if (where.home !== undefined) {
    out = out.replace(/^~(?=$|[\\/])/, where.home).replaceAll("${userHome}", where.home);
  }
  if (where.workspaceFolder !== undefined) out = out.replaceAll("${workspaceFolder}", where.workspaceFolder);
  return out;
}

/** The command line as a person would type it, for messages. */
export function describeCommand(command: ServerCommand): string {
  const quote = (word: string): string => (/[\s"']/.test(word) ? JSON.stringify(word) : word);
  return [command.command, ...command.args].map(quote).join(" ");
}
