// What the sim's memos weigh, so they can be bounded by bytes (adapters.sim.memoMaxBytes) rather
// than by entry count: a history weighs 65 KB (a recent listing) to 530 KB (25 years), a quote
// tail 7–14 KB, a day of 1m bars 14–22 KB (measured at 2026-11-23). Numeric columns count their
// buffers' real byteLength (spare capacity included); the rest is estimated from V8's layouts (an
// array slot holds a 4-byte compressed pointer or an 8-byte unboxed double, a small object ~100
// bytes): the estimate came within 7% of the heap growth measured for 524 histories.

import { localMidnight } from '../../src/markets/calendar.ts';
import type { DailyHistory, Midnight } from './daily.ts';
import type { SimInstrument } from './instruments.ts';
import { minuteBarsBytes, type MinuteBars } from './minute.ts';

/**
 * Default bound of all memos together: 8 MiB. What the memos must hold is the working set of the
 * requests in flight: a candle request holds the history it prepares for its own call
 * (market.ts `prepare`) and keeps its tail for the ex-factors lookup that follows, and a quote
 * batch no longer pushes the full histories it builds for its tails into the memo. With those,
 * the random memory soak (32 connections, 5000 symbols) runs as fast at 8 MiB as the earlier code
 * at 16, with no upstream timeouts, and the service stays inside its cache bounds + 20 MiB after
 * GC (BENCHMARKS.md, "Memory", seventh session). A load test that polls the candles of the same
 * few hundred symbols may want more.
 */
export const DEFAULT_MEMO_MAX_BYTES = 8 * 1024 * 1024;
/** Below this a single long history no longer fits its share (each memo holds ≥ one entry). */
export const MIN_MEMO_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Entries per region of the midnight memo: every trading day from HISTORY_START (2000) for 32
 * years. The memo is keyed by date, so what it needs is the calendar's span, not a share of the
 * bound: sized as a share (1,747 entries at 8 MiB) it was cleared in the middle of every 25-year
 * history (~6,700 days) and each cold build computed its midnights again, +6–25 % CPU a cold
 * request. It is charged to the bound first: 3 × 8,192 × 48 bytes = 1.125 MiB.
 */
export const MIDNIGHT_ENTRIES = 8_192;
/**
 * Shares of what the midnights leave: full histories (the candle requests in flight, ~20 in the
 * soak, 0.1–0.5 MB each), days of 1m bars, recent tails (quotes and ex-factors).
 */
const SHARES = { histories: 0.6, minuteDays: 0.2, tails: 0.2 } as const;

export interface MemoBudget {
  histories: number;
  minuteDays: number;
  tails: number;
  /** Entries per region of the midnight memo. */
  midnightEntries: number;
}

/** Object headers, the memo's own entry and the views over each buffer. */
const ENTRY_OVERHEAD = 512;
const SLOT = 8;
const EVENT_BYTES = 160;
const ACTION_BYTES = 96;
/** A Map entry number → number: key, boxed value and its share of the hash table. */
export const MIDNIGHT_ENTRY_BYTES = 48;

export function memoBudget(maxBytes: number | undefined): MemoBudget {
  const total = Math.max(MIN_MEMO_MAX_BYTES, Math.floor(maxBytes ?? DEFAULT_MEMO_MAX_BYTES));
  const rest = total - 3 * MIDNIGHT_ENTRIES * MIDNIGHT_ENTRY_BYTES;
  return {
    histories: Math.floor(rest * SHARES.histories),
    minuteDays: Math.floor(rest * SHARES.minuteDays),
    tails: Math.floor(rest * SHARES.tails),
    midnightEntries: MIDNIGHT_ENTRIES,
  };
}

/** Bytes a history (full or tail) holds: columns, date slots, the walk's days and noise, events, plan. */
export function historyBytes(history: DailyHistory): number {
  let bytes = ENTRY_OVERHEAD;
  bytes += history.timestamp.buffer.byteLength + history.open.buffer.byteLength + history.high.buffer.byteLength
    + history.low.buffer.byteLength + history.close.buffer.byteLength + history.volume.buffer.byteLength
    + history.amount.buffer.byteLength + history.prevClose.buffer.byteLength;
  // Date strings are shared with the region's trading-day list; the array holds pointers.
  bytes += history.dates.length * SLOT;
  const walk = history.walk;
  if (walk !== undefined) bytes += (walk.days.length + walk.noise.length) * SLOT;
  bytes += history.events.length * EVENT_BYTES + history.planned.length * ACTION_BYTES;
  return bytes;
}

export function minuteDayBytes(bars: MinuteBars): number {
  return ENTRY_OVERHEAD + minuteBarsBytes(bars);
}

/** localMidnight memo of one region keyed by YYYYMMDD, cleared when it reaches `limit` entries. */
export function midnightMemo(region: SimInstrument['region'], memo: Map<number, number>, limit: number): Midnight {
  return (date, key) => {
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    if (memo.size >= limit) memo.clear();
    const value = localMidnight(region, date);
    memo.set(key, value);
    return value;
  };
}
