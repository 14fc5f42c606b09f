// Slicing, windowing and joining columnar candles (docs/contract.md#candle-time-semantics: `count` with a range returns the
// newest `count` bars inside [start_time, end_time]). Timestamps ascend strictly, so windows are
// found by binary search: candle series run to 10k+ bars.
//
// Every function here treats Candles as immutable: outputs may share column arrays with their
// inputs (a whole-range slice returns the input itself), so nobody may write into a result.

import type { Candles } from '../domain.ts';

/**
 * Futures columns (open interest, settlement price): kept through slicing and joining like
 * prev_close (a join keeps one only when every part has it); aggregation takes a group's last.
 */
export const FUTURES_COLUMNS = ['open_interest', 'settlement_price'] as const;
type FuturesColumn = (typeof FUTURES_COLUMNS)[number];

/** The futures columns every one of `parts` has. */
function sharedFuturesColumns(parts: readonly Candles[]): FuturesColumn[] {
  return FUTURES_COLUMNS.filter((name) => parts.every((p) => p[name] !== undefined));
}

export function candleLength(c: Candles): number {
  return c.timestamp.length;
}

/** Columns of `n` slots each, to be filled by index (prev_close too when asked). */
export function sizedCandles(n: number, withPrevClose = false): Candles {
  const c: Candles = {
    timestamp: new Array<number>(n), open: new Array<number>(n), high: new Array<number>(n), low: new Array<number>(n),
    close: new Array<number>(n), volume: new Array<number>(n), amount: new Array<number>(n),
  };
  if (withPrevClose) c.prev_close = new Array<number>(n);
  return c;
}

/** Bar `i` of any OHLCV columns (Candles, typed arrays) into slot `j` of `out`; prev_close not included. */
export function copyBar(out: Candles, j: number, src: Record<'timestamp' | 'open' | 'high' | 'low' | 'close' | 'volume' | 'amount', ArrayLike<number>>, i: number): void {
  out.timestamp[j] = src.timestamp[i];
  out.open[j] = src.open[i];
  out.high[j] = src.high[i];
  out.low[j] = src.low[i];
  out.close[j] = src.close[i];
  out.volume[j] = src.volume[i];
  out.amount[j] = src.amount[i];
}

export function emptyCandles(withPrevClose = false): Candles {
  const c: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] };
  if (withPrevClose) c.prev_close = [];
  return c;
}

/** First index whose timestamp is ≥ t (length when none). */
export function lowerBound(ts: readonly number[], t: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ts[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose timestamp is > t (length when none). */
export function upperBound(ts: readonly number[], t: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ts[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Bars [from, to) by index, clamped to the series. */
export function sliceCandles(c: Candles, from: number, to: number): Candles {
  const n = c.timestamp.length;
  const lo = Math.max(0, Math.min(n, from));
  const hi = Math.max(lo, Math.min(n, to));
  if (lo === 0 && hi === n) return c;
  const out: Candles = {
    timestamp: c.timestamp.slice(lo, hi),
    open: c.open.slice(lo, hi),
    high: c.high.slice(lo, hi),
    low: c.low.slice(lo, hi),
    close: c.close.slice(lo, hi),
    volume: c.volume.slice(lo, hi),
    amount: c.amount.slice(lo, hi),
  };
  if (c.prev_close !== undefined) out.prev_close = c.prev_close.slice(lo, hi);
  for (const name of FUTURES_COLUMNS) if (c[name] !== undefined) out[name] = (c[name] as number[]).slice(lo, hi);
  return out;
}

export interface WindowOptions {
  /** Inclusive lower bound, epoch ms. */
  start?: number;
  /** Inclusive upper bound, epoch ms. */
  end?: number;
  /** Keep only the newest `count` bars of the range; 0 or less gives no bars. */
  count?: number;
}

/** Index range [from, to) of the newest `count` bars whose timestamp lies in [start, end]. */
export function windowRange(c: Candles, opts: WindowOptions): { from: number; to: number } {
  const ts = c.timestamp;
  const from = opts.start === undefined ? 0 : lowerBound(ts, opts.start);
  const to = Math.max(from, opts.end === undefined ? ts.length : upperBound(ts, opts.end));
  if (opts.count === undefined) return { from, to };
  const count = Math.max(0, Math.floor(opts.count));
  return { from: Math.max(from, to - count), to };
}

export function windowCandles(c: Candles, opts: WindowOptions): Candles {
  const { from, to } = windowRange(c, opts);
  return sliceCandles(c, from, to);
}

/**
 * `a` followed by `b` (`a` the older part). Where they overlap, `b` wins: the bars of `a` stamped
 * at or after b's first bar are dropped, because the later fetch carries the fresher (possibly
 * still-forming) bar, and the result must keep ascending strictly. prev_close survives only when
 * both sides have it.
 */
export function concatCandles(a: Candles, b: Candles): Candles {
  const nb = b.timestamp.length;
  if (nb === 0) return a.prev_close !== undefined && b.prev_close === undefined ? withoutPrevClose(a) : a;
  const keepA = lowerBound(a.timestamp, b.timestamp[0]);
  if (keepA === 0) return a.prev_close === undefined && b.prev_close !== undefined ? withoutPrevClose(b) : b;
  const n = keepA + nb;
  const both = a.prev_close !== undefined && b.prev_close !== undefined;
  const out = sizedCandles(n, both);
  const prev = out.prev_close;
  const extras = sharedFuturesColumns([a, b]);
  for (const name of extras) out[name] = new Array<number>(n);
  for (let k = 0; k < n; k++) {
    const src = k < keepA ? a : b;
    const i = k < keepA ? k : k - keepA;
    copyBar(out, k, src, i);
    if (prev !== undefined) prev[k] = (src.prev_close as number[])[i];
    for (const name of extras) (out[name] as number[])[k] = (src[name] as number[])[i];
  }
  return out;
}

/**
 * Parts in order, none overlapping the next (the caller checks), joined and windowed in one copy
 * (`opts` as for windowCandles: the newest `count` bars in [start, end]). Folding concatCandles
 * over k parts copied the growing head k times, and windowing the join copied it once more: for a
 * 60,000-bar series that is megabytes of large-object garbage a request. prev_close survives only
 * when every part has it.
 */
export function joinCandles(parts: readonly Candles[], opts: WindowOptions = {}): Candles {
  if (parts.length === 1) return windowCandles(parts[0], opts);
  const runs = parts.map((p) => ({ p, ...windowRange(p, { start: opts.start, end: opts.end }) }));
  let n = 0;
  let both = true;
  for (const r of runs) {
    n += r.to - r.from;
    if (r.p.prev_close === undefined) both = false;
  }
  let skip = opts.count === undefined ? 0 : Math.max(0, n - Math.max(0, Math.floor(opts.count)));
  const out = sizedCandles(n - skip, both);
  const prev = out.prev_close;
  const extras = sharedFuturesColumns(parts);
  for (const name of extras) out[name] = new Array<number>(n - skip);
  let k = 0;
  for (const { p, from, to } of runs) {
    const drop = Math.min(skip, to - from);
    skip -= drop;
    for (let i = from + drop; i < to; i++, k++) {
      copyBar(out, k, p, i);
      if (prev !== undefined) prev[k] = (p.prev_close as number[])[i];
      for (const name of extras) (out[name] as number[])[k] = (p[name] as number[])[i];
    }
  }
  return out;
}

function withoutPrevClose(c: Candles): Candles {
  const { prev_close: _dropped, ...rest } = c;
  return rest;
}

/**
 * Set prev_close to "the previous bar's close in the same adjustment": prev_close[k] = close[k−1],
 * prev_close[0] = firstPrevClose. The caller passes the (equally adjusted) close of the bar before
 * the series, usually by building one extra leading bar and dropping it afterwards (pipeline.ts).
 * When nothing precedes the series (listing day, or no history fetched) the first bar's open stands
 * in, so the column stays numeric (a NaN would serialise as null in a float column).
 */
export function withPrevClose(c: Candles, firstPrevClose: number | undefined): Candles {
  const n = c.timestamp.length;
  const prev = new Array<number>(n);
  if (n > 0) prev[0] = firstPrevClose !== undefined && Number.isFinite(firstPrevClose) ? firstPrevClose : c.open[0];
  for (let k = 1; k < n; k++) prev[k] = c.close[k - 1];
  return { ...c, prev_close: prev };
}
