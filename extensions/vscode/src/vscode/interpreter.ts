/** The Python extension's active interpreter, when that extension is installed (else undefined). */
import * as vscode from "vscode";

const PYTHON_EXTENSION = "ms-python.python";

/** The parts of the Python extension's API used here (newer `environments`, older `settings`). */
interface PythonApi {
  environments?: { getActiveEnvironmentPath?(resource?: vscode.Uri): { path?: string } | undefined };
  settings?: { getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined };
}

/** Waits at most `timeoutMs` for the Python extension to activate; any failure counts as "no interpreter". */
export async function activeInterpreter(
  resource: vscode.Uri | undefined,
  timeoutMs = 5000,
): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
  if (!extension) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await withTimeout(extension.activate(), timeoutMs);
    const path = api?.environments?.getActiveEnvironmentPath?.(resource)?.path;
    return path || api?.settings?.getExecutionDetails?.(resource)?.execCommand?.[0] || undefined;
  } catch {
    return undefined;
  }
}

function withTimeout<T>(promise: Thenable<T>, timeoutMs: number): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}
