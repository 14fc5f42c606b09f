// Replay of real Yahoo v8 chart answers found in public material (sources: mocks/fixtures/README.md):
// float32 noise is rounded to the vendor's stated decimals (meta.priceHint) at the adapter
// boundary, and the first bar keeps the vendor's previous close (meta.chartPreviousClose).

import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createYahooAdapter } from '../../adapters/yahoo/index.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { ref, testHttp, vendorServer } from './helpers.ts';

const BASE = 'https://yahoo.replay.test';
let answers: Record<string, string> = {};

vendorServer([
  http.get(`${BASE}/v8/finance/chart/:ticker`, ({ params }) => {
    const name = answers[String(params.ticker)];
    return name === undefined
      ? HttpResponse.json(fixture('yahoo', 'chart-not-found'), { status: 404 })
      : HttpResponse.json(fixture('yahoo', name));
  }),
], () => {
  answers = {};
});

type ChartBody = { chart: { result: Array<{ meta: Record<string, number>; timestamp: number[]; indicators: { quote: Array<Record<string, number[]>> } }> } };
const decimalsOf = (x: number) => (Number.isInteger(x) ? 0 : String(x).split('.')[1].length);

function replay(name: string, symbol: string, now: number) {
  const body = fixture<ChartBody>('yahoo', name).chart.result[0];
  const adapter = createYahooAdapter({ baseUrl: BASE }, { now: () => now, http: testHttp('yahoo') });
  return { body, adapter, ref: ref(symbol) };
}

const cases = [
  { name: 'replay-chart-5d-0700hk', symbol: '00700.HK', ticker: '0700.HK', region: 'HK' as const, dates: ['2026-08-03', '2026-08-04', '2026-08-05', '2026-08-06', '2026-08-07'] },
  { name: 'replay-chart-5d-nvda', symbol: 'NVDA.US', ticker: 'NVDA', region: 'US' as const, dates: ['2024-01-16', '2024-01-17', '2024-01-18', '2024-01-19', '2024-01-22'] },
];

describe('yahoo replay: daily charts', () => {
  for (const c of cases) {
    it(`${c.symbol}: every price rounded to priceHint, nothing more; chartPreviousClose on the first bar; field by field`, async () => {
      answers = { [c.ticker]: c.name };
      const { body, adapter, ref: symbol } = replay(c.name, c.symbol, localMidnight(c.region, c.dates[4]) + 86_400_000);
      const hint = body.meta.priceHint;
      const out = (await adapter.getCandles({ symbol, period: '1d', start: localMidnight(c.region, c.dates[0]), end: localMidnight(c.region, c.dates[4]) }))!;
      const q = body.indicators.quote[0];
      const r = (x: number) => Math.round(x * 10 ** hint) / 10 ** hint;
      expect(out.timestamp).toEqual(c.dates.map((d) => localMidnight(c.region, d)));
      expect(out.open).toEqual(q.open.map(r));
      expect(out.high).toEqual(q.high.map(r));
      expect(out.low).toEqual(q.low.map(r));
      expect(out.close).toEqual(q.close.map(r));
      expect(out.volume).toEqual(q.volume);
      expect(out.prev_close).toEqual([body.meta.chartPreviousClose, ...q.close.slice(0, 4).map(r)]);
      // The precision test: no served raw price has more decimals than the vendor states.
      for (const column of [out.open, out.high, out.low, out.close, out.prev_close!]) {
        for (const p of column) expect(decimalsOf(p)).toBeLessThanOrEqual(hint);
      }
      // The last close is the vendor's own regularMarketPrice.
      expect(out.close[4]).toBe(body.meta.regularMarketPrice);
    });
  }

  it('00700.HK: 493.3999938964844 → 493.4 and 479.20001220703125 → 479.2 (Eastmoney printed 479.2 for that bar)', async () => {
    answers = { '0700.HK': 'replay-chart-5d-0700hk' };
    const { adapter, ref: symbol } = replay('replay-chart-5d-0700hk', '00700.HK', localMidnight('HK', '2026-08-08'));
    const out = (await adapter.getCandles({ symbol, period: '1d', count: 5 }))!;
    expect(out.open[2]).toBe(493.4);
    expect(out.close[3]).toBe(479.2);
    expect(out.prev_close![4]).toBe(479.2);
    const em = fixture<{ data: Record<string, number> }>('eastmoney', 'replay-stock-quote-00700').data;
    expect(out.prev_close![4]).toBe(em.f60 / 1000);
    expect(out.close[4]).toBe(em.f43 / 1000);
  });

  it('an unknown ticker (404 "No data found") is an unknown symbol', async () => {
    const { adapter } = replay('replay-chart-5d-nvda', 'ZZZZ.US', localMidnight('US', '2024-01-23'));
    expect(await adapter.getCandles({ symbol: ref('ZZZZ.US'), period: '1d', count: 5 })).toBeUndefined();
  });
});
