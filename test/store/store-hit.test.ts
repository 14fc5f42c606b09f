// The store hit (src/store/candle-store.ts #stored): a closed window the store covers whole is answered
// from one backend statement (coverage and bars from one snapshot: Backend.window), or from the
// hot blocks that statement read before (src/store/block-cache.ts), with no other backend call,
// no lock and no vendor call; its answer is exactly what the full pass (#serve) gives for the same
// state, for ranges, newest-N windows and minute bars, on both backends; this tier's fills and a
// drop by another process (within the cache's TTL) are seen.
import { afterEach, describe, expect, it } from 'vitest';
import type { CandleQuery } from '../../adapters/types.ts';
import type { Period } from '../../src/domain.ts';
import { localMidnight, localTimeMs } from '../../src/markets/calendar.ts';
import type { Backend } from '../../src/store/backend.ts';
import { BlockCache } from '../../src/store/block-cache.ts';
import { openBackend } from '../../src/store/index.ts';
import { labelsIn } from '../../src/store/labels.ts';
import { createHistoryMetrics } from '../../src/store/metrics.ts';
import { CandleStore } from '../../src/store/candle-store.ts';
import { place, ref, simVendor, type Place } from './harness.ts';

const AFTER_CLOSE = localTimeMs('CN', '2026-11-20', '20:00');
const now = () => AFTER_CLOSE;
const SYMBOLS = [ref('600519.SH'), ref('000001.SZ')];
const places: Place[] = [];
const backends: Backend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
  for (const p of places.splice(0)) await p.dispose();
});

const tierOn = (backend: Backend, options: { blockCacheTtlMs?: number; now?: () => number } = {}) => new CandleStore({
  backend, now: options.now ?? now, revision: { bars: { '1d': 2, '1m': 30 } }, metrics: createHistoryMetrics(undefined, backend.kind, async () => 0),
  blockCacheTtlMs: options.blockCacheTtlMs,
});

/** Every Backend method call on `backend`, by name. */
function spy(backend: Backend): string[] {
  const calls: string[] = [];
  for (const name of ['coverage', 'read', 'countBars', 'fill', 'window'] as const) {
    const fn = (backend[name] as (...a: unknown[]) => Promise<unknown>).bind(backend);
    (backend as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      calls.push(name);
      return fn(...args);
    };
  }
  return calls;
}

describe.each(['sqlite', 'postgres'] as const)('store hits on %s', (kind) => {
  async function setup() {
    const p = place(kind);
    places.push(p);
    const withWindow = await openBackend(p.options);
    // The same store through a backend without the one-statement read: the tier's full pass.
    const without = await openBackend(p.options);
    (without as { window?: unknown }).window = undefined;
    backends.push(withWindow, without);
    const vendor = simVendor(now);
    const fast = tierOn(withWindow);
    const full = tierOn(without);
    // Filled: two years of daily bars and two weeks of minute bars for each symbol.
    for (const symbol of SYMBOLS) {
      await full.candles('sim', { symbol, period: '1d', start: localMidnight('CN', '2024-11-01'), end: localMidnight('CN', '2026-11-20') }, vendor.fetch);
      await full.candles('sim', { symbol, period: '1m', start: localTimeMs('CN', '2026-11-09', '09:31'), end: localTimeMs('CN', '2026-11-20', '15:00') }, vendor.fetch);
    }
    vendor.reset();
    return { withWindow, fast, full, vendor };
  }

  it('a covered window: one window() statement, no other backend call, no vendor call', async () => {
    const { withWindow, fast, full, vendor } = await setup();
    const calls = spy(withWindow);
    const q: CandleQuery = { symbol: SYMBOLS[0], period: '1d', start: localMidnight('CN', '2025-03-03'), end: localMidnight('CN', '2026-01-09'), count: 1002 };
    const got = await fast.candles('sim', q, vendor.fetch);
    expect(calls).toEqual(['window']);
    expect(vendor.calls).toEqual([]);
    expect(got!.timestamp.length).toBeGreaterThan(200);
    expect(got).toEqual(await full.candles('sim', q, vendor.fetch));
    // Another window over the same blocks: the hot blocks answer, no statement at all.
    const inside: CandleQuery = { ...q, start: localMidnight('CN', '2025-05-06'), end: localMidnight('CN', '2025-11-14') };
    calls.length = 0;
    expect(await fast.candles('sim', inside, vendor.fetch)).toEqual(await full.candles('sim', inside, vendor.fetch));
    expect(calls).toEqual([]);
    // Outside the stored years: window() first, then the full pass fills the gap from the vendor.
    calls.length = 0;
    const older: CandleQuery = { ...q, start: localMidnight('CN', '2024-06-03') };
    const more = await fast.candles('sim', older, vendor.fetch);
    expect(calls[0]).toBe('window');
    expect(calls).toContain('fill');
    expect(vendor.calls.length).toBeGreaterThan(0);
    expect(more!.timestamp[0]).toBeLessThan(localMidnight('CN', '2024-11-01'));
    // That fill dropped the series' hot blocks: the next hit reads the new coverage.
    calls.length = 0;
    expect(await fast.candles('sim', older, vendor.fetch)).toEqual(more);
    expect(calls).toEqual(['window']);
  });

  it('a drop by another process is seen once the hot blocks are older than their TTL', async () => {
    const { withWindow, full, vendor } = await setup();
    let t = AFTER_CLOSE;
    const fast = tierOn(withWindow, { blockCacheTtlMs: 60_000, now: () => t });
    const q: CandleQuery = { symbol: SYMBOLS[0], period: '1d', start: localMidnight('CN', '2025-06-02'), end: localMidnight('CN', '2025-06-30') };
    const before = await fast.candles('sim', q, vendor.fetch);
    expect(before!.timestamp.length).toBeGreaterThan(15);
    // `full` stands for another process on the same store: its drop does not reach this tier's cache.
    await full.drop({ symbol: SYMBOLS[0].symbol, period: '1d', from: localMidnight('CN', '2025-06-01'), to: localMidnight('CN', '2025-06-30') });
    expect(await fast.candles('sim', q, vendor.fetch)).toEqual(before);
    expect(vendor.calls).toEqual([]);
    t += 60_001;
    expect(await fast.candles('sim', q, vendor.fetch)).toEqual(before);
    // Read again: the range is uncovered now, so the vendor is asked for it.
    expect(vendor.calls.length).toBe(1);
    // This tier's own drop clears its hot blocks at once.
    await fast.candles('sim', q, vendor.fetch);
    await fast.drop({ symbol: SYMBOLS[0].symbol, period: '1d', from: localMidnight('CN', '2025-06-01'), to: localMidnight('CN', '2025-06-30') });
    await fast.candles('sim', q, vendor.fetch);
    expect(vendor.calls.length).toBe(2);
  });

  it('answers exactly what the full pass answers: ranges, newest-N and ranges with a count, daily and minute', async () => {
    const { fast, full, vendor } = await setup();
    const daily = labelsIn('CN', '1d', localMidnight('CN', '2024-11-01'), localMidnight('CN', '2026-11-20'));
    const minute = labelsIn('CN', '1m', localTimeMs('CN', '2026-11-09', '09:31'), localTimeMs('CN', '2026-11-20', '15:00'));
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 16_807) % 2_147_483_647;
      return seed % n;
    };
    let compared = 0;
    for (let i = 0; i < 120; i++) {
      const period: Period = i % 3 === 2 ? '1m' : '1d';
      const labels = period === '1d' ? daily : minute;
      const a = rand(labels.length);
      const b = Math.min(labels.length - 1, a + rand(600));
      const q: CandleQuery = { symbol: SYMBOLS[i % 2], period: period as '1d' | '1m' };
      const shape = i % 4;
      // Newest-N windows stay inside the stored span (reaching before it is a fill, tested apart).
      if (shape === 0) Object.assign(q, { end: labels[b], count: 1 + rand(Math.max(1, Math.min(400, b - 5))) });
      else if (shape === 1) Object.assign(q, { start: labels[a] - rand(2) * 1000, end: labels[b], count: 1 + rand(700) });
      else if (shape === 2) Object.assign(q, { start: labels[a], end: labels[b] });
      else Object.assign(q, { start: labels[a], end: labels[b] + 59_000, count: 5 + rand(50) });
      const got = await fast.candles('sim', q, vendor.fetch);
      expect(got, JSON.stringify(q)).toEqual(await full.candles('sim', q, vendor.fetch));
      compared += got!.timestamp.length;
    }
    expect(vendor.calls).toEqual([]);
    expect(compared).toBeGreaterThan(5000);
  });
});

describe('BlockCache', () => {
  const DAY = 86_400_000;
  const blob = (bytes: number) => new Uint8Array(bytes);
  const seg = (lo: number, hi: number) => ({ lo, hi, recheckAt: null });
  // 1d blocks span 128 days: block b holds labels [b·128, (b+1)·128) days.
  const at = (block: number, day = 0) => (block * 128 + day) * DAY;

  it('knows a block range only as read, merges reads under the same coverage, replaces on other coverage', () => {
    const cache = new BlockCache({ maxBytes: 1 << 20, ttlMs: 60_000 });
    const cov = [seg(at(100), at(110))];
    cache.put('s', '1d', at(101), at(102, 5), cov, [{ block: 101, data: blob(10) }, { block: 102, data: blob(20) }], 0);
    expect(cache.get('s', '1d', at(101, 3), at(102, 1), 1)!.blobs.map((b) => b.byteLength)).toEqual([10, 20]);
    // Block 103 was never read: unknown, so no answer.
    expect(cache.get('s', '1d', at(102), at(103), 1)).toBeUndefined();
    // Block 103 read under the same coverage (absent: no bars there) joins the entry.
    cache.put('s', '1d', at(103), at(103, 9), cov, [], 2);
    expect(cache.get('s', '1d', at(101), at(103, 9), 3)!.blobs.map((b) => b.byteLength)).toEqual([10, 20]);
    // Other coverage: the entry is replaced whole (what was read under the old one is gone).
    cache.put('s', '1d', at(104), at(104, 1), [seg(at(100), at(111))], [{ block: 104, data: blob(5) }], 4);
    expect(cache.get('s', '1d', at(101), at(101, 1), 5)).toBeUndefined();
    expect(cache.get('s', '1d', at(104), at(104, 1), 5)!.coverage).toEqual([seg(at(100), at(111))]);
    // Older than the TTL, or forgotten: gone.
    expect(cache.get('s', '1d', at(104), at(104, 1), 4 + 60_001)).toBeUndefined();
    cache.put('s', '1d', at(104), at(104, 1), cov, [{ block: 104, data: blob(5) }], 0);
    cache.forget('s');
    expect(cache.get('s', '1d', at(104), at(104, 1), 1)).toBeUndefined();
  });

  it('stays within its byte bound, the least recently used series going first; 0 bytes holds nothing', () => {
    const cache = new BlockCache({ maxBytes: 64 * 1024, ttlMs: 60_000 });
    for (let i = 0; i < 20; i++) cache.put(`s${i}`, '1d', at(1), at(1, 1), [seg(0, at(9))], [{ block: 1, data: blob(8000) }], 0);
    expect(cache.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(cache.get('s19', '1d', at(1), at(1, 1), 1)).toBeDefined();
    expect(cache.get('s0', '1d', at(1), at(1, 1), 1)).toBeUndefined();
    const none = new BlockCache({ maxBytes: 0, ttlMs: 60_000 });
    none.put('s', '1d', at(1), at(1, 1), [seg(0, at(9))], [{ block: 1, data: blob(10) }], 0);
    expect(none.get('s', '1d', at(1), at(1, 1), 1)).toBeUndefined();
  });
});
