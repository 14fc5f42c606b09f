// GET /v1/klines/ex-factors: one record per event at 00:00 exchange-local of the ex-date,
// inclusive start/end filters, keyed by normalised symbol.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { isLocalMidnight, type Region } from '../helpers/candles.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

interface Event {
  timestamp: number;
  ex_factor: number;
  cash_dividend?: number;
  bonus_ratio?: number;
  rights_ratio?: number;
  rights_price?: number;
  parts_known?: boolean;
}

async function exFactors(query: string) {
  const res = await app.inject({ url: `/v1/klines/ex-factors?${query}`, headers: { 'x-api-key': KEYS.demo } });
  expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
  expect(res.headers['x-upstream']).toBe('sim');
  return { data: res.json().data as Record<string, Event[]>, headers: res.headers };
}

describe('GET /v1/klines/ex-factors', () => {
  it.each([['600519.SH', 'CN'], ['00700.HK', 'HK'], ['AAPL.US', 'US'], ['000001.SZ', 'CN']] as const)(
    '%s: events at 00:00 local of their ex-date, ascending, in the past, per-event factors > 1', async (symbol, region: Region) => {
      const { data } = await exFactors(`symbols=${symbol}`);
      expect(Object.keys(data)).toEqual([symbol]);
      const events = data[symbol];
      expect(events.length).toBeGreaterThan(0);
      for (const [k, e] of events.entries()) {
        // The sim's records carry their parts (docs/contract.md#ex-factors-and-adjustment): cash and bonus shares, no rights issues.
        expect(Object.keys(e).sort()).toEqual(['bonus_ratio', 'cash_dividend', 'ex_factor', 'parts_known', 'rights_price', 'rights_ratio', 'timestamp']);
        expect(e.parts_known).toBe(true);
        expect(e.rights_ratio).toBe(0);
        expect(e.cash_dividend! > 0 || e.bonus_ratio! > 0).toBe(true);
        expect(isLocalMidnight(region, e.timestamp), new Date(e.timestamp).toISOString()).toBe(true);
        expect(e.timestamp).toBeLessThanOrEqual(CN_MORNING);
        expect(e.ex_factor).toBeGreaterThan(1);
        if (k > 0) expect(e.timestamp).toBeGreaterThan(events[k - 1].timestamp);
      }
    });

  it('start_time and end_time filter inclusively', async () => {
    const { data } = await exFactors('symbols=600519.SH');
    const all = data['600519.SH'];
    expect(all.length).toBeGreaterThan(10);
    const start = all[5].timestamp;
    const end = all[8].timestamp;
    const inclusive = await exFactors(`symbols=600519.SH&start_time=${start}&end_time=${end}`);
    expect(inclusive.data['600519.SH']).toEqual(all.slice(5, 9));
    const inner = await exFactors(`symbols=600519.SH&start_time=${start + 1}&end_time=${end - 1}`);
    expect(inner.data['600519.SH']).toEqual(all.slice(6, 8));
    const from = await exFactors(`symbols=600519.SH&start_time=${start}`);
    expect(from.data['600519.SH']).toEqual(all.slice(5));
    const to = await exFactors(`symbols=600519.SH&end_time=${end}`);
    expect(to.data['600519.SH']).toEqual(all.slice(0, 9));
    // Same start and end on an event day: that one event.
    const one = await exFactors(`symbols=600519.SH&start_time=${start}&end_time=${start}`);
    expect(one.data['600519.SH']).toEqual([all[5]]);
  });

  it('batch: keys are normalised symbols in request order; no events → []; unknown omitted and listed', async () => {
    const { data, headers } = await exFactors('symbols=aapl.us,700.hk,601012.SH,999999.SH,600519.sh,00700.HK');
    expect(Object.keys(data)).toEqual(['AAPL.US', '00700.HK', '601012.SH', '600519.SH']);
    expect(headers['x-missing-symbols']).toBe('999999.SH');
    // 隆基绿能 pays no dividend and has no bonus issues or splits in the sim.
    expect(data['601012.SH']).toEqual([]);
    const single = await exFactors('symbols=00700.HK');
    expect(data['00700.HK']).toEqual(single.data['00700.HK']);
  });

  it('a range with no events gives [] for a known symbol', async () => {
    const { data } = await exFactors(`symbols=600519.SH&start_time=${CN_MORNING}&end_time=${CN_MORNING + 1000}`);
    expect(data).toEqual({ '600519.SH': [] });
  });
});
