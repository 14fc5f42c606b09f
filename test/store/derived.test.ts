// Derived periods and adjust types computed on top of store-served raw bars equal those computed
// from a direct vendor fetch (the store only ever holds raw base bars).
import { afterAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { CandleQuery } from '../../adapters/types.ts';
import type { AdjustEvent } from '../../src/candles/adjust.ts';
import { buildCandles } from '../../src/candles/pipeline.ts';
import { lowerBound } from '../../src/candles/window.ts';
import type { AdjustType, Candles, Period } from '../../src/domain.ts';
import { localMidnight, localTimeMs } from '../../src/markets/calendar.ts';
import { aggregationFor, baseFetchFor, tradeDateStartFn } from '../../src/service/candle-plan.ts';
import { place, ref, simVendor } from './harness.ts';

const NOW = localTimeMs('CN', '2026-11-20', '20:00');
const sim = createSimAdapter({}, { now: () => NOW });
const p = place('sqlite');
afterAll(() => p.dispose());

async function events(symbol: ReturnType<typeof ref>, raw1d: Candles): Promise<AdjustEvent[]> {
  const factors = (await sim.getExFactors([symbol])).get(symbol.symbol) ?? [];
  return factors.map((f) => ({ timestamp: f.timestamp, ex_factor: f.ex_factor, prevClose: raw1d.close[lowerBound(raw1d.timestamp, f.timestamp) - 1] }));
}

describe('derived periods and adjustment on top of the store', () => {
  it('equal a direct vendor fetch for every adjust type', async () => {
    const tier = await p.open(() => NOW);
    const vendor = simVendor(() => NOW);
    const symbol = ref('600519.SH');
    const allDaily = (await sim.getCandles({ symbol, period: '1d' }))!;
    const ev = await events(symbol, allDaily);
    expect(ev.length).toBeGreaterThan(3);
    const cases: { period: Period; window: { start?: number; end?: number; count: number } }[] = [
      { period: '1w', window: { count: 60 } },
      { period: '1M', window: { start: localMidnight('CN', '2022-01-01'), end: localMidnight('CN', '2025-06-30'), count: 10_000 } },
      { period: '1d', window: { end: localMidnight('CN', '2024-12-31'), count: 300 } },
      { period: '15m', window: { count: 100 } },
      { period: '60m', window: { start: localTimeMs('CN', '2026-11-02', '09:30'), end: localTimeMs('CN', '2026-11-13', '15:00'), count: 10_000 } },
    ];
    const adjusts: AdjustType[] = ['none', 'forward', 'backward', 'forward_additive', 'backward_additive'];
    for (const c of cases) {
      const base = baseFetchFor(c.period, c.window);
      const q: CandleQuery = { symbol, period: base.period, start: base.start, end: base.end, count: base.count };
      const stored = (await tier.candles('sim', q, vendor.fetch))!;
      const again = (await tier.candles('sim', q, vendor.fetch))!;
      const fresh = (await sim.getCandles(q))!;
      for (const adjust of adjusts) {
        const build = (raw: Candles) => buildCandles({
          raw, events: adjust === 'none' ? [] : ev, adjust,
          tradeDateStart: base.period === '1m' ? tradeDateStartFn('CN') : undefined,
          aggregate: aggregationFor(c.period, 'CN'), window: { start: c.window.start, end: c.window.end, count: c.window.count },
        });
        const expected = build(fresh);
        expect(expected.timestamp.length).toBeGreaterThan(5);
        expect(build(stored)).toEqual(expected);
        expect(build(again)).toEqual(expected);
      }
    }
    await tier.close();
  });
});
