/** Which command line starts `botbin lsp`: a pure function of an editor's settings and the interpreter it found. */

/** Where the command came from, in the order tried. */
export type CommandSource = "serverPath" | "pythonPath" | "interpreter" | "default";

export interface ServerCommand<S extends string = CommandSource> {
  command: string;
  args: string[];
  source: S;
}

export interface CommandInputs {
  /** The botbin executable ("" when unset), run as `<path> lsp`. */
  serverPath: string;
  /** A Python with botbin installed ("" when unset), run as `<python> -m botbin lsp`. */
  pythonPath: string;
  /** The editor's active interpreter, when it knows one (VS Code's Python extension). */
  activeInterpreter?: string | undefined;
  platform: NodeJS.Platform | string;
  /** Filesystem path of the first workspace folder, for `${workspaceFolder}`. */
  workspaceFolder?: string | undefined;
  /** The user's home folder, for `~` and `${userHome}`. */
  home?: string | undefined;
}

/** `<serverPath> lsp`, else `<pythonPath> -m botbin lsp`, else the active interpreter's, else `python3` (`python`
 * on Windows); paths expanded (expandPath). */
export function resolveServerCommand(inputs: CommandInputs): ServerCommand {
  const expand = (path: string): string => expandPath(path, inputs);
  if (inputs.serverPath) return { command: expand(inputs.serverPath), args: ["lsp"], source: "serverPath" };
  const python = (command: string, source: CommandSource): ServerCommand => ({
    command,
    args: ["-m", "botbin", "lsp"],
    source,
  });
  if (inputs.pythonPath) return python(expand(inputs.pythonPath), "pythonPath");
  if (inputs.activeInterpreter) return python(inputs.activeInterpreter, "interpreter");
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
export function describeCommand(command: { command: string; args: string[]; source?: string }): string {
  const quote = (word: string): string => (/[\s"']/.test(word) ? JSON.stringify(word) : word);
  return [command.command, ...command.args].map(quote).join(" ");
}
