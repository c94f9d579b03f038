/** Times for people: "just now", "2 min ago", "3 h ago", "5 days ago". */

/** How long before `now` (ms since the epoch) the ISO 8601 time `iso` was; "never" for null, the raw text when unparsable. */
export function relativeTime(iso: string | null | undefined, now: number): string {
  if (!iso) return "never";
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 45) return "just now";
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.round(min / 60);
  if (h < 24) return `${h} h ago`;
  const days = Math.round(h / 24);
  return `${days} day${days === 1 ? "" : "s"} ago`;
}

/** The later of two ISO 8601 times (either may be missing). */
export function later(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a || Number.isNaN(Date.parse(a))) return b ?? null;
  if (!b || Number.isNaN(Date.parse(b))) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}
