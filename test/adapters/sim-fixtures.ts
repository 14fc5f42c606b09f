// Shared fixtures for the sim adapter tests: fixed clocks and shape checks.
import { expect } from 'vitest';
import type { Candles, SymbolRef } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { createSimAdapter, type SimOptions } from '../../adapters/sim/index.ts';
import type { Adapter } from '../../adapters/types.ts';

/** Wednesday 2025-06-18 10:15:30 in Shanghai and Hong Kong; 22:15:30 on Tuesday in New York. */
export const WED_MORNING = Date.parse('2025-06-18T02:15:30Z');
/** Saturday 2025-06-21 12:00 Shanghai. */
export const SATURDAY = Date.parse('2025-06-21T04:00:00Z');
/** National Day 2025-10-01 10:00 Shanghai (an exchange holiday). */
export const NATIONAL_DAY = Date.parse('2025-10-01T02:00:00Z');
/** Wednesday 2025-06-18 16:00 Shanghai, after the close. */
export const AFTER_CLOSE = Date.parse('2025-06-18T08:00:00Z');
/** Wednesday 2025-06-18 09:00 Shanghai, before the open. */
export const BEFORE_OPEN = Date.parse('2025-06-18T01:00:00Z');

export function simAt(now: number, options: SimOptions = {}): ReturnType<typeof createSimAdapter> {
  return createSimAdapter(options, { now: () => now });
}

export function ref(symbol: string): SymbolRef {
  const parsed = parseSymbol(symbol);
  if (parsed === undefined) throw new Error(`bad symbol ${symbol}`);
  return parsed;
}

/** Equal columns, strictly ascending timestamps, 0 < low ≤ open/close ≤ high, integer volumes. */
export function expectWellFormed(candles: Candles): void {
  const n = candles.timestamp.length;
  const problems: string[] = [];
  for (const column of [candles.open, candles.high, candles.low, candles.close, candles.volume, candles.amount, candles.prev_close ?? candles.open]) {
    if (column.length !== n) problems.push(`column length ${column.length} ≠ ${n}`);
  }
  for (let i = 0; i < n; i++) {
    const [open, high, low, close] = [candles.open[i], candles.high[i], candles.low[i], candles.close[i]];
    if (i > 0 && !(candles.timestamp[i] > candles.timestamp[i - 1])) problems.push(`not ascending at ${i}`);
    if (!(low > 0 && low <= Math.min(open, close) && Math.max(open, close) <= high)) {
      problems.push(`bar ${i} at ${candles.timestamp[i]}: o=${open} h=${high} l=${low} c=${close}`);
    }
    if (!Number.isInteger(candles.volume[i]) || candles.volume[i] < 0) problems.push(`volume ${candles.volume[i]} at ${i}`);
  }
  expect(problems).toEqual([]);
}

/** The daily bar that a day's 1m bars make up. */
export function aggregate(candles: Candles): { open: number; high: number; low: number; close: number; volume: number; amount: number } {
  const n = candles.timestamp.length;
  return {
    open: candles.open[0],
    high: Math.max(...candles.high),
    low: Math.min(...candles.low),
    close: candles.close[n - 1],
    volume: candles.volume.reduce((a, b) => a + b, 0),
    amount: candles.amount.reduce((a, b) => a + Math.round(b * 100), 0) / 100,
  };
}

export function barAt(candles: Candles, i: number) {
  return {
    open: candles.open[i], high: candles.high[i], low: candles.low[i], close: candles.close[i],
    volume: candles.volume[i], amount: candles.amount[i],
  };
}
