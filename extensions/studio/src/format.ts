// How the studio writes numbers, lines and dates.
import { relativeTime } from "@botbin/client/src/when";

/** 0-based ``start`` .. ``end`` (exclusive) as editors show lines: ``L3`` or ``L3-5``. */
export function lines(start: number, end: number): string {
  return end - start <= 1 ? `L${start + 1}` : `L${start + 1}-${end}`;
}

/** A note's place: ``path:L3-5``. */
export function place(path: string, start: number, end: number): string {
  return `${path}:${lines(start, end)}`;
}

/** A score or share with three decimals (``-0.000`` shown as ``0.000``). */
export function score(x: number): string {
  const text = x.toFixed(3);
  return text === "-0.000" ? "0.000" : text;
}

/** Points added to a score, signed: ``+0.080``, ``-0.012``. */
export function points(x: number): string {
  const text = score(x);
  return x > 0 && text !== "0.000" ? `+${text}` : text;
}

/** Days in words: ``now``, ``in 3.5 days``, ``in 2.1 years``, ``never``. */
export function days(d: number | null): string {
  if (d === null) return "never";
  if (d <= 0) return "now";
  if (d < 1) return `in ${Math.max(1, Math.round(d * 24))} h`;
  if (d < 365) return `in ${d < 10 ? d.toFixed(1) : Math.round(d)} days`;
  return `in ${(d / 365).toFixed(1)} years`;
}

/** An ISO 8601 time as ``2026-11-19 14:05 UTC (3 h ago)``, or ``never``; ``now`` in ms since the epoch. */
export function when(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return "never";
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${at.toISOString().slice(0, 16).replace("T", " ")} UTC (${relativeTime(iso, now)})`;
}

/** What each score part is called on screen. */
export const PART_NAMES: Record<string, string> = {
  cosine: "cosine",
  keywords: "BM25 keywords",
  note: "note",
  neighbours: "neighbours",
  bound: "bound",
  decay: "decay",
  agent: "agent recency",
};

/** Why a context candidate was left out, in words. */
export const CUT_REASONS: Record<string, string> = {
  duplicate: "repeats a passage already chosen",
  budget: "over the token budget",
  share: "over this tier's share of the budget",
  after_cut: "after an entry that was left out (this tier keeps a prefix)",
};

/** The tiers of a context, in words. */
export const TIER_TITLES: Record<string, string> = {
  hard: "Hard rules (always all)",
  guidance: "Guidance relevant to the task",
  soft: "Preferences (soft rules)",
  recent: "Recent notes, verbatim",
  recalled: "Recalled memories",
};
