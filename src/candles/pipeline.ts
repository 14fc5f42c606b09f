// The candle engine's one entry point for the service: raw base bars (1m or 1d) and the symbol's
// events in, the requested period/adjustment/window out. The order is fixed by docs/contract.md#ex-factors-and-adjustment:
// adjust the base bars first, then aggregate (an event inside a week must split the week's
// factors), then set prev_close from the previous output bar, then window.

import type { AdjustType, Candles } from '../domain.ts';
import { adjustCandles, type AdjustEvent } from './adjust.ts';
import { aggregateBy, type AggregateStamp } from './aggregate.ts';
import { sliceCandles, windowCandles, windowRange, withPrevClose, type WindowOptions } from './window.ts';

export interface AggregationSpec {
  keyOf: (ts: number) => number;
  stamp: AggregateStamp;
}

export interface BuildCandlesInput {
  /**
   * Raw base-period bars, ascending. Include history before the window when you have it: the
   * first output bar's prev_close is the close of the output bar before it.
   */
  raw: Candles;
  /** Every event of the symbol, not only those inside the bars' range. */
  events: readonly AdjustEvent[];
  adjust: AdjustType;
  /** Maps a bar timestamp to 00:00 local of its trade date (see adjustCandles). */
  tradeDateStart?: (ts: number) => number;
  /** Omit for the base period itself. */
  aggregate?: AggregationSpec;
  /** Applied to the output bars (a week bar is in the window when its stamp is). */
  window?: WindowOptions;
  /** Produce the prev_close column (default true: the candle routes carry it). */
  prevClose?: boolean;
}

export function buildCandles(input: BuildCandlesInput): Candles {
  const wantPrev = input.prevClose ?? true;
  if (input.aggregate === undefined) return buildBase(input, wantPrev);
  const adjusted = adjustCandles(input.raw, input.events, input.adjust, input.tradeDateStart);
  const aggregated = aggregateBy(adjusted, input.aggregate.keyOf, input.aggregate.stamp);
  // The first aggregated bar starts with the first base bar, so its prev_close is that bar's.
  const series = wantPrev ? withPrevClose(aggregated, adjusted.prev_close?.[0]) : aggregated;
  return input.window === undefined ? series : windowCandles(series, input.window);
}

/**
 * No aggregation: window the raw bars first so only the requested bars (plus one leading bar for
 * prev_close) are adjusted: adjust(raw incl. one extra earlier bar) → withPrevClose → drop it.
 */
function buildBase(input: BuildCandlesInput, wantPrev: boolean): Candles {
  const raw = input.raw;
  const { from, to } = input.window === undefined ? { from: 0, to: raw.timestamp.length } : windowRange(raw, input.window);
  const lead = wantPrev && from > 0 && to > from ? 1 : 0;
  const part = sliceCandles(raw, from - lead, to);
  const adjusted = adjustCandles(part, input.events, input.adjust, input.tradeDateStart);
  if (!wantPrev) return withoutPrev(adjusted);
  const firstPrev = lead === 1 ? undefined : adjusted.prev_close?.[0];
  const series = withPrevClose(adjusted, firstPrev);
  return lead === 1 ? sliceCandles(series, 1, series.timestamp.length) : series;
}

function withoutPrev(c: Candles): Candles {
  if (c.prev_close === undefined) return c;
  const { prev_close: _dropped, ...rest } = c;
  return rest;
}

/** Convenience for the common case: aggregate adjusted base bars (no prev_close, no window). */
export function adjustThenAggregate(
  raw: Candles,
  events: readonly AdjustEvent[],
  adjust: AdjustType,
  aggregate: AggregationSpec,
  tradeDateStart?: (ts: number) => number,
): Candles {
  return buildCandles({ raw, events, adjust, aggregate, tradeDateStart, prevClose: false });
}
