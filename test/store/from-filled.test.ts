// A series first seen by a request is answered from the bars that request just stored, not read
// back (src/store/candle-store.ts fromFilled): the answer must be exactly what the store returns for the
// same request once the series is covered, on both backends, for ranges, counts and minute bars.
import { afterEach, describe, expect, it } from 'vitest';
import type { CandleQuery } from '../../adapters/types.ts';
import { localMidnight, localTimeMs } from '../../src/markets/calendar.ts';
import type { HistoryStore } from '../../src/store/index.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHistoryMetrics } from '../../src/store/metrics.ts';
import { openSqliteBackend } from '../../src/store/sqlite.ts';
import { fromFilled, CandleStore } from '../../src/store/candle-store.ts';
import { place, ref, simVendor, type Place } from './harness.ts';

const AFTER_CLOSE = localTimeMs('CN', '2026-11-20', '20:00');
const d = (date: string) => localMidnight('CN', date);
const open: HistoryStore[] = [];
const places: Place[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
  for (const p of places.splice(0)) await p.dispose();
});

const QUERIES: Array<[string, CandleQuery]> = [
  ['a year of daily bars', { symbol: ref('600519.SH'), period: '1d', start: d('2025-01-01'), end: d('2025-12-31') }],
  ['the newest 700 daily bars', { symbol: ref('000001.SZ'), period: '1d', count: 700 }],
  ['the newest 3000 one-minute bars (several calls)', { symbol: ref('600036.SH'), period: '1m', count: 3000 }],
  ['two weeks of one-minute bars', { symbol: ref('601318.SH'), period: '1m', start: localTimeMs('CN', '2026-11-02', '09:31'), end: localTimeMs('CN', '2026-11-13', '15:00') }],
];

describe.each(['sqlite', 'postgres'] as const)('first answer of a new series on %s', (backend) => {
  it.each(QUERIES)('%s equals the store read of the same request', async (_label, query) => {
    const p = place(backend);
    places.push(p);
    const tier = await p.open(() => AFTER_CLOSE);
    open.push(tier);
    const vendor = simVendor(() => AFTER_CLOSE);
    const first = await tier.candles('sim', query, vendor.fetch, { maxBarsPerCall: 1000 });
    const calls = vendor.calls.length;
    expect(calls).toBeGreaterThan(0);
    const second = await tier.candles('sim', query, vendor.fetch, { maxBarsPerCall: 1000 });
    expect(vendor.calls.length).toBe(calls);
    expect(first!.timestamp.length).toBeGreaterThan(0);
    expect(first).toEqual(second);
  });
});

describe('no read-back', () => {
  it('answers a new series without reading the store, and a covered one by reading it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-from-filled-'));
    const backend = openSqliteBackend(join(dir, 'history.sqlite'));
    // A read of bars is either path: read(), or window() of a stored series (the store hit's
    // one-statement read; for a series not stored it reads no bars and answers undefined).
    let reads = 0;
    const read = backend.read.bind(backend);
    backend.read = (...args) => {
      reads += 1;
      return read(...args);
    };
    const window = backend.window!.bind(backend);
    backend.window = async (...args) => {
      const out = await window(...args);
      if (out !== undefined) reads += 1;
      return out;
    };
    const tier = new CandleStore({ backend, now: () => AFTER_CLOSE, revision: { bars: { '1d': 2, '1m': 30 } }, metrics: createHistoryMetrics(undefined, 'sqlite', async () => 0) });
    try {
      const vendor = simVendor(() => AFTER_CLOSE);
      const query = QUERIES[1][1];
      const first = await tier.candles('sim', query, vendor.fetch);
      expect(reads).toBe(0);
      const second = await tier.candles('sim', query, vendor.fetch);
      expect(reads).toBe(1);
      expect(first).toEqual(second);
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('fromFilled', () => {
  const bars = (ts: number[], prev?: number[]) => ({
    timestamp: ts, open: ts.map(() => 1), high: ts.map(() => 2), low: ts.map(() => 0.5), close: ts.map(() => 1.5),
    volume: ts.map(() => 10), amount: ts.map(() => 15), ...(prev ? { prev_close: prev } : {}),
  });

  it('orders the pieces, keeps [lo, hi] and the newest n', () => {
    const out = fromFilled([bars([5, 6]), bars([1, 2, 3])], 2, 6, 3);
    expect(out?.timestamp).toEqual([3, 5, 6]);
    expect(fromFilled([bars([5, 6]), bars([1, 2, 3])], 2, 5, undefined)?.timestamp).toEqual([2, 3, 5]);
  });

  it('gives up (the caller reads the store) when unsure', () => {
    expect(fromFilled([], 0, 10, undefined)).toBeUndefined();
    expect(fromFilled([bars([1, 2]), bars([2, 3])], 0, 10, undefined)).toBeUndefined();
    expect(fromFilled([bars([1, 2], [1, 1]), bars([3])], 0, 10, undefined)).toBeUndefined();
    expect(fromFilled([bars([1, 2])], 5, 10, undefined)).toBeUndefined();
  });

  it('gives up when the pieces disagree on a futures column: the store keeps open_interest for the bars that have it', () => {
    const withOi = (ts: number[]) => ({ ...bars(ts), open_interest: ts.map((t) => 1000 + t), settlement_price: ts.map(() => 1.2) });
    // [5, 6] only: the store reads them with their open interest (the other piece's bars are not in the window).
    expect(fromFilled([withOi([5, 6]), bars([1, 2, 3])], 5, 6, undefined)).toBeUndefined();
    expect(fromFilled([withOi([5, 6]), bars([1, 2, 3])], 0, 10, 2)).toBeUndefined();
    // Pieces that agree are joined with their columns.
    expect(fromFilled([withOi([5, 6]), withOi([1, 2, 3])], 2, 6, undefined)?.open_interest).toEqual([1002, 1003, 1005, 1006]);
  });
});
