// The sim's answers cross the same boundary checks as a vendor's (issue 14.4): a fault-injected
// malformed row (faults.ts `invalidRowRate`) is put in here, as a vendor would send it, and the
// checks of adapters/common/validate.ts drop it. Clean answers pass through untouched.

import type { Candles, Depth, ExFactor, Instrument, Quote, SymbolRef } from '../../src/domain.ts';
import { checkedDepth, type DepthLevel } from '../common/shapes.ts';
import {
  checkCandles, checkExFactorList, checkQuotes, instrumentProblem, reject, settleBatch, type RowCheck,
} from '../common/validate.ts';
import type { BySymbol } from '../types.ts';
import type { Corruption } from './faults.ts';

/** Index of the row to spoil: the middle one, so windows at either end still see it. */
const middle = (n: number): number => Math.floor(n / 2);

export function corruptCandles(c: Candles, kind: Corruption | undefined): Candles {
  const n = c.timestamp.length;
  if (kind === undefined || n === 0) return c;
  const i = middle(n);
  const out: Candles = {
    timestamp: c.timestamp.slice(), open: c.open.slice(), high: c.high.slice(), low: c.low.slice(), close: c.close.slice(),
    volume: c.volume.slice(), amount: c.amount.slice(),
  };
  if (c.prev_close) out.prev_close = c.prev_close.slice();
  if (kind === 'negative_price') out.low[i] = -Math.abs(c.low[i]);
  else if (kind === 'non_finite') out.close[i] = Number.NaN;
  else if (kind === 'negative_volume') out.volume[i] = -1;
  else if (i > 0) {
    // The row before, sent twice: the repeat is dropped, so row i is what goes missing.
    for (const col of [out.timestamp, out.open, out.high, out.low, out.close, out.volume, out.amount, out.prev_close]) {
      if (col) col[i] = col[i - 1];
    }
  } else out.volume[i] = -1;
  return out;
}

/** Quotes in request order; a `duplicate` adds an older, different copy of the first one. */
export function corruptQuotes(quotes: Quote[], kind: Corruption | undefined): Quote[] {
  if (kind === undefined || quotes.length === 0) return quotes;
  const [first, ...rest] = quotes;
  switch (kind) {
    case 'negative_price': return [{ ...first, last_price: -first.last_price }, ...rest];
    case 'non_finite': return [{ ...first, volume: Number.NaN }, ...rest];
    case 'negative_volume': return [{ ...first, volume: -1 }, ...rest];
    default: return [first, { ...first, timestamp: first.timestamp - 60_000, last_price: first.prev_close }, ...rest];
  }
}

export function corruptDepth(depth: Depth, kind: Corruption | undefined): Depth {
  if (kind === undefined || depth.bid_prices.length === 0) return depth;
  const bid_prices = depth.bid_prices.slice();
  const bid_volumes = depth.bid_volumes.slice();
  if (kind === 'negative_volume') bid_volumes[0] = -1;
  else if (kind === 'non_finite') bid_prices[0] = Number.POSITIVE_INFINITY;
  else bid_prices[0] = -bid_prices[0];
  return { ...depth, bid_prices, bid_volumes };
}

export function corruptExFactors(events: ExFactor[], kind: Corruption | undefined): ExFactor[] {
  if (kind === undefined || events.length === 0) return events;
  if (kind === 'duplicate') return [...events, events[events.length - 1]];
  return [{ ...events[0], ex_factor: kind === 'non_finite' ? Number.NaN : -events[0].ex_factor }, ...events.slice(1)];
}

export function corruptInstrument(i: Instrument, kind: Corruption | undefined): Instrument {
  if (kind === undefined) return i;
  return { ...i, ext: { ...i.ext, tick_size: kind === 'non_finite' ? Number.NaN : -i.ext.tick_size } };
}

function levels(prices: number[], volumes: number[]): DepthLevel[] {
  return prices.map((price, k) => ({ price, volume: volumes[k] }));
}

export function checkDepthAnswer(depth: Depth, check: RowCheck): Depth | undefined {
  const ref = { symbol: depth.symbol, region: depth.region } as SymbolRef;
  const out = checkedDepth(ref, depth.timestamp, levels(depth.bid_prices, depth.bid_volumes), levels(depth.ask_prices, depth.ask_volumes), check);
  check.flush();
  return out;
}

/** One batch answer through its per-item check; refused when items came and none is usable. */
export function checkBatch<T>(items: Map<string, T>, keep: (symbol: string, item: T) => T | undefined, batch: RowCheck): BySymbol<T> {
  const out: BySymbol<T> = new Map<string, T>();
  for (const [symbol, item] of items) {
    const kept = keep(symbol, item);
    if (kept !== undefined) out.set(symbol, kept);
    else reject(out, symbol);
  }
  settleBatch(batch, items.size, out.size);
  return out;
}

export { checkCandles, checkExFactorList, checkQuotes, instrumentProblem };
