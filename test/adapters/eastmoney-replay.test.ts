// Replay of real Eastmoney responses found in public repositories (sources: mocks/fixtures/README.md),
// served through msw to the adapter, each served field checked against what the vendor's own
// fields imply: close − change (f60) = prev_close, amplitude and change % against it, volume units,
// the stated decimals, preKPrice for the first row; a newly listed stock, a US name, an index with
// no change column, instrument metadata; ulist quotes (a five-code snapshot, a limit-up day and a
// listing with '-' for every day field), five-level depth, and the vendor's own "no such code"
// answers (rc 100 / 102 with data: null, the datacenter's 9201).

import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import { deriveExFactors, parseDividendRows } from '../../adapters/eastmoney/exfactors.ts';
import { payloadReader, rowCheck } from '../../adapters/common/validate.ts';
import type { Candles } from '../../src/domain.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { cnTime, ref, testHttp, vendorServer } from './helpers.ts';

const QUOTE = 'https://push2.replay.test';
const HISTORY = 'https://push2his.replay.test';
const DATACENTER = 'https://dc.replay.test';
let klines: Record<string, string> = {};
let stock: Record<string, string> = {};
/** The ulist.np answer to serve (a fixture name), and the `secids` each ulist call asked for. */
let ulist: string | undefined;
let ulistAsked: string[] = [];

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
  http.get(`${QUOTE}/api/qt/ulist.np/get`, ({ request }) => {
    ulistAsked.push(new URL(request.url).searchParams.get('secids') ?? '');
    return HttpResponse.json(fixture('eastmoney', ulist ?? 'replay-ulist-unknown-rc102'));
  }),
  http.get(`${DATACENTER}/api/data/v1/get`, () => HttpResponse.json(fixture('eastmoney', 'replay-datacenter-empty-9201'))),
], () => {
  klines = {};
  stock = {};
  ulist = undefined;
  ulistAsked = [];
});

const NOW = cnTime('2026-11-01', '12:00');
const adapter = () => createEastmoneyAdapter(
  { quoteHosts: [QUOTE], historyHosts: [HISTORY], datacenterHosts: [DATACENTER], usMarkets: { APP: 105 } },
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

type UlistRow = Record<string, number | string>;
const ulistRows = (name: string) => fixture<{ data: { diff: UlistRow[] } }>('eastmoney', name).data.diff;
const num = (v: number | string) => (v === '-' ? null : Number(v));

describe('eastmoney replay: ulist.np quotes', () => {
  // The snapshot of 2026-09-30 after the close, five secids in one call (two codes 000001 on two markets).
  const SYMBOLS = ['600000.SH', '000001.SZ', '000001.SH', '300750.SZ', '601398.SH'];
  const SECIDS = ['1.600000', '0.000001', '1.000001', '0.300750', '1.601398'];

  it('five codes field by field: f2/f17/f15/f16/f18 prices, f5 lots ×100, f6 amount, f124 time, derived change/pct/amplitude', async () => {
    ulist = 'replay-ulist-quotes-20260930';
    const quotes = await adapter().getQuotes(SYMBOLS.map(ref));
    expect(ulistAsked.map((s) => s.split(',').sort())).toEqual([[...SECIDS].sort()]);
    expect([...quotes.keys()].sort()).toEqual([...SYMBOLS].sort());
    for (const row of ulistRows('replay-ulist-quotes-20260930')) {
      const symbol = SYMBOLS[SECIDS.indexOf(`${row.f13}.${row.f12}`)];
      const q = quotes.get(symbol)!;
      const [last, open, high, low, prev] = [row.f2, row.f17, row.f15, row.f16, row.f18].map(Number);
      expect(q).toMatchObject({ symbol, region: 'CN', last_price: last, open, high, low, prev_close: prev });
      expect(q.volume).toBe(Number(row.f5) * 100);
      expect(q.amount).toBe(Number(row.f6));
      expect(q.timestamp).toBe(Number(row.f124) * 1000);
      // After the 15:00 close of 2026-09-30, Beijing time.
      expect(q.timestamp).toBeGreaterThanOrEqual(cnTime('2026-09-30', '15:00'));
      expect(q.timestamp).toBeLessThan(cnTime('2026-10-01'));
      expect(q.ext.name).toBe(row.f14);
      // The answer carries no f3/f4/f7: each is derived from the vendor's own prices.
      expect(q.ext.change_amount).toBeCloseTo(last - prev, 9);
      expect(q.ext.change_pct).toBeCloseTo((last - prev) / prev, 9);
      expect(q.ext.amplitude).toBeCloseTo((high - low) / prev, 9);
      for (const p of [q.last_price, q.open, q.high, q.low, q.prev_close]) expect(decimalsOf(p)).toBeLessThanOrEqual(2);
    }
  });

  it('the secid, not the code, tells 平安银行 (0.000001) from 上证指数 (1.000001)', async () => {
    ulist = 'replay-ulist-quotes-20260930';
    const quotes = await adapter().getQuotes(SYMBOLS.map(ref));
    expect(quotes.get('000001.SZ')).toMatchObject({ last_price: 11.57, prev_close: 11.35, ext: { name: '平安银行' } });
    expect(quotes.get('000001.SH')).toMatchObject({ last_price: 3842.19, prev_close: 3830.45, ext: { name: '上证指数' } });
  });

  it('600000.SH agrees with Tencent\'s own figures for the session in the same capture file (volume in lots ×100 = shares)', async () => {
    ulist = 'replay-ulist-quotes-20260930';
    const q = (await adapter().getQuotes([ref('600000.SH')])).get('600000.SH')!;
    // Tencent `qt.sh600000` of the same file: change 0.30, change % 3.27, amplitude % 3.59,
    // "9.48/1474848/1386209937" (price / lots / yuan); its 2026-09-30 day row 9.22 9.48 9.49 9.16 1474848.
    expect([q.open, q.last_price, q.high, q.low]).toEqual([9.22, 9.48, 9.49, 9.16]);
    expect(q.ext.change_amount).toBeCloseTo(0.3, 9);
    expect(Math.round(q.ext.change_pct * 10_000) / 100).toBe(3.27);
    expect(Math.round(q.ext.amplitude * 10_000) / 100).toBe(3.59);
    expect(q.volume).toBe(1474848 * 100);
    expect(q.amount).toBe(1386209937);
    // The session's average price lies within its range only with the volume in shares.
    const vwap = q.amount / q.volume;
    expect(vwap).toBeGreaterThanOrEqual(q.low);
    expect(vwap).toBeLessThanOrEqual(q.high);
  });

  it('000002.SZ on a limit-up day: f4 change, f3 % and f8 turnover as the vendor prints them, consistent with its prices', async () => {
    ulist = 'replay-ulist-rows-000002-000003';
    const q = (await adapter().getQuotes([ref('000002.SZ')])).get('000002.SZ')!;
    const row = ulistRows('replay-ulist-rows-000002-000003')[0];
    expect(q).toMatchObject({ last_price: 3.32, open: 3.03, high: 3.32, low: 3.01, prev_close: 3.02, volume: 4408253 * 100, amount: 1419831684.34 });
    expect(q.ext).toMatchObject({ name: row.f14, change_amount: 0.3, change_pct: 0.0993, turnover_rate: 0.0454 });
    // The vendor's f4 and f3 are its own prices' change and change %, to their print.
    expect(q.last_price - q.prev_close).toBeCloseTo(Number(row.f4), 9);
    expect(Math.abs(((q.last_price - q.prev_close) / q.prev_close) * 100 - Number(row.f3))).toBeLessThanOrEqual(0.005);
    // Limit up: the last price is the previous close × 1.1 to the cent, and the day's high.
    expect(Math.round(q.prev_close * 1.1 * 100) / 100).toBe(q.last_price);
    expect(q.high).toBe(q.last_price);
    const vwap = q.amount / q.volume;
    expect(vwap).toBeGreaterThanOrEqual(q.low);
    expect(vwap).toBeLessThanOrEqual(q.high);
  });

  it('000003.SZ with \'-\' in every day field and only f18: served at the previous close with no volume (the vendor gives nothing else)', async () => {
    ulist = 'replay-ulist-rows-000002-000003';
    const a = createEastmoneyAdapter({ quoteHosts: [QUOTE], historyHosts: [HISTORY] }, { now: () => NOW, http: testHttp('eastmoney') });
    const q = (await a.getQuotes([ref('000003.SZ')])).get('000003.SZ')!;
    const row = ulistRows('replay-ulist-rows-000002-000003')[1];
    expect(num(row.f2)).toBeNull();
    expect(q).toMatchObject({ last_price: 2.71, open: 2.71, high: 2.71, low: 2.71, prev_close: 2.71, volume: 0, amount: 0, timestamp: NOW });
    expect(q.ext).toMatchObject({ name: 'PT金田A', change_amount: 0, change_pct: 0, amplitude: 0 });
    // A Sunday: no session today, nothing to be suspended from.
    expect(q.session).toBeUndefined();
  });

  it('an A-share with no trade once the session has opened is labelled halted; before the open, and a traded one, are not', async () => {
    ulist = 'replay-ulist-rows-000002-000003';
    const at = async (now: number) => {
      const a = createEastmoneyAdapter({ quoteHosts: [QUOTE], historyHosts: [HISTORY] }, { now: () => now, http: testHttp('eastmoney') });
      return a.getQuotes([ref('000003.SZ'), ref('000002.SZ')]);
    };
    const open = await at(cnTime('2026-11-25', '10:30'));
    expect(open.get('000003.SZ')!.session).toBe('halted');
    expect(open.get('000002.SZ')!.session).toBeUndefined();
    const afterClose = await at(cnTime('2026-11-25', '16:00'));
    expect(afterClose.get('000003.SZ')!.session).toBe('halted');
    const beforeOpen = await at(cnTime('2026-11-25', '09:10'));
    expect(beforeOpen.get('000003.SZ')!.session).toBeUndefined();
  });

  it('the vendor\'s "every code unknown" answer (rc 102, data: null) is no quote and no error', async () => {
    ulist = 'replay-ulist-unknown-rc102';
    expect((await adapter().getQuotes([ref('600000.SH'), ref('999999.SZ')])).size).toBe(0);
  });
});

describe('eastmoney replay: stock/get depth and instrument (600000.SH, 2022-02-11 after the close)', () => {
  const raw = () => fixture<{ data: Record<string, number | string> }>('eastmoney', 'replay-stock-get-600000').data;

  it('five levels a side: f19/f20 … f11/f12 bids, f39/f40 … f31/f32 asks, lots ×100, f86 time', async () => {
    stock = { '1.600000': 'replay-stock-get-600000' };
    const d = (await adapter().getDepth([ref('600000.SH')])).get('600000.SH')!;
    const f = raw();
    const n = (k: string) => Number(f[k]);
    expect(d.timestamp).toBe(n('f86') * 1000);
    expect(d.timestamp).toBe(cnTime('2022-02-11', '15:59') + 51_000);
    expect(d.bid_prices).toEqual(['f19', 'f17', 'f15', 'f13', 'f11'].map(n));
    expect(d.bid_volumes).toEqual(['f20', 'f18', 'f16', 'f14', 'f12'].map((k) => n(k) * 100));
    expect(d.ask_prices).toEqual(['f39', 'f37', 'f35', 'f33', 'f31'].map(n));
    expect(d.ask_volumes).toEqual(['f40', 'f38', 'f36', 'f34', 'f32'].map((k) => n(k) * 100));
    // One tick apart, inside the day's range, the last trade at the best ask.
    expect(d.ask_prices[0] - d.bid_prices[0]).toBeCloseTo(0.01, 9);
    expect(d.bid_prices[0]).toBeGreaterThanOrEqual(n('f45'));
    expect(d.ask_prices[0]).toBeLessThanOrEqual(n('f44'));
    expect(d.ask_prices[0]).toBe(n('f43'));
  });

  it('the same answer\'s own totals: outer + inner volume = total lots, amount / (lots × 100) = its average price f71', () => {
    const f = raw();
    expect(Number(f.f49) + Number(f.f161)).toBe(Number(f.f47));
    expect(Math.round((Number(f.f48) / (Number(f.f47) * 100)) * 100) / 100).toBe(Number(f.f71));
    // f169 (change) and f170 (change %) against f43 / f60, to their print.
    expect(Number(f.f43) - Number(f.f60)).toBeCloseTo(Number(f.f169), 9);
    expect(Math.abs(((Number(f.f43) - Number(f.f60)) / Number(f.f60)) * 100 - Number(f.f170))).toBeLessThanOrEqual(0.005);
  });

  it('instrument: limit up / down = previous close ±10 % to the cent, listing 1999-11-10 (f189), shares f84 / f85', async () => {
    stock = { '1.600000': 'replay-stock-get-600000' };
    const i = (await adapter().getInstruments([ref('600000.SH')])).get('600000.SH')!;
    const f = raw();
    expect(i).toMatchObject({ code: '600000', exchange: 'SH', name: '浦发银行', region: 'CN', symbol: '600000.SH', type: 'stock' });
    expect(i.ext).toMatchObject({ limit_up: 9.56, limit_down: 7.82, listing_date: '1999-11-10', total_shares: f.f84, float_shares: f.f85, tick_size: 0.01 });
    const prev = Number(f.f60);
    expect(Math.round(prev * 1.1 * 100) / 100).toBe(i.ext.limit_up);
    expect(Math.round(prev * 0.9 * 100) / 100).toBe(i.ext.limit_down);
  });
});

describe('eastmoney replay: the vendor\'s own "no such code" and "no rows" answers', () => {
  it('push2his kline, rc 100 with data: null (a real answer) → an unknown symbol, not an error', async () => {
    server.use(http.get(`${HISTORY}/api/qt/stock/kline/get`, () => HttpResponse.json(fixture('eastmoney', 'replay-kline-unknown-rc100'))));
    expect(await adapter().getCandles({ symbol: ref('601872.SH'), period: '1d', count: 5 })).toBeUndefined();
    expect(await adapter().getCandles({ symbol: ref('601872.SH'), period: '1m', count: 5 })).toBeUndefined();
  });

  it('trends2, rc 100 with data: null (a real answer) → no intraday, not an error', async () => {
    server.use(http.get(`${QUOTE}/api/qt/stock/trends2/get`, () => HttpResponse.json(fixture('eastmoney', 'replay-trends-unknown-rc100'))));
    expect(await adapter().getIntraday!(ref('600000.SH'))).toBeUndefined();
  });

  it('datacenter 9201 返回数据为空 (a real answer) for both tables, real raw closes → a known symbol with no ex-factors', async () => {
    klines = { '1.601872': 'replay-kline-daily-601872' };
    const out = await adapter().getExFactors([ref('601872.SH')]);
    expect(out.get('601872.SH')).toEqual([]);
  });
});

// Ex-factors from real RPT_SHAREBONUS_DET rows of 600519.SH (README: the rows of two captures of
// the same answer in its envelope) and real daily closes across the ex-dates. The vendor's own
// fields fix every part: PRETAX_BONUS_RMB is CNY per 10 shares, IMPL_PLAN_PROFILE says the same
// in words ("10派239.57元"), and DIVIDENT_RATIO is the cash per share over the close of the
// record date (the last close before the ex-date), so ex_factor = 1 / (1 − DIVIDENT_RATIO).
type BonusRow = Record<string, string | number | null | undefined>;
const bonusRows = (name: string) => fixture<{ result: { data: BonusRow[] } }>('eastmoney', name).result.data;

/** "10送1.00派43.74元(含税,…)" → per 10 shares: bonus (送), transfer (转), cash (派); absent parts 0. */
function planParts(text: string): { bonus: number; transfer: number; cash: number } {
  const m = /^10(?:送([\d.]+)股?)?(?:转([\d.]+)股?)?(?:派([\d.]+)元)?/.exec(text)!;
  return { bonus: Number(m[1] ?? 0), transfer: Number(m[2] ?? 0), cash: Number(m[3] ?? 0) };
}

/** The parts of one row the way the vendor's columns state them, per share. */
function rowParts(row: BonusRow): { cash: number; shares: number } {
  const n = (k: string) => (typeof row[k] === 'number' ? (row[k] as number) : null);
  const shares = n('BONUS_IT_RATIO') ?? (n('BONUS_RATIO') ?? 0) + (n('IT_RATIO') ?? 0);
  return { cash: (n('PRETAX_BONUS_RMB') ?? 0) / 10, shares: shares / 10 };
}

const rawBars = (closes: Array<[string, number]>) =>
  closes.map(([date, close]) => ({ t: cnTime(date), open: close, high: close, low: close, close, volume: 1, amount: 1 }));

describe('eastmoney replay: ex-factors of 600519.SH from RPT_SHAREBONUS_DET and raw closes', () => {
  it('2025-12-19 10派239.57: each part from the vendor\'s row; P_prev = the real 2025-12-18 close 1431.00; the open gaps to the reference price', async () => {
    const now = cnTime('2025-12-31', '16:00'); // the kline answer ends 2025-12-31
    const asked: URL[] = [];
    server.use(
      http.get(`${DATACENTER}/api/data/v1/get`, ({ request }) => {
        const url = new URL(request.url);
        asked.push(url);
        return HttpResponse.json(fixture('eastmoney', url.searchParams.get('reportName') === 'RPT_SHAREBONUS_DET' ? 'replay-sharebonus-600519' : 'replay-datacenter-empty-9201'));
      }),
      http.get(`${HISTORY}/api/qt/stock/kline/get`, ({ request }) => {
        asked.push(new URL(request.url));
        return HttpResponse.json(fixture('eastmoney', 'replay-kline-600519-20251208-20251231'));
      }),
    );
    const a = createEastmoneyAdapter(
      { quoteHosts: [QUOTE], historyHosts: [HISTORY], datacenterHosts: [DATACENTER] },
      { now: () => now, http: testHttp('eastmoney') },
    );
    const out = (await a.getExFactors([ref('600519.SH')])).get('600519.SH')!;
    // The dividend table, the rights table (9201: none), then raw closes (fqt 0) from 40 days
    // before the earliest ex-date of the table (2025-06-26).
    const kline = asked.find((u) => u.pathname === '/api/qt/stock/kline/get')!;
    expect(Object.fromEntries(kline.searchParams)).toMatchObject({ secid: '1.600519', klt: '101', fqt: '0', beg: '20250517' });
    // 2026-06-26 is after the clock; 2025-06-26 has no close before it in the answer; the
    // 预披露 row has no ex-date. One event is left.
    expect(out).toHaveLength(1);
    const row = bonusRows('replay-sharebonus-600519').find((r) => r.EX_DIVIDEND_DATE === '2025-12-19 00:00:00')!;
    const [e] = out;
    expect(e.timestamp).toBe(localMidnight('CN', '2025-12-19'));
    expect(e.cash_dividend).toBe((row.PRETAX_BONUS_RMB as number) / 10);
    expect(e.cash_dividend).toBeCloseTo(23.957, 12);
    expect(e.bonus_ratio).toBe(rowParts(row).shares);
    expect(e).toMatchObject({ bonus_ratio: 0, rights_ratio: 0, rights_price: 0, parts_known: true });
    // The plan text agrees with the parsed parts.
    const plan = planParts(row.IMPL_PLAN_PROFILE as string);
    expect(plan.cash).toBe(row.PRETAX_BONUS_RMB);
    expect((plan.bonus + plan.transfer) / 10).toBe(e.bonus_ratio);
    // P_prev: the kline's last close before the ex-date (2025-12-18), the exchange's reference price.
    const { rows: bars } = rows('replay-kline-600519-20251208-20251231');
    const k = bars.findIndex((b) => b.date === '2025-12-19');
    const prev = bars[k - 1].close;
    expect([bars[k - 1].date, prev]).toEqual(['2025-12-18', 1431]);
    const refPrice = (prev - e.cash_dividend!) / (1 + e.bonus_ratio!);
    expect(e.ex_factor).toBeCloseTo(prev / refPrice, 12);
    // The vendor's DIVIDENT_RATIO is 23.957 / 1431.00 to its 12 decimals: the same P_prev.
    expect(Math.abs(e.cash_dividend! / prev - (row.DIVIDENT_RATIO as number))).toBeLessThan(5e-13);
    expect(e.ex_factor).toBeCloseTo(1 / (1 - (row.DIVIDENT_RATIO as number)), 9);
    // The ex-day opens at 1410.00, 0.2 % above the reference price 1407.04 and 1.5 % below the
    // unadjusted close: the gap is the dividend.
    const exDay = bars[k];
    expect(Math.abs(exDay.open / refPrice - 1)).toBeLessThan(0.005);
    expect(Math.abs(exDay.open - refPrice)).toBeLessThan(Math.abs(exDay.open - prev) / 5);
    // Amount / volume (shares) lies inside each day's range: the rows are raw prices, not qfq.
    for (const b of bars) {
      const vwap = b.amount / (b.volume * 100);
      expect(vwap).toBeGreaterThan(b.low * 0.995);
      expect(vwap).toBeLessThan(b.high * 1.005);
    }
  });

  it('2026-06-26 10派280.2423 with the real closes around it (1212.10 → 1168.63): ex_factor, and the vendor\'s own reference price 1184.08', () => {
    const r = payloadReader('eastmoney');
    const actions = parseDividendRows(bonusRows('replay-sharebonus-600519'), '600519.SH', r, rowCheck('eastmoney', undefined, 'exFactors', '600519.SH'));
    expect(actions.map((x) => x.exDate)).toEqual(['2026-06-26', '2025-12-19', '2025-06-26']);
    // Raw closes (fqt 0) of 2026-06-25 and 2026-06-26 from the capture notes cited in the README.
    const out = deriveExFactors('CN', actions, rawBars([['2026-06-25', 1212.1], ['2026-06-26', 1168.63]]), cnTime('2026-11-01'));
    expect(out).toHaveLength(1);
    const [e] = out;
    const row = bonusRows('replay-sharebonus-600519').find((x) => x.EX_DIVIDEND_DATE === '2026-06-26 00:00:00')!;
    expect(e).toMatchObject({ timestamp: cnTime('2026-06-26'), cash_dividend: 28.02423, bonus_ratio: 0, parts_known: true });
    expect(planParts(row.IMPL_PLAN_PROFILE as string)).toEqual({ bonus: 0, transfer: 0, cash: 280.2423 });
    expect(e.ex_factor).toBeCloseTo(1212.1 / (1212.1 - 28.02423), 12);
    expect(Math.abs(28.02423 / 1212.1 - (row.DIVIDENT_RATIO as number))).toBeLessThan(5e-13);
    // The vendor's 昨收 on the ex-date and its fqt=1 close of 2026-06-25 are both 1184.08 =
    // P_prev / ex_factor to the cent; the ex-day close 1168.63 is −1.30 % from it (−3.59 % from P_prev).
    expect(Math.round((1212.1 / e.ex_factor) * 100) / 100).toBe(1184.08);
    expect(Math.round(((1168.63 - 1184.08) / 1184.08) * 10_000) / 100).toBe(-1.3);
  });

  // The probe cited in the README states that, for these two rows of 600519's table, the three
  // ratio columns came back null and only IMPL_PLAN_PROFILE carries the bonus / transfer shares.
  // parseDividendRows reads only the columns, so the 10送1 of 2015-07-17 becomes a cash-only event
  // (ex_factor 1.0177 instead of 1.1195) while parts_known says true. Adapter finding, not fixed here.
  it('2015-07-17 10送1.00派43.74 with null ratio columns: the bonus share comes from the plan text (IMPL_PLAN_PROFILE), not lost', () => {
    const r = payloadReader('eastmoney');
    const table = bonusRows('replay-sharebonus-600519-share-rows');
    // Raw closes 2015-07-14…22 from the same probe; its fqt=1 closes (−75.32, −73.31) step by
    // 2.01 where the raw ones step by 2.21 = 2.01 × 1.1 before the ex-date: the vendor's own
    // adjusted series carries the 1.1 share factor.
    expect(Math.abs((-73.31 - -75.32) / (251.26 - 249.05) - 1 / 1.1)).toBeLessThan(0.002);
    const actions = parseDividendRows(table, '600519.SH', r, rowCheck('eastmoney', undefined, 'exFactors', '600519.SH'));
    const out = deriveExFactors('CN', actions, rawBars([
      ['2015-07-14', 249.05], ['2015-07-15', 251.26], ['2015-07-16', 251.59], ['2015-07-17', 228.29],
    ]), cnTime('2015-08-01'));
    const e = out.find((x) => x.timestamp === cnTime('2015-07-17'))!;
    const plan = planParts(table[0].IMPL_PLAN_PROFILE as string);
    expect(plan).toEqual({ bonus: 1, transfer: 0, cash: 43.74 });
    expect(e.cash_dividend).toBeCloseTo(4.374, 12);
    expect(e.bonus_ratio).toBe((plan.bonus + plan.transfer) / 10);
    expect(e.ex_factor).toBeCloseTo(251.59 / ((251.59 - 4.374) / 1.1), 9);
  });
});
