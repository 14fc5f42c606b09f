// Replay of real Eastmoney responses found in public repositories (sources: mocks/fixtures/README.md),
// served through msw to the adapter, each served field checked against what the vendor's own
// fields imply: close − change (f60) = prev_close, amplitude and change % against it, volume units,
// the stated decimals, preKPrice for the first row; a newly listed stock, a US name, an index with
// no change column, instrument metadata.

import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import type { Candles } from '../../src/domain.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { cnTime, ref, testHttp, vendorServer } from './helpers.ts';

const QUOTE = 'https://push2.replay.test';
const HISTORY = 'https://push2his.replay.test';
let klines: Record<string, string> = {};
let stock: Record<string, string> = {};

const { server } = vendorServer([
  http.get(`${HISTORY}/api/qt/stock/kline/get`, ({ request }) => {
    const name = klines[new URL(request.url).searchParams.get('secid') ?? ''];
    return HttpResponse.json(name === undefined ? fixture('eastmoney', 'stock-empty') : fixture('eastmoney', name));
  }),
  http.get(`${QUOTE}/api/qt/stock/trends2/get`, ({ request }) => {
    const name = stock[`trends:${new URL(request.url).searchParams.get('secid') ?? ''}`];
    return HttpResponse.json(name === undefined ? fixture('eastmoney', 'stock-empty') : fixture('eastmoney', name));
  }),
  http.get(`${QUOTE}/api/qt/stock/get`, ({ request }) => {
    const name = stock[new URL(request.url).searchParams.get('secid') ?? ''];
    return HttpResponse.json(name === undefined ? fixture('eastmoney', 'stock-empty') : fixture('eastmoney', name));
  }),
], () => {
  klines = {};
  stock = {};
});

const NOW = cnTime('2026-11-01', '12:00');
const adapter = () => createEastmoneyAdapter(
  { quoteHosts: [QUOTE], historyHosts: [HISTORY], datacenterHosts: ['https://dc.replay.test'], usMarkets: { APP: 105 } },
  { now: () => NOW, http: testHttp('eastmoney') },
);

interface Row { date: string; open: number; close: number; high: number; low: number; volume: number; amount: number; amplitude: number; changePct?: number; change?: number }
function rows(name: string): { rows: Row[]; decimal: number; preKPrice: number } {
  const body = fixture<{ data: { klines: string[]; decimal: number; preKPrice: number } }>('eastmoney', name);
  return {
    decimal: body.data.decimal,
    preKPrice: body.data.preKPrice,
    rows: body.data.klines.map((line) => {
      const c = line.split(',');
      const n = (i: number) => Number(c[i]);
      return {
        date: c[0], open: n(1), close: n(2), high: n(3), low: n(4), volume: n(5), amount: n(6), amplitude: n(7),
        ...(c.length > 9 ? { changePct: n(8), change: n(9) } : {}),
      };
    }),
  };
}

const decimalsOf = (x: number) => (Number.isInteger(x) ? 0 : String(x).split('.')[1].length);

/** Every served field against the vendor's own row; `shares` is the volume unit. */
function checkAgainstRows(c: Candles, region: 'CN' | 'HK' | 'US', name: string, shares: number): void {
  const { rows: vendor, decimal, preKPrice } = rows(name);
  expect(c.timestamp).toEqual(vendor.map((r) => localMidnight(region, r.date)));
  expect(c.open).toEqual(vendor.map((r) => r.open));
  expect(c.close).toEqual(vendor.map((r) => r.close));
  expect(c.high).toEqual(vendor.map((r) => r.high));
  expect(c.low).toEqual(vendor.map((r) => r.low));
  expect(c.volume).toEqual(vendor.map((r) => r.volume * shares));
  expect(c.amount).toEqual(vendor.map((r) => r.amount));
  const prev = c.prev_close!;
  vendor.forEach((r, i) => {
    // The vendor's previous close: close − change where it sends change, else preKPrice / the row before.
    const expected = r.change !== undefined ? Math.round((r.close - r.change) * 10 ** decimal) / 10 ** decimal : i === 0 ? preKPrice : vendor[i - 1].close;
    expect(prev[i]).toBe(expected);
    // …and it is the base of the vendor's own amplitude and change % (to their 2-decimal print).
    expect(Math.abs(((r.high - r.low) / prev[i]) * 100 - r.amplitude)).toBeLessThanOrEqual(0.006);
    if (r.changePct !== undefined) expect(Math.abs(((r.close - prev[i]) / prev[i]) * 100 - r.changePct)).toBeLessThanOrEqual(0.006);
    // No served raw price has more decimals than the vendor states (data.decimal).
    for (const p of [c.open[i], c.high[i], c.low[i], c.close[i], prev[i]]) expect(decimalsOf(p)).toBeLessThanOrEqual(decimal);
  });
  // The answer's first row: close − change agrees with the vendor's preKPrice.
  expect(prev[0]).toBe(preKPrice);
}

describe('eastmoney replay: daily klines', () => {
  it('601872.SH, ten days of 2024-12: lots ×100, prev_close = close − change = the row before, first = preKPrice 6.08', async () => {
    klines = { '1.601872': 'replay-kline-daily-601872' };
    const c = (await adapter().getCandles({ symbol: ref('601872.SH'), period: '1d', start: cnTime('2024-12-18'), end: cnTime('2024-12-31') }))!;
    checkAgainstRows(c, 'CN', 'replay-kline-daily-601872', 100);
    // No ex-date inside: each prev_close is the close of the bar before.
    for (let i = 1; i < c.close.length; i++) expect(c.prev_close![i]).toBe(c.close[i - 1]);
  });

  it('AAPL-style US name (105.APP, first weeks after the 2021-04-15 IPO, decimal 3): the vendor\'s previous close is kept, not the open', async () => {
    klines = { '105.APP': 'replay-kline-weekly-app-us' };
    const c = (await adapter().getCandles({ symbol: ref('APP.US'), period: '1d', start: localMidnight('US', '2021-04-01'), end: localMidnight('US', '2021-06-01') }))!;
    checkAgainstRows(c, 'US', 'replay-kline-weekly-app-us', 1);
    // 61.000 − (−19.000) = 80.000, the IPO price; the open was 70.000.
    expect(c.prev_close![0]).toBe(80);
    expect(c.open[0]).toBe(70);
  });

  it('688147.SH on its listing day: prev_close is the issue price 31.75 (close 38.10 − change 6.35)', async () => {
    klines = { '1.688147': 'replay-kline-listing-688147' };
    const c = (await adapter().getCandles({ symbol: ref('688147.SH'), period: '1d', start: cnTime('2023-01-01'), end: cnTime('2023-03-01') }))!;
    checkAgainstRows(c, 'CN', 'replay-kline-listing-688147', 100);
    expect(c.prev_close).toEqual([31.75]);
  });

  it('000300.SH (index, fields f51…f58, no change column): prev_close from preKPrice, then the row before', async () => {
    klines = { '1.000300': 'replay-kline-index-000300' };
    const c = (await adapter().getCandles({ symbol: ref('000300.SH'), period: '1d', start: cnTime('2026-09-28'), end: cnTime('2026-09-30') }))!;
    checkAgainstRows(c, 'CN', 'replay-kline-index-000300', 100);
    expect(c.prev_close).toEqual([4439.14, 4340.76, 4345.21]);
  });

  it('the same answer without preKPrice: the first bar has no vendor previous close, so the column is left out (README)', async () => {
    const body = fixture<{ data: Record<string, unknown> }>('eastmoney', 'replay-kline-index-000300');
    delete body.data.preKPrice;
    server.use(http.get(`${HISTORY}/api/qt/stock/kline/get`, () => HttpResponse.json(body)));
    const c = (await adapter().getCandles({ symbol: ref('000300.SH'), period: '1d', start: cnTime('2026-09-28'), end: cnTime('2026-09-30') }))!;
    expect(c.close).toEqual([4340.76, 4345.21, 4357.62]);
    expect(c.prev_close).toBeUndefined();
  });

  it('an unknown secid (data: null) is an unknown symbol, not an error', async () => {
    expect(await adapter().getCandles({ symbol: ref('999999.SH'), period: '1d', count: 5 })).toBeUndefined();
  });
});

describe('eastmoney replay: stock/get', () => {
  it('TSLA.US metadata (real answer without fltt): f59 3 decimals → tick 0.001, f189 listing 2010-06-29, f84/f85 shares', async () => {
    stock = { '105.TSLA': 'replay-stock-instrument-tsla' };
    const a = createEastmoneyAdapter(
      { quoteHosts: [QUOTE], historyHosts: [HISTORY], usMarkets: { TSLA: 105 } },
      { now: () => NOW, http: testHttp('eastmoney') },
    );
    const i = (await a.getInstruments([ref('TSLA.US')])).get('TSLA.US')!;
    const raw = fixture<{ data: Record<string, number | string> }>('eastmoney', 'replay-stock-instrument-tsla').data;
    expect(i).toMatchObject({ code: 'TSLA', exchange: 'US', name: raw.f58, region: 'US', symbol: 'TSLA.US', type: 'stock' });
    expect(i.ext).toMatchObject({ listing_date: '2010-06-29', total_shares: raw.f84, float_shares: raw.f85, limit_up: null, limit_down: null });
  });

  it('00700.HK quote capture of 2026-08-07 agrees with the Yahoo capture of the same session (see yahoo-replay)', () => {
    // Integer form (no fltt): HK prices ×1000. f43 478.8 last, f60 479.2 previous close, f169 −0.4 = f43 − f60.
    const d = fixture<{ data: Record<string, number> }>('eastmoney', 'replay-stock-quote-00700').data;
    expect((d.f43 - d.f60) / 1000).toBeCloseTo(d.f169 / 1000, 9);
    expect(((d.f44 - d.f45) / d.f60) * 100).toBeCloseTo(d.f171 / 100, 2);
    const yahoo = fixture<{ chart: { result: Array<{ indicators: { quote: Array<Record<string, number[]>> } }> } }>('yahoo', 'replay-chart-5d-0700hk');
    const q = yahoo.chart.result[0].indicators.quote[0];
    const round3 = (x: number) => Math.round(x * 1000) / 1000;
    expect([round3(q.open[4]), round3(q.high[4]), round3(q.low[4]), round3(q.close[4]), round3(q.close[3])])
      .toEqual([d.f46 / 1000, d.f44 / 1000, d.f45 / 1000, d.f43 / 1000, d.f60 / 1000]);
    expect(q.volume[4] - d.f47).toBeLessThan(200); // Yahoo 16 320 039 vs Eastmoney 16 319 939 shares: same session
  });

  it('trends2 of 600000.SH at 09:30 on 2026-05-08 (the opening print, volume 0): one 09:31 bar, prev_close = preClose 9.09', async () => {
    stock = { 'trends:1.600000': 'replay-trends-600000' };
    const a = createEastmoneyAdapter({ quoteHosts: [QUOTE], historyHosts: [HISTORY] }, { now: () => cnTime('2026-05-08', '09:31'), http: testHttp('eastmoney') });
    const c = (await a.getIntraday!(ref('600000.SH')))!;
    expect(c.timestamp).toEqual([cnTime('2026-05-08', '09:31')]);
    expect([c.open[0], c.high[0], c.low[0], c.close[0], c.volume[0], c.amount[0]]).toEqual([9.08, 9.08, 9.08, 9.08, 0, 0]);
    expect(c.prev_close).toEqual([9.09]);
  });
});
