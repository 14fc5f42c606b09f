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
 * Default bound of all memos together: 10 MiB. What the memos must hold is the working set of the
 * requests in flight, not the universe: a candle request holds the history it prepares for its
 * own call (market.ts `prepare`) and keeps its tail for the ex-factors lookup that follows, and a
 * quote batch no longer pushes the full histories it builds for its tails into the memo. With
 * those, the random memory soak (32 connections, 5000 symbols) runs as fast as the earlier code
 * at 16 MiB, with no upstream timeouts, and the service stays inside its cache bounds + 20 MiB
 * after GC (bench/suites/memory-soak.ts, at beed207). The floor is the stream: the hub refreshes
 * every subscribed symbol each tick in the same order, and an LRU smaller than that set misses on
 * every access; the tails and 1m days here hold all 145 CN and HK pool stocks (8 MiB did not).
 * A stream or load test over more simulated symbols wants more.
 */
export const DEFAULT_MEMO_MAX_BYTES = 10 * 1024 * 1024;
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
 * Shares of what the midnights leave: full histories (the candle requests in flight, 0.1–0.5 MB
 * each), days of 1m bars (~16 KB a symbol's day: the stream's in-progress day), recent tails
 * (~12 KB: quotes, depth, ex-factors and the stream), and the financial statements' inputs (a
 * symbol's planned actions and paid events, ~2–10 KB: financials.ts; the statements themselves
 * are rebuilt from them per call, ~1 ms a symbol, rather than kept at ~66 KB a symbol).
 */
const SHARES = { histories: 0.32, minuteDays: 0.33, tails: 0.27, statements: 0.08 } as const;

export interface MemoBudget {
  histories: number;
  minuteDays: number;
  tails: number;
  statements: number;
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
    statements: Math.floor(rest * SHARES.statements),
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

/** Bytes of a symbol's statement inputs: its planned actions and paid events. */
export function statementInputBytes(input: { planned: readonly unknown[]; events: readonly unknown[] }): number {
  return ENTRY_OVERHEAD + input.planned.length * ACTION_BYTES + input.events.length * EVENT_BYTES;
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
