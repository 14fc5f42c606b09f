// Row-wise bars as the vendor parsers produce them, and the steps every real-vendor adapter
// shares on the way to columnar `Candles`: re-stamping (docs/contract.md#candle-time-semantics), folding auction rows into
// session bars, windowing (inclusive bounds, newest `count`), and the column build.

import type { Candles, Region } from '../../src/domain.ts';
import { localDate, localMidnight, minuteBarLabelFor, sessions, tradingDayOf, type CalendarKey } from '../../src/markets/calendar.ts';

export interface Bar {
  /** Epoch ms; after normalisation, the canonical label. */
  t: number;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Shares, integer. */
  volume: number;
  amount: number;
  prevClose?: number;
}

const MINUTE_MS = 60_000;

/**
 * Vendors round open/close and high/low independently, and Eastmoney's first trend row of a day
 * can carry open 0: keep high/low an envelope of open/close and fill a missing open.
 */
function tidyBar(bar: Bar): Bar {
  const open = bar.open > 0 ? bar.open : bar.close;
  return {
    ...bar,
    open,
    high: Math.max(bar.high, open, bar.close),
    low: Math.min(bar.low > 0 ? bar.low : Math.min(open, bar.close), open, bar.close),
  };
}

/** 00:00 exchange-local of the trade date that contains `ms`. */
export function dailyLabel(region: Region, ms: number): number {
  return localMidnight(region, localDate(region, ms));
}

function byTime(bars: Bar[]): Bar[] {
  return bars.slice().sort((a, b) => a.t - b.t);
}

/** Daily bars re-stamped at local midnight; a repeated trade date keeps the later row (the live bar). */
export function normaliseDaily(region: Region, bars: Bar[]): Bar[] {
  const out: Bar[] = [];
  for (const bar of byTime(bars)) {
    const t = dailyLabel(region, bar.t);
    const tidy = tidyBar({ ...bar, t });
    if (out.length > 0 && out[out.length - 1].t === t) out[out.length - 1] = tidy;
    else out.push(tidy);
  }
  return out;
}

/**
 * Canonical end-of-bar label (docs/contract.md#candle-time-semantics) for a vendor row whose END is `endMs`. Rows at or
 * before a session's open (the opening auction) belong to the first bar; rows after a session's
 * close (closing auction, late prints) to its last bar. On a day our calendar has closed the
 * vendor is trusted and the label kept.
 */
function minuteLabel(region: Region, endMs: number): number {
  const aligned = Math.ceil(endMs / MINUTE_MS) * MINUTE_MS;
  const label = minuteBarLabelFor(region, aligned, 1);
  if (label !== undefined) return label;
  const windows = sessions(region, localDate(region, aligned));
  if (windows.length === 0) return aligned;
  if (aligned < windows[0].start) return windows[0].start + MINUTE_MS;
  let last = windows[0].end;
  for (const w of windows) if (aligned >= w.end) last = w.end;
  return last;
}

/** `a` earlier than `b`, both on one label. */
function mergeBars(a: Bar, b: Bar): Bar {
  const merged: Bar = {
    t: b.t,
    open: a.open,
    high: Math.max(a.high, b.high),
    low: Math.min(a.low, b.low),
    close: b.close,
    volume: a.volume + b.volume,
    amount: a.amount + b.amount,
  };
  if (a.prevClose !== undefined) merged.prevClose = a.prevClose;
  return merged;
}

/**
 * End-labelled minute rows → canonical bars. Rows repeated with the same vendor stamp (overlapping
 * requests) keep the later copy; rows that land on one canonical label merge in time order.
 */
export function normaliseMinutes(region: Region, rows: Bar[]): Bar[] {
  const unique = new Map<number, Bar>();
  for (const row of rows) unique.set(row.t, row);
  const out: Bar[] = [];
  for (const row of byTime([...unique.values()])) {
    const bar = tidyBar({ ...row, t: minuteLabel(region, row.t) });
    // Canonical labels never decrease along sorted rows, so equal labels are always adjacent.
    const last = out[out.length - 1];
    if (last !== undefined && last.t === bar.t) out[out.length - 1] = mergeBars(last, bar);
    else out.push(bar);
  }
  return out;
}

/** Bars with `start ≤ t ≤ end`, then the newest `count` (docs/contract.md#candle-time-semantics). */
export function windowBars(bars: Bar[], start?: number, end?: number, count?: number): Bar[] {
  let from = 0;
  let to = bars.length;
  while (from < to && start !== undefined && bars[from].t < start) from++;
  while (to > from && end !== undefined && bars[to - 1].t > end) to--;
  if (count !== undefined && to - from > count) from = to - count;
  return bars.slice(from, to);
}

export function toCandles(bars: Bar[]): Candles {
  const withPrevClose = bars.length > 0 && bars.every((b) => b.prevClose !== undefined);
  const candles: Candles = {
    timestamp: bars.map((b) => b.t),
    open: bars.map((b) => b.open),
    high: bars.map((b) => b.high),
    low: bars.map((b) => b.low),
    close: bars.map((b) => b.close),
    volume: bars.map((b) => b.volume),
    amount: bars.map((b) => b.amount),
  };
  if (withPrevClose) candles.prev_close = bars.map((b) => b.prevClose as number);
  return candles;
}

/** A futures contract's row: open interest and settlement when the vendor gave them (null: a cell left empty). */
export interface FuturesFields {
  openInterest?: number | null;
  settlement?: number | null;
}

/** Columnar candles of a contract; `open_interest` and `settlement_price` when every bar carries them. */
export function toFuturesCandles(bars: (Bar & FuturesFields)[]): Candles {
  const candles = toCandles(bars);
  if (bars.length > 0 && bars.every((b) => typeof b.openInterest === 'number')) candles.open_interest = bars.map((b) => b.openInterest as number);
  if (bars.length > 0 && bars.every((b) => typeof b.settlement === 'number')) candles.settlement_price = bars.map((b) => b.settlement as number);
  return candles;
}

/** A contract's bars of the newest trading day among `bars` (intraday: a night session and the day after it). */
export function newestTradingDay<B extends Bar>(key: CalendarKey, bars: B[]): B[] {
  if (bars.length === 0) return bars;
  const day = tradingDayOf(key, bars[bars.length - 1].t);
  let from = bars.length;
  while (from > 0 && tradingDayOf(key, bars[from - 1].t) === day) from--;
  return bars.slice(from);
}

/** How long before a session's open a print is its call auction's (it belongs to the first bar). */
const AUCTION_MS = 5 * MINUTE_MS;

/**
 * The canonical end label of a contract's minute row whose end is `endMs`, on its product's
 * sessions (a night session under the next trading day): inside a session its bar; a call-auction
 * print just before an open the first bar of that session; any other print between sessions the
 * last bar of the session before it. A day the calendar has no session for keeps the vendor's minute.
 */
export function futuresMinuteLabel(key: CalendarKey, endMs: number): number {
  const aligned = Math.ceil(endMs / MINUTE_MS) * MINUTE_MS;
  const label = minuteBarLabelFor(key, aligned, 1);
  if (label !== undefined) return label;
  const windows = sessions(key, tradingDayOf(key, aligned));
  if (windows.length === 0) return aligned;
  let lastEnd: number | undefined;
  for (const w of windows) {
    if (aligned < w.start) {
      if (w.start - aligned <= AUCTION_MS || lastEnd === undefined) return w.start + MINUTE_MS;
      return lastEnd;
    }
    lastEnd = w.end;
  }
  return lastEnd as number;
}

/**
 * Whether `bar` (canonical, the first of an answer) is the listing's first session or earlier:
 * `firstTrade` is when the vendor says the listing first traded (epoch ms). There is no previous
 * session then, so a vendor's "previous close" for it is not one (Yahoo's chartPreviousClose for
 * a window starting there is that session's own close, or its open), and the documented rule for a
 * first bar without a previous close applies: its own open (docs/contract.md#details, prev_close of a raw bar).
 */
export function isListingFirstBar(region: Region, bar: Bar | undefined, firstTrade: number | undefined): boolean {
  return bar !== undefined && firstTrade !== undefined && localDate(region, bar.t) <= localDate(region, firstTrade);
}

/** P_prev of an ex-date: the close of the last bar stamped before `t` (bars ascending). */
export function lastCloseBefore(bars: Bar[], t: number): number | undefined {
  let lo = 0;
  let hi = bars.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (bars[mid].t < t) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? undefined : bars[lo - 1].close;
}
