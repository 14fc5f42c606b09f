// Raw prices and ex-factors from Yahoo data (reference/vendors.md §4.2, §7.2).
//
// [verify] chose: Yahoo's OHLC and volume are split-adjusted but not dividend-adjusted, and its
// dividend amounts are split-adjusted like the prices. So raw bars are Yahoo's bars with every
// later split undone (prices × ratio, volume ÷ ratio), and a dividend's factor can be computed
// on Yahoo's own (split-adjusted) close before the ex-date, because the ratio D / P_prev is the
// same in either scale.

import type { ExFactor, Region } from '../../src/domain.ts';
import { dailyLabel, lastCloseBefore, type Bar } from '../common/bars.ts';
import type { RowCheck } from '../common/validate.ts';
import type { Dividend, Split } from './parse.ts';

/**
 * Events as (ex-date label, value), one per distinct (date, value): a vendor row repeated under
 * another stamp of the same date is one event, applied once (reported as a duplicate).
 */
function distinct<T extends { t: number }>(region: Region, events: T[], value: (e: T) => number, check?: RowCheck): Array<[number, number]> {
  const seen = new Set<string>();
  const out: Array<[number, number]> = [];
  for (const e of events) {
    const t = dailyLabel(region, e.t);
    const key = `${t}|${value(e)}`;
    if (seen.has(key)) {
      check?.drop('duplicate_ex_factor');
      continue;
    }
    seen.add(key);
    out.push([t, value(e)]);
  }
  return out;
}

/** Splits as (ex-date label, ratio), ascending, one per date (distinct splits on one date multiply). */
function splitsByDate(region: Region, splits: Split[], check?: RowCheck): Array<[number, number]> {
  const byDate = new Map<number, number>();
  for (const [t, ratio] of distinct(region, splits, (s) => s.ratio, check)) byDate.set(t, (byDate.get(t) ?? 1) * ratio);
  return [...byDate].sort((a, b) => a[0] - b[0]);
}

/**
 * Undoes splits on canonical bars (ascending): a split with ex-date label T scales every bar
 * stamped before T. `splits` must include every split after the bars, or later ones are missed.
 */
export function unsplit(region: Region, bars: Bar[], splits: Split[]): Bar[] {
  const events = splitsByDate(region, splits);
  if (events.length === 0) return bars;
  const out = new Array<Bar>(bars.length);
  let factor = 1;
  let next = events.length - 1;
  for (let i = bars.length - 1; i >= 0; i--) {
    const bar = bars[i];
    while (next >= 0 && events[next][0] > bar.t) factor *= events[next--][1];
    out[i] = factor === 1 ? bar : {
      ...bar,
      open: bar.open * factor,
      high: bar.high * factor,
      low: bar.low * factor,
      close: bar.close * factor,
      volume: Math.round(bar.volume / factor),
      ...(bar.prevClose === undefined ? {} : { prevClose: bar.prevClose * factor }),
    };
  }
  return out;
}

/**
 * One ex-factor per ex-date, ascending: splits give numerator / denominator, a cash dividend D
 * gives 1 / (1 − D / P_prev) with P_prev the close of the last bar before the ex-date; events on
 * one date multiply. `daily` is canonical daily bars (ascending) in Yahoo's scale. A dividend
 * with no earlier bar, or one not smaller than P_prev, is skipped.
 */
export function yahooExFactors(region: Region, daily: Bar[], dividends: Dividend[], splits: Split[], check?: RowCheck): ExFactor[] {
  const byDate = new Map<number, number>(splitsByDate(region, splits, check));
  for (const [t, amount] of distinct(region, dividends, (d) => d.amount, check)) {
    const prev = lastCloseBefore(daily, t);
    if (prev === undefined || !(amount > 0) || amount >= prev) continue;
    byDate.set(t, (byDate.get(t) ?? 1) * (prev / (prev - amount)));
  }
  return [...byDate]
    .filter(([, f]) => f !== 1)
    .sort((a, b) => a[0] - b[0])
    .map(([timestamp, ex_factor]) => ({ timestamp, ex_factor }));
}

