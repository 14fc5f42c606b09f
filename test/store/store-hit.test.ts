// The store hit (src/store/tier.ts #stored): a closed window the store covers whole is answered
// from one backend statement (coverage and bars from one snapshot: Backend.window), with no other
// backend call, no lock and no vendor call; its answer is exactly what the full pass (#serve)
// gives for the same state, for ranges, newest-N windows and minute bars, on both backends.
import { afterEach, describe, expect, it } from 'vitest';
import type { CandleQuery } from '../../adapters/types.ts';
import type { Period } from '../../src/domain.ts';
import { localMidnight, localTimeMs } from '../../src/markets/calendar.ts';
import type { Backend } from '../../src/store/backend.ts';
import { openBackend } from '../../src/store/index.ts';
import { labelsIn } from '../../src/store/labels.ts';
import { createHistoryMetrics } from '../../src/store/metrics.ts';
import { Tier } from '../../src/store/tier.ts';
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

const tierOn = (backend: Backend) => new Tier({
  backend, now, revision: { bars: { '1d': 2, '1m': 30 } }, metrics: createHistoryMetrics(undefined, backend.kind, async () => 0),
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
    // Outside the stored years: window() first, then the full pass fills the gap from the vendor.
    calls.length = 0;
    const older: CandleQuery = { ...q, start: localMidnight('CN', '2024-06-03') };
    const more = await fast.candles('sim', older, vendor.fetch);
    expect(calls[0]).toBe('window');
    expect(calls).toContain('fill');
    expect(vendor.calls.length).toBeGreaterThan(0);
    expect(more!.timestamp[0]).toBeLessThan(localMidnight('CN', '2024-11-01'));
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
