// What a financials request selects from a symbol's cached series (issue 25, items 1 and 4). The
// cached unit is a symbol's whole series for one statement, every version of every period kept
// (a restatement sits beside the original, with its later announcement date), so every parameter
// combination is answered from it locally:
//
//   as_of       per period, the newest version announced on or before that date; records without
//               an announcement date are left out (nothing says when they became known)
//   (no as_of)  per period, the newest version
//   start_date, end_date   inclusive bounds on period_end
//   latest      only the newest period_end left after the bounds (every span ending that day:
//               Yahoo's quarter and fiscal year can both end on 12-31)
//
// A "period" is (period_end, period_months): a fiscal year and its last quarter are different
// periods. The answer is ascending by period_end, then by span, as candles are.
import type { RecordHead } from './types.ts';

export interface FinancialsSelection {
  start_date?: string;
  end_date?: string;
  latest?: boolean;
  as_of?: string;
}

function periodKey(record: RecordHead): string {
  return `${record.period_end}|${record.period_months ?? ''}`;
}

/** a is a newer version than b: a later announcement; an announced one over one without a date. */
function newer(a: RecordHead, b: RecordHead): boolean {
  if (a.announce_date === b.announce_date) return false;
  if (b.announce_date === null) return true;
  if (a.announce_date === null) return false;
  return a.announce_date > b.announce_date;
}

export function compareRecords(a: RecordHead, b: RecordHead): number {
  if (a.period_end !== b.period_end) return a.period_end < b.period_end ? -1 : 1;
  const am = a.period_months ?? 0;
  const bm = b.period_months ?? 0;
  if (am !== bm) return am - bm;
  const ad = a.announce_date ?? '';
  const bd = b.announce_date ?? '';
  return ad < bd ? -1 : ad > bd ? 1 : 0;
}

/** The records a request asks for, ascending; `series` (every version) is not modified. */
export function selectRecords<R extends RecordHead>(series: readonly R[], selection: FinancialsSelection): R[] {
  const { start_date: start, end_date: end, as_of: asOf } = selection;
  const chosen = new Map<string, R>();
  for (const record of series) {
    if (asOf !== undefined && (record.announce_date === null || record.announce_date > asOf)) continue;
    if (start !== undefined && record.period_end < start) continue;
    if (end !== undefined && record.period_end > end) continue;
    const key = periodKey(record);
    const held = chosen.get(key);
    // Equal announcement dates: the later one in the series wins (the vendor's last word).
    if (held === undefined || !newer(held, record)) chosen.set(key, record);
  }
  let out = [...chosen.values()].sort(compareRecords);
  if (selection.latest === true && out.length > 0) {
    const last = out[out.length - 1].period_end;
    out = out.filter((record) => record.period_end === last);
  }
  return out;
}

/**
 * Merges a fresh fetch into a cached series so a restatement never erases the version it
 * replaces: records equal in period and announcement date are replaced by the fresh one, others
 * are kept. Ascending, like every series.
 */
export function mergeVersions<R extends RecordHead>(cached: readonly R[], fresh: readonly R[]): R[] {
  const byVersion = new Map<string, R>();
  for (const record of cached) byVersion.set(`${periodKey(record)}|${record.announce_date ?? ''}`, record);
  for (const record of fresh) byVersion.set(`${periodKey(record)}|${record.announce_date ?? ''}`, record);
  return [...byVersion.values()].sort(compareRecords);
}
