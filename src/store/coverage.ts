// Covered ranges of one series as disjoint, ascending, inclusive [lo, hi] segments (epoch ms on bar
// labels). A segment means "every closed bar labelled inside it is stored, or there is none".
// `recheckAt` null: final; a number: provisional (the revision window), to be re-fetched once at
// or after that instant. Pure functions: both backends compute the new coverage in JS inside their
// fill transaction, so the rules live in one place.

export interface Segment {
  lo: number;
  hi: number;
  recheckAt: number | null;
}

export interface Interval {
  lo: number;
  hi: number;
}

/** `segments` with [lo, hi] cut out. */
export function cut<T extends Interval>(segments: readonly T[], lo: number, hi: number): T[] {
  const out: T[] = [];
  for (const s of segments) {
    if (s.hi < lo || s.lo > hi) {
      out.push(s);
      continue;
    }
    if (s.lo < lo) out.push({ ...s, hi: lo - 1 });
    if (s.hi > hi) out.push({ ...s, lo: hi + 1 });
  }
  return out.sort((a, b) => a.lo - b.lo);
}

/** [lo, hi] minus `segments`: the uncovered pieces, ascending. */
export function gaps(segments: readonly Interval[], lo: number, hi: number): Interval[] {
  const out: Interval[] = [];
  let cursor = lo;
  for (const s of [...segments].sort((a, b) => a.lo - b.lo)) {
    if (s.hi < cursor) continue;
    if (s.lo > hi) break;
    if (s.lo > cursor) out.push({ lo: cursor, hi: Math.min(hi, s.lo - 1) });
    cursor = Math.max(cursor, s.hi + 1);
    if (cursor > hi) return out;
  }
  if (cursor <= hi) out.push({ lo: cursor, hi });
  return out;
}

/** Adjacent or touching segments with the same state become one. */
export function normalise(segments: readonly Segment[]): Segment[] {
  const sorted = [...segments].sort((a, b) => a.lo - b.lo);
  const out: Segment[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && last.recheckAt === s.recheckAt && s.lo <= last.hi + 1) {
      last.hi = Math.max(last.hi, s.hi);
    } else {
      out.push({ ...s });
    }
  }
  return out;
}

/**
 * Overlay one new segment. Final wins over everything it covers. A provisional segment never
 * downgrades a final one: it only replaces gaps and older provisional parts.
 */
export function overlay(segments: readonly Segment[], add: Segment): Segment[] {
  if (add.hi < add.lo) return [...segments];
  if (add.recheckAt === null) return normalise([...cut(segments, add.lo, add.hi), add]);
  const finals = segments.filter((s) => s.recheckAt === null);
  let out = [...segments];
  for (const piece of gaps(finals, add.lo, add.hi)) {
    out = [...cut(out, piece.lo, piece.hi), { lo: piece.lo, hi: piece.hi, recheckAt: add.recheckAt }];
  }
  return normalise(out);
}

export function overlayAll(segments: readonly Segment[], adds: readonly Segment[]): Segment[] {
  let out = normalise(segments);
  for (const add of adds) out = overlay(out, add);
  return out;
}

/** Segments that still count as covered at `now` (expired provisional ones do not). */
export function activeAt(segments: readonly Segment[], now: number): Segment[] {
  return segments.filter((s) => s.recheckAt === null || s.recheckAt > now);
}

/** Expired provisional segments: held bars the revision window wants re-fetched. */
export function expiredAt(segments: readonly Segment[], now: number): Segment[] {
  return segments.filter((s) => s.recheckAt !== null && s.recheckAt <= now);
}

export function containing<T extends Interval>(segments: readonly T[], t: number): T | undefined {
  return segments.find((s) => s.lo <= t && t <= s.hi);
}
