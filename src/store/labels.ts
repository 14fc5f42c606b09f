// The trading calendar seen as a sequence of possible bar labels per (calendar, base period)
// (docs/contract.md#candle-time-semantics): 1d bars are labelled 00:00 local of each trading day, 1m bars by their end
// minute inside the sessions. The store plans with these: a gap holding no possible label is not
// fetched, a `count` maps to a time range, a fetch is split so no call asks for more bars than the
// vendor's per-call limit. Suspensions and holidays missing from the tables look like trading
// days here; the vendor's answer (no bars) is then recorded as covered, so they cost one call once.
import type { BasePeriod } from '../domain.ts';
import {
  calendarCoverage, isMarketOpen, isTradingDay, labelDayOf, latestStartedSessionDay, latestTradingDay, localDate, localMidnight,
  minuteBarLabelCount, minuteBarLabelFor, minuteBarLabels, nextTradingDay, prevTradingDay, sessions,
  type CalendarKey,
} from '../markets/calendar.ts';

/** No store plans before this date: the oldest exchange in scope (SSE) opened in December 1990. */
const FLOOR_DATE = '1990-01-01';

export function floorMs(region: CalendarKey): number {
  return localMidnight(region, FLOOR_DATE);
}

function dayLabels(region: CalendarKey, period: BasePeriod, date: string): readonly number[] {
  if (period === '1m') return minuteBarLabels(region, date, 1);
  return isTradingDay(region, date) ? [localMidnight(region, date)] : [];
}

function closeOf(region: CalendarKey, date: string): number {
  const windows = sessions(region, date);
  return windows.length === 0 ? -Infinity : windows[windows.length - 1].end;
}

/** Newest label whose bar has closed at `now` (1m: every label ≤ now has closed). */
export function closedEnd(region: CalendarKey, period: BasePeriod, now: number): number {
  if (period === '1m') return now;
  const day = latestTradingDay(region, now);
  return localMidnight(region, now >= closeOf(region, day) ? day : prevTradingDay(region, day));
}

/** Label of the bar still forming at `now`, if a session is running. */
export function openLabel(region: CalendarKey, period: BasePeriod, now: number): number | undefined {
  if (period === '1m') return isMarketOpen(region, now) ? minuteBarLabelFor(region, now + 1, 1) : undefined;
  const label = localMidnight(region, latestStartedSessionDay(region, now));
  return label > closedEnd(region, period, now) ? label : undefined;
}

/** The end of the first session close strictly after `now` (when provisional bars are re-fetched). */
export function nextClose(region: CalendarKey, now: number): number {
  let day = localDate(region, now);
  if (!isTradingDay(region, day)) day = nextTradingDay(region, day);
  while (closeOf(region, day) <= now) day = nextTradingDay(region, day);
  return closeOf(region, day);
}

/** Newest possible label ≤ t (undefined before the floor). */
export function lastLabelAtOrBefore(region: CalendarKey, period: BasePeriod, t: number): number | undefined {
  const floor = floorMs(region);
  // No day before the calendar's first has a label (a futures calendar begins in 2020, not 1990).
  const first = calendarCoverage(region).first;
  let day = labelDayOf(region, t);
  for (;;) {
    const labels = dayLabels(region, period, day);
    for (let i = labels.length - 1; i >= 0; i--) if (labels[i] <= t) return labels[i] >= floor ? labels[i] : undefined;
    if (localMidnight(region, day) < floor || day <= first) return undefined;
    day = prevTradingDay(region, day);
  }
}

/** Oldest possible label ≥ t (never undefined: calendars run forward forever). */
export function firstLabelAtOrAfter(region: CalendarKey, period: BasePeriod, t: number): number {
  let day = labelDayOf(region, Math.max(t, floorMs(region)));
  for (;;) {
    for (const label of dayLabels(region, period, day)) if (label >= t) return label;
    day = nextTradingDay(region, day);
  }
}

/** Possible labels in [lo, hi], ascending, stopping after `cap` of them. */
export function labelsIn(region: CalendarKey, period: BasePeriod, lo: number, hi: number, cap = Infinity): number[] {
  const out: number[] = [];
  if (hi < lo) return out;
  let day = labelDayOf(region, Math.max(lo, floorMs(region)));
  const lastDay = labelDayOf(region, hi);
  // Index loops and no array a day for 1d: a plan over years of history runs this for every
  // trading day in its range (issue 30: the store's planning was a tenth of the mixed soak's garbage).
  while (day <= lastDay && out.length < cap) {
    if (period === '1d') {
      if (isTradingDay(region, day)) {
        const label = localMidnight(region, day);
        if (label >= lo && label <= hi) out.push(label);
      }
    } else {
      const labels = minuteBarLabels(region, day, 1);
      for (let i = 0; i < labels.length && out.length < cap; i++) if (labels[i] >= lo && labels[i] <= hi) out.push(labels[i]);
    }
    day = nextTradingDay(region, day);
  }
  return out;
}

/**
 * How many labels labelsIn(region, period, lo, hi, cap) would return, without building them: a
 * minute day wholly inside [lo, hi] is counted from its sessions (minuteBarLabelCount), only the
 * range's first and last days label by label.
 */
export function countLabelsIn(region: CalendarKey, period: BasePeriod, lo: number, hi: number, cap = Infinity): number {
  let count = 0;
  if (hi < lo) return count;
  let day = labelDayOf(region, Math.max(lo, floorMs(region)));
  const lastDay = labelDayOf(region, hi);
  while (day <= lastDay && count < cap) {
    if (period === '1d') {
      if (isTradingDay(region, day)) {
        const label = localMidnight(region, day);
        if (label >= lo && label <= hi) count++;
      }
    } else {
      const windows = sessions(region, day);
      if (windows.length > 0 && windows[0].start >= lo && windows[windows.length - 1].end <= hi) {
        count += minuteBarLabelCount(region, day, 1);
      } else {
        const labels = minuteBarLabels(region, day, 1);
        for (let i = 0; i < labels.length; i++) if (labels[i] >= lo && labels[i] <= hi) count++;
      }
    }
    day = nextTradingDay(region, day);
  }
  return Math.min(count, cap);
}

/** The n-th newest possible label ≤ hi (n ≥ 1); undefined when fewer exist after the floor. */
export function labelBack(region: CalendarKey, period: BasePeriod, hi: number, n: number): number | undefined {
  let remaining = n;
  let t = lastLabelAtOrBefore(region, period, hi);
  if (t === undefined) return undefined;
  const floor = floorMs(region);
  let day = labelDayOf(region, t);
  // Before the calendar's tables begin there is no trading day (and so no label) at all.
  const first = calendarCoverage(region).first;
  if (period === '1d') {
    // One label a trading day (t is one): step back n − 1 trading days, converting only the last.
    for (let k = 1; k < n; k++) {
      day = prevTradingDay(region, day);
      if (day < FLOOR_DATE || day < first) return undefined;
    }
    const label = localMidnight(region, day);
    return label >= floor ? label : undefined;
  }
  for (;;) {
    const labels = dayLabels(region, period, day);
    // Labels of this day ≤ t, newest first.
    for (let i = labels.length - 1; i >= 0; i--) {
      if (labels[i] > t) continue;
      remaining -= 1;
      if (remaining === 0) return labels[i];
    }
    if (day <= first) return undefined;
    day = prevTradingDay(region, day);
    if (localMidnight(region, day) < floor) return undefined;
    t = Infinity;
  }
}

/** [lo, hi] split so that no piece holds more than `max` possible labels; label-free → []. */
export function splitByLabels(region: CalendarKey, period: BasePeriod, lo: number, hi: number, max: number): { lo: number; hi: number; labels: number }[] {
  const out: { lo: number; hi: number; labels: number }[] = [];
  const labels = labelsIn(region, period, lo, hi);
  for (let i = 0; i < labels.length; i += max) {
    const last = Math.min(labels.length, i + max) - 1;
    // The first piece keeps the range's own start, the last its own end, so coverage has no holes.
    out.push({ lo: i === 0 ? lo : labels[i], hi: last === labels.length - 1 ? hi : labels[last + 1] - 1, labels: last - i + 1 });
  }
  return out;
}
