// Pure range planning for the candle store: which part of a query the store must hold, which
// pieces of that are missing, how they become vendor calls, and how a finished fetch is recorded
// (final or inside the revision window). No I/O: the tier (tier.ts) runs these against a backend.
import type { BasePeriod } from '../domain.ts';
import type { CalendarKey } from '../markets/calendar.ts';
import { gaps, type Interval, type Segment } from './coverage.ts';
import {
  closedEnd, countLabelsIn, firstLabelAtOrAfter, floorMs, labelBack, lastLabelAtOrBefore, nextClose, openLabel, splitByLabels,
} from './labels.ts';

/** Two missing pieces separated by at most this many held bars are fetched in one call. */
const BRIDGE_MAX_LABELS = 5;

export interface WindowQuery {
  start?: number;
  end?: number;
  count?: number;
}

export interface Window {
  /** Lower bound the query allows (its start, or the floor). */
  lo: number;
  /** Newest closed label the store may answer for: min(end, closedEnd). */
  upper: number;
  closedEnd: number;
  /** The still-forming bar's label when the query reaches it: always fetched, never stored. */
  open?: number;
}

export function windowFor(region: CalendarKey, period: BasePeriod, query: WindowQuery, now: number): Window {
  const lo = query.start ?? floorMs(region);
  const closed = closedEnd(region, period, now);
  const end = query.end ?? Infinity;
  const open = openLabel(region, period, now);
  return {
    lo,
    upper: Math.min(end, closed),
    closedEnd: closed,
    open: open !== undefined && open >= lo && open <= end ? open : undefined,
  };
}

/**
 * The range a newest-`need` query must hold, estimated from the calendar: from the need-th newest
 * possible label ≤ upper (or the query's own start when that comes first). Suspensions make the
 * estimate short; the tier then walks further back (deficitStep).
 */
export function countRange(region: CalendarKey, period: BasePeriod, lo: number, upper: number, need: number): Interval | undefined {
  if (need <= 0 || upper < lo) return undefined;
  // More bars asked for than [lo, upper] can hold (a start_time window with a large count): the
  // range is all of it, without walking the calendar back (that walk was most of a store hit).
  if (need > mostLabels(period, lo, upper)) return { lo, hi: upper };
  const back = labelBack(region, period, upper, need);
  return { lo: back === undefined ? lo : Math.max(lo, back), hi: upper };
}

/** An upper bound on the possible labels in [lo, hi]: minute labels are ≥ 60 s apart, day labels ≥ 23 h (DST). */
function mostLabels(period: BasePeriod, lo: number, hi: number): number {
  return Math.floor((hi - lo) / (period === '1m' ? 60_000 : 23 * 3_600_000)) + 1;
}

export interface Fetch {
  /** Bounds sent to the vendor (trimmed to possible labels). */
  lo: number;
  hi: number;
  /** Range recorded as covered once the answer is stored (the whole gap, edges included). */
  cover: Interval;
  labels: number;
}

export interface FetchPlan {
  fetches: Fetch[];
  /** Missing pieces that hold no possible label: covered without asking anyone. */
  free: Interval[];
}

/** Missing pieces of [lo, hi] given the covered segments, as vendor calls. */
export function planFetches(
  region: CalendarKey, period: BasePeriod, covered: readonly Interval[], lo: number, hi: number, maxBarsPerCall: number,
): FetchPlan {
  const free: Interval[] = [];
  const pieces: Fetch[] = [];
  if (hi < lo) return { fetches: [], free };
  for (const gap of gaps(covered, lo, hi)) {
    const first = firstLabelAtOrAfter(region, period, gap.lo);
    const last = lastLabelAtOrBefore(region, period, gap.hi);
    if (first > gap.hi || last === undefined || last < first) {
      free.push(gap);
      continue;
    }
    pieces.push({ lo: first, hi: last, cover: gap, labels: countLabelsIn(region, period, first, last) });
  }
  // Bridge small covered islands: one call instead of two, at the cost of a few bars again.
  const merged: Fetch[] = [];
  for (const piece of pieces) {
    const prev = merged[merged.length - 1];
    if (prev !== undefined) {
      const bridge = countLabelsIn(region, period, prev.cover.hi + 1, piece.cover.lo - 1, BRIDGE_MAX_LABELS + 1);
      if (bridge <= BRIDGE_MAX_LABELS && prev.labels + bridge + piece.labels <= maxBarsPerCall) {
        merged[merged.length - 1] = {
          lo: prev.lo, hi: piece.hi, cover: { lo: prev.cover.lo, hi: piece.cover.hi }, labels: prev.labels + bridge + piece.labels,
        };
        continue;
      }
    }
    merged.push(piece);
  }
  const fetches: Fetch[] = [];
  for (const f of merged) {
    if (f.labels <= maxBarsPerCall) {
      fetches.push(f);
      continue;
    }
    const parts = splitByLabels(region, period, f.lo, f.hi, maxBarsPerCall);
    parts.forEach((p, i) => {
      const cover = { lo: i === 0 ? f.cover.lo : p.lo, hi: i === parts.length - 1 ? f.cover.hi : p.hi };
      fetches.push({ lo: p.lo, hi: lastLabelAtOrBefore(region, period, p.hi) ?? p.hi, cover, labels: p.labels });
    });
  }
  return { fetches, free };
}

/**
 * One step of walking back from `cursor` when a newest-N query found too few bars: either a
 * covered segment to count from, or a count query to the vendor down to the next covered segment
 * (or the query's lower bound).
 */
export type DeficitStep =
  | { kind: 'covered'; segment: Interval }
  | { kind: 'fetch'; lo: number; hi: number };

export function deficitStep(covered: readonly Interval[], cursor: number, lo: number): DeficitStep {
  const segment = covered.find((s) => s.lo <= cursor && cursor <= s.hi);
  if (segment !== undefined) return { kind: 'covered', segment };
  let below = lo - 1;
  for (const s of covered) if (s.hi < cursor && s.hi > below) below = s.hi;
  return { kind: 'fetch', lo: below + 1, hi: cursor };
}

export interface RevisionPolicy {
  /** Newest closed bars kept provisional per period (default 1d: 2, 1m: 30). */
  bars: Record<BasePeriod, number>;
}

/**
 * Coverage rows for a stored fetch at `now`: the newest `bars` closed labels are provisional
 * (re-fetched once at the next session close), unless this fetch *is* that re-fetch (`rechecked`),
 * which makes them final; everything older is final at once.
 */
export function coverageFor(
  region: CalendarKey, period: BasePeriod, cover: Interval, now: number, policy: RevisionPolicy, rechecked: readonly Interval[] = [],
): Segment[] {
  const n = policy.bars[period];
  const closed = closedEnd(region, period, now);
  const hi = Math.min(cover.hi, closed);
  if (hi < cover.lo) return [];
  const cutoff = n > 0 ? labelBack(region, period, closed, n) : undefined;
  if (cutoff === undefined || hi < cutoff) return [{ lo: cover.lo, hi, recheckAt: null }];
  const out: Segment[] = [];
  if (cover.lo < cutoff) out.push({ lo: cover.lo, hi: cutoff - 1, recheckAt: null });
  const young = { lo: Math.max(cover.lo, cutoff), hi };
  const recheckAt = nextClose(region, now);
  // Parts of the young range that were a due re-fetch are final now; the rest waits for its one.
  const fresh = gaps(rechecked, young.lo, young.hi);
  let cursor = young.lo;
  for (const g of fresh) {
    if (g.lo > cursor) out.push({ lo: cursor, hi: g.lo - 1, recheckAt: null });
    out.push({ lo: g.lo, hi: g.hi, recheckAt });
    cursor = g.hi + 1;
  }
  if (cursor <= young.hi) out.push({ lo: cursor, hi: young.hi, recheckAt: null });
  return out;
}
