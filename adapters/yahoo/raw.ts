// Raw prices and ex-factors from Yahoo data (docs/vendors.md#yahoo-chart-response, docs/vendors.md#ex-factors-from-corporate-actions).
//
// [verify] chose: Yahoo's OHLC and volume are split-adjusted but not dividend-adjusted, and its
// dividend amounts are split-adjusted like the prices. So raw bars are Yahoo's bars with every
// later split undone (prices × ratio, volume ÷ ratio), and a dividend's factor can be computed
// on Yahoo's own (split-adjusted) close before the ex-date, because the ratio D / P_prev is the
// same in either scale.

import type { ExFactor, Region } from '../../src/domain.ts';
import { dailyLabel, lastCloseBefore, type Bar } from '../common/bars.ts';
import { round } from '../common/shapes.ts';
import type { RowCheck } from '../common/validate.ts';
import { toDecimals, type Dividend, type Split } from './parse.ts';

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
 * Scaled prices are rounded to the vendor's `decimals` again (0.1 · 3 is 0.30000000000000004).
 */
export function unsplit(region: Region, bars: Bar[], splits: Split[], decimals?: number): Bar[] {
  const events = splitsByDate(region, splits);
  if (events.length === 0) return bars;
  const out = new Array<Bar>(bars.length);
  let factor = 1;
  let next = events.length - 1;
  for (let i = bars.length - 1; i >= 0; i--) {
    const bar = bars[i];
    while (next >= 0 && events[next][0] > bar.t) factor *= events[next--][1];
    const px = (v: number) => toDecimals(v * factor, decimals);
    out[i] = factor === 1 ? bar : {
      ...bar,
      open: px(bar.open),
      high: px(bar.high),
      low: px(bar.low),
      close: px(bar.close),
      volume: Math.round(bar.volume / factor),
      ...(bar.prevClose === undefined ? {} : { prevClose: px(bar.prevClose) }),
    };
  }
  return out;
}

/**
 * One ex-factor per ex-date, ascending: splits give numerator / denominator, a cash dividend D
 * gives 1 / (1 − D / P_prev) with P_prev the close of the last bar before the ex-date; events on
 * one date multiply. `daily` is canonical daily bars (ascending) in Yahoo's scale. A dividend
 * with no earlier bar, or one not smaller than P_prev, is skipped.
 *
 * Each record carries its parts (docs/contract.md#ex-factors-and-adjustment): bonus_ratio = split ratio − 1, and the cash in
 * the raw prices' terms. Yahoo's amounts are split-adjusted like its prices, so the cash per share
 * held before the event is D × Π(splits on or after the ex-date): the same D / P_prev either way.
 */
export function yahooExFactors(region: Region, daily: Bar[], dividends: Dividend[], splits: Split[], check?: RowCheck): ExFactor[] {
  const bySplit = splitsByDate(region, splits, check);
  const later = (t: number) => bySplit.reduce((f, [ts, ratio]) => (ts >= t ? f * ratio : f), 1);
  const byDate = new Map<number, { factor: number; cash: number; shares: number }>();
  for (const [t, ratio] of bySplit) byDate.set(t, { factor: ratio, cash: 0, shares: ratio - 1 });
  for (const [t, amount] of distinct(region, dividends, (d) => d.amount, check)) {
    const prev = lastCloseBefore(daily, t);
    if (prev === undefined || !(amount > 0) || amount >= prev) continue;
    const seen = byDate.get(t) ?? { factor: 1, cash: 0, shares: 0 };
    byDate.set(t, { factor: seen.factor * (prev / (prev - amount)), cash: seen.cash + round(amount * later(t), 8), shares: seen.shares });
  }
  return [...byDate]
    .filter(([, e]) => e.factor !== 1)
    .sort((a, b) => a[0] - b[0])
    .map(([timestamp, e]) => ({
      timestamp, ex_factor: e.factor, cash_dividend: e.cash, bonus_ratio: e.shares, rights_ratio: 0, rights_price: 0, parts_known: true,
    }));
}
