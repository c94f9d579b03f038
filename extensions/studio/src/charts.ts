// The geometry of the studio's small charts, pure (no DOM): a hit's score bar, the context's token bar, a memo's
// retention curve. The views draw what these return.

/** One piece of a horizontal bar, in percent of the bar's width. */
export interface Segment {
  name: string;
  /** Where it starts, 0-100. */
  start: number;
  /** Its width, 0-100. */
  width: number;
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/**
 * The score bar of a hit: its positive parts side by side from the left on a scale of 0-``scale`` (a score of 1
 * by default), and its negative parts (decay) as a cut-back ``loss`` at the end of the positive run.
 */
export function scoreSegments(
  parts: readonly { name: string; points: number }[],
  scale = 1,
): { segments: Segment[]; loss: Segment | null } {
  const unit = scale > 0 ? 100 / scale : 0;
  const segments: Segment[] = [];
  let at = 0;
  for (const part of parts) {
    if (part.points <= 0) continue;
    const width = clamp(part.points * unit, 0, 100 - at);
    if (width > 0) segments.push({ name: part.name, start: at, width });
    at += width;
  }
  const lost = parts.reduce((sum, p) => sum + (p.points < 0 ? -p.points : 0), 0) * unit;
  const width = clamp(lost, 0, at);
  return { segments, loss: width > 0 ? { name: "loss", start: at - width, width } : null };
}

/** The token bar of a context: each tier's tokens as a share of the budget, in tier order. */
export function tokenSegments(tiers: readonly { name: string; tokens: number }[], budget: number): Segment[] {
  const unit = budget > 0 ? 100 / budget : 0;
  const out: Segment[] = [];
  let at = 0;
  for (const tier of tiers) {
    const width = clamp(tier.tokens * unit, 0, 100 - at);
    if (width > 0) out.push({ name: tier.name, start: at, width });
    at += width;
  }
  return out;
}

/** A retention curve laid out in a ``width`` x ``height`` box (y grows downwards, score 1 at the top). */
export interface CurveLayout {
  /** The SVG path of the curve. */
  path: string;
  /** x of today (day 0), or null when the curve does not span it. */
  nowX: number | null;
  /** y of the prune threshold. */
  thresholdY: number;
  /** Where the curve starts (the last retrieval, or the creation): the reinforcement mark. */
  start: { x: number; y: number };
}

export function curveLayout(
  points: readonly { day: number; score: number }[],
  threshold: number,
  width: number,
  height: number,
): CurveLayout | null {
  if (points.length < 2) return null;
  const first = points[0]!.day;
  const last = points[points.length - 1]!.day;
  const span = last - first || 1;
  const x = (day: number): number => ((day - first) / span) * width;
  const y = (score: number): number => (1 - clamp(score, 0, 1)) * height;
  const path = points.map((p, i) => `${i ? "L" : "M"}${x(p.day).toFixed(2)} ${y(p.score).toFixed(2)}`).join(" ");
  return {
    path,
    nowX: first <= 0 && 0 <= last ? x(0) : null,
    thresholdY: y(threshold),
    start: { x: 0, y: y(points[0]!.score) },
  };
}
