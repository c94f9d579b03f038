/** Type guards for values read from an editor's settings or saved data (any JSON), shared by every front end. */

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
export function isString(v: unknown): v is string {
  return typeof v === "string";
}
export function isBoolean(v: unknown): v is boolean {
  return typeof v === "boolean";
}
/** A finite number (no NaN, no Infinity). */
export function isNumber(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}
export function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every(isString);
}
