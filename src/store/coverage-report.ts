// What the store holds of one series against the trading calendar (GET /v1/coverage): per
// session the calendar expects in a date range, whether a bar is stored, the coverage says the
// vendor has none (a suspension, a closure the tables lack), or nothing is known (missing: the
// next request or a recorder run fetches it). Pure: the route reads the store, this counts.
import { lowerBound, upperBound } from '../candles/window.ts';
import type { BasePeriod } from '../domain.ts';
import {
  addDays, holidayName, isTradingDay, labelDayOf, localDate, localMidnight, minuteBarLabels, tradingDaysBetween, type CalendarKey,
} from '../markets/calendar.ts';
import { activeAt, gaps, type Segment } from './coverage.ts';
import { closedEnd } from './labels.ts';

/** Missing dates listed at most (missing_count has them all). */
export const MISSING_LIST_CAP = 100;

export interface CoverageReport {
  /** The adapter whose stored series this is; null when none is stored. */
  adapter: string | null;
  /** Label (epoch ms) of the oldest and newest stored bar, any date; null when none is stored. */
  first: number | null;
  last: number | null;
  /** The range counted (exchange-local, inclusive); null when nothing is stored and no start_date was given. */
  start_date: string | null;
  end_date: string | null;
  /** Sessions the calendar expects in the range (closed ones only: today counts once it has closed). */
  expected: number;
  /** Sessions with bars stored. */
  stored: number;
  /** Sessions covered without a bar: the vendor has none (suspended, or closed without the tables knowing). */
  empty: number;
  /** Sessions neither stored nor covered, oldest first, at most MISSING_LIST_CAP of them. */
  missing: string[];
  missing_count: number;
  /** Weekdays in the range the exchange was closed, with the calendar's reason: why they are not expected. */
  holidays: { date: string; name: string }[];
}

export interface CoverageInput {
  /** The series' calendar: its region's, or a futures contract's product's (night sessions under their trading day). */
  region: CalendarKey;
  period: BasePeriod;
  adapter: string | null;
  segments: readonly Segment[];
  /** Stored bar labels of the series, ascending. */
  timestamps: readonly number[];
  startDate?: string;
  endDate?: string;
  now: number;
}

function weekday(date: string): number {
  return new Date(`${date}T00:00:00Z`).getUTCDay();
}

/** The session's label span: the day's label (1d) or its first and last minute labels (1m). */
function labelSpan(region: CalendarKey, period: BasePeriod, date: string): { lo: number; hi: number } | undefined {
  if (period === '1d') {
    const label = localMidnight(region, date);
    return { lo: label, hi: label };
  }
  const labels = minuteBarLabels(region, date, 1);
  return labels.length === 0 ? undefined : { lo: labels[0], hi: labels[labels.length - 1] };
}

export function coverageReport(input: CoverageInput): CoverageReport {
  const { region, period, timestamps } = input;
  const first = timestamps.length > 0 ? timestamps[0] : null;
  const last = timestamps.length > 0 ? timestamps[timestamps.length - 1] : null;
  // Only sessions that have closed are expected: the newest is the last closed one.
  const newestClosed = localDate(region, closedEnd(region, '1d', input.now));
  const end = input.endDate === undefined || input.endDate > newestClosed ? newestClosed : input.endDate;
  const start = input.startDate ?? (first === null ? undefined : labelDayOf(region, first));
  const report: CoverageReport = {
    adapter: input.adapter, first, last, start_date: start ?? null, end_date: start === undefined ? null : end,
    expected: 0, stored: 0, empty: 0, missing: [], missing_count: 0, holidays: [],
  };
  if (start === undefined || start > end) return report;
  const active = activeAt(input.segments, input.now);
  for (const date of tradingDaysBetween(region, start, end)) {
    const span = labelSpan(region, period, date);
    if (span === undefined) continue;
    report.expected += 1;
    // A session's bars lie in its label span (a futures night's, on the evening before its date, included).
    if (upperBound(timestamps, span.hi) > lowerBound(timestamps, span.lo)) report.stored += 1;
    else if (gaps(active, span.lo, span.hi).length === 0) report.empty += 1;
    else {
      report.missing_count += 1;
      if (report.missing.length < MISSING_LIST_CAP) report.missing.push(date);
    }
  }
  for (let date = start; date <= end; date = addDays(date, 1)) {
    const wd = weekday(date);
    if (wd === 0 || wd === 6 || isTradingDay(region, date)) continue;
    report.holidays.push({ date, name: holidayName(region, date) ?? 'closed' });
  }
  return report;
}
