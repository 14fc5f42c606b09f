// Building longer periods locally (docs/contract.md#candle-time-semantics): 5m…60m from 1m bars, 1w/1M/1Q/1Y from daily
// bars. open = first open, close = last close, high = max, low = min, volume/amount = sums.
// Adjusted output is built by aggregating *adjusted* base bars (pipeline.ts): adjusting an
// aggregated raw bar with one factor is wrong when an event falls inside the period.

import type { Candles } from '../domain.ts';
import { FUTURES_COLUMNS } from './window.ts';

/**
 * How an output bar is stamped: 'key' uses the group key itself (minute periods, whose key is the
 * end-of-bar label); 'last' uses the timestamp of the group's last input bar (1w/1M/1Q/1Y: a week's
 * bar is stamped with its last trading day, the current period's bar with the latest one so far).
 */
export type AggregateStamp = 'key' | 'last';

/** Sums of float amounts pick up noise (0.1 + 0.2); money is reported to the cent. */
function roundAmount(x: number): number {
  return Math.round(x * 100) / 100;
}

/**
 * Group consecutive bars whose keyOf(timestamp) is equal. prev_close is not produced here: the
 * previous aggregated bar's close is set afterwards with withPrevClose.
 */
export function aggregateBy(candles: Candles, keyOf: (ts: number) => number, stamp: AggregateStamp): Candles {
  const ts = candles.timestamp;
  const n = ts.length;
  const keys = new Float64Array(n);
  let groups = 0;
  for (let k = 0; k < n; k++) {
    keys[k] = keyOf(ts[k]);
    if (k === 0 || keys[k] !== keys[k - 1]) groups++;
  }
  const out: Candles = {
    timestamp: new Array<number>(groups),
    open: new Array<number>(groups),
    high: new Array<number>(groups),
    low: new Array<number>(groups),
    close: new Array<number>(groups),
    volume: new Array<number>(groups),
    amount: new Array<number>(groups),
  };
  // Open interest and settlement are states at a bar's close: a group has its last bar's.
  const extras = FUTURES_COLUMNS.filter((name) => candles[name] !== undefined);
  for (const name of extras) out[name] = new Array<number>(groups);
  let g = -1;
  for (let k = 0; k < n; k++) {
    if (k === 0 || keys[k] !== keys[k - 1]) {
      if (g >= 0) out.amount[g] = roundAmount(out.amount[g]);
      g++;
      out.open[g] = candles.open[k];
      out.high[g] = candles.high[k];
      out.low[g] = candles.low[k];
      out.volume[g] = candles.volume[k];
      out.amount[g] = candles.amount[k];
    } else {
      if (candles.high[k] > out.high[g]) out.high[g] = candles.high[k];
      if (candles.low[k] < out.low[g]) out.low[g] = candles.low[k];
      out.volume[g] += candles.volume[k];
      out.amount[g] += candles.amount[k];
    }
    out.close[g] = candles.close[k];
    out.timestamp[g] = stamp === 'key' ? keys[k] : ts[k];
    for (const name of extras) (out[name] as number[])[g] = (candles[name] as number[])[k];
  }
  if (g >= 0) out.amount[g] = roundAmount(out.amount[g]);
  return out;
}

export type LongPeriod = '1w' | '1M' | '1Q' | '1Y';

import { DAY_MS } from '../markets/time.ts';

/**
 * keyOf for daily → 1w/1M/1Q/1Y, given the exchange-local date of a daily bar ('YYYY-MM-DD').
 * Keys are plain numbers: week = the Monday of its ISO week as yyyymmdd (20250106), month =
 * yyyymm, quarter = yyyy·10 + q, year = yyyy. ISO weeks run Monday–Sunday, so a week that spans
 * new year stays one group.
 */
export function periodKeyFn(period: LongPeriod, localDateOf: (ts: number) => string): (ts: number) => number {
  switch (period) {
    case '1w':
      return (ts) => {
        const d = localDateOf(ts);
        const y = Number(d.slice(0, 4));
        const m = Number(d.slice(5, 7));
        const day = Number(d.slice(8, 10));
        const utc = Date.UTC(y, m - 1, day);
        const sinceMonday = (new Date(utc).getUTCDay() + 6) % 7;
        const monday = new Date(utc - sinceMonday * DAY_MS);
        return monday.getUTCFullYear() * 10_000 + (monday.getUTCMonth() + 1) * 100 + monday.getUTCDate();
      };
    case '1M':
      return (ts) => {
        const d = localDateOf(ts);
        return Number(d.slice(0, 4)) * 100 + Number(d.slice(5, 7));
      };
    case '1Q':
      return (ts) => {
        const d = localDateOf(ts);
        return Number(d.slice(0, 4)) * 10 + Math.ceil(Number(d.slice(5, 7)) / 3);
      };
    case '1Y':
      return (ts) => Number(localDateOf(ts).slice(0, 4));
  }
}

/** The exchange session a 1m bar belongs to, as epoch-ms instants [start, end]. */
export interface SessionBounds {
  start: number;
  end: number;
}

/**
 * keyOf for 1m → N-minute bars: buckets align to the session's start and the key is the bucket's
 * end label, clamped to the session end (HK 60m: 09:30–10:30 … 11:30–12:00, the last bar shorter).
 * `sessionOf` (from the market calendars) gives the session that contains a 1m bar's end label;
 * a bar outside every session (null) keeps its own label as key.
 */
export function minuteKeyFn(minutes: number, sessionOf: (ts: number) => SessionBounds | null): (ts: number) => number {
  const width = minutes * 60_000;
  return (ts) => {
    const s = sessionOf(ts);
    if (s === null) return ts;
    const end = s.start + Math.max(1, Math.ceil((ts - s.start) / width)) * width;
    return end < s.end ? end : s.end;
  };
}
