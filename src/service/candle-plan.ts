// How a candle request maps onto base-period fetches and the candle engine (docs/contract.md#candle-time-semantics, #ex-factors-and-adjustment):
// 1m and 1d come from the adapter; 5m…60m aggregate 1m; 1w/1M/1Q/1Y aggregate adjusted 1d.
import type { AggregationSpec } from '../candles/pipeline.ts';
import { periodKeyFn } from '../candles/aggregate.ts';
import type { BasePeriod, Period, Region } from '../domain.ts';
import { addDays, localDate, localMidnight, minuteBarLabelFor, type CalendarKey } from '../markets/calendar.ts';

const MINUTES: Partial<Record<Period, number>> = { '1m': 1, '5m': 5, '10m': 10, '15m': 15, '30m': 30, '60m': 60 };

/** Most base bars one output bar can hold (a week ≤ 5 trading days, a month ≤ 23, …). */
const BASE_PER_BAR: Record<Period, number> = {
  '1m': 1, '5m': 5, '10m': 10, '15m': 15, '30m': 30, '60m': 60,
  '1d': 1, '1w': 5, '1M': 23, '1Q': 66, '1Y': 262,
};

/** How far before `start_time` to fetch so the first period is whole and its predecessor exists. */
const LOOKBACK_MS: Record<Period, number> = {
  '1m': 15 * 86_400_000, '5m': 15 * 86_400_000, '10m': 15 * 86_400_000, '15m': 15 * 86_400_000,
  '30m': 15 * 86_400_000, '60m': 15 * 86_400_000,
  '1d': 20 * 86_400_000, '1w': 30 * 86_400_000, '1M': 70 * 86_400_000, '1Q': 200 * 86_400_000, '1Y': 800 * 86_400_000,
};

/**
 * Upper bound on base bars per symbol and request, so one request can never ask a vendor for
 * unbounded history. It shortens an answer whose count needs more (30m and 60m at large counts):
 * the answer names it (X-Limited-By: base-bars) and pages on (X-Next-End-Time, Link).
 */
export const MAX_BASE_BARS: Record<BasePeriod, number> = { '1m': 120_000, '1d': 60_000 };

export function isMinutePeriod(period: Period): boolean {
  return MINUTES[period] !== undefined;
}

function basePeriodOf(period: Period): BasePeriod {
  return isMinutePeriod(period) ? '1m' : '1d';
}

export interface BaseFetch {
  period: BasePeriod;
  start?: number;
  end?: number;
  count: number;
  /** `count` is MAX_BASE_BARS, less than the window's count needs: the answer may come short. */
  capped: boolean;
}

/** The base-period fetch that covers `count` output bars plus one more for prev_close. */
export function baseFetchFor(period: Period, window: { start?: number; end?: number; count: number }): BaseFetch {
  const base = basePeriodOf(period);
  const per = BASE_PER_BAR[period];
  const needed = (window.count + 2) * per;
  const count = Math.min(MAX_BASE_BARS[base], needed);
  return {
    period: base,
    start: window.start === undefined ? undefined : window.start - LOOKBACK_MS[period],
    end: window.end,
    count,
    capped: count < needed,
  };
}

/** The aggregation of base bars into `period`, or undefined for a base period. */
export function aggregationFor(period: Period, region: CalendarKey): AggregationSpec | undefined {
  if (period === '1m' || period === '1d') return undefined;
  const minutes = MINUTES[period];
  if (minutes !== undefined) {
    // A 1m bar labelled at its end belongs to the bucket whose (label − N, label] holds it.
    return { keyOf: (ts) => minuteBarLabelFor(region, ts, minutes) ?? ts, stamp: 'key' };
  }
  return { keyOf: periodKeyFn(period as '1w' | '1M' | '1Q' | '1Y', (ts) => localDate(region, ts)), stamp: 'last' };
}

/** 00:00 exchange-local of a bar's trade date: minute bars take their trade date's factor. */
export function tradeDateStartFn(region: CalendarKey): (ts: number) => number {
  // Minute bars come in runs of one trade date: keep the last date's [midnight, next midnight)
  // instead of two calendar look-ups per bar.
  let from = Infinity;
  let to = -Infinity;
  return (ts) => {
    if (ts >= from && ts < to) return from;
    const date = localDate(region, ts);
    const midnight = localMidnight(region, date);
    if (midnight <= ts) {
      from = midnight;
      to = localMidnight(region, addDays(date, 1));
    }
    return midnight;
  };
}
