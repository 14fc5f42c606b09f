// China futures on Eastmoney (adapters/eastmoney/futures.ts), replayed through the adapter over msw.
// Fixture sources: mocks/fixtures/README.md ("China futures"). Two kinds:
// - the real ZCE capture (efinance's printed answers for 115.ZCM, 动力煤主力, 2021-07/08): its night
//   bars are stamped with the evening's wall time, its daily rows with the trading day (the row of
//   Monday 2021-08-23 exists on the Friday night it was fetched), and every day's VWAP equals the
//   next row's close − change: the change column is against the previous settlement;
// - au2604 answers in the documented fields2 f51…f64 shape (open interest at f63, invented values),
//   for the open-interest column, the quote and the Friday night across midnight.
import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import { futuresContract, normaliseFuturesMinutes, parseFuturesKlines, settleDaily, vwap, type FuturesContract } from '../../adapters/eastmoney/futures.ts';
import { payloadReader, rowCheck, type JsonRecord } from '../../adapters/common/validate.ts';
import { futuresProduct, type FuturesProduct } from '../../src/markets/futures.ts';
import { tradingDayOf } from '../../src/markets/calendar.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { cnTime, ref, testHttp, vendorServer } from './helpers.ts';

const HISTORY = 'https://push2his.futures.test';
const QUOTE = 'https://push2.futures.test';

interface Asked { secid: string; klt: string; end: string; lmt: string; fields2: string }
let asked: Asked[] = [];
let quoteCalls = 0;
/** secid → { klt → fixture }; daily answers are cut at `dailyUntil` (the vendor's day at the test's instant). */
let bodies: Record<string, Record<string, string>> = {};
let dailyUntil = '2050-01-01';

type Body = { rc: number; data: { klines: string[] } & Record<string, unknown> };

const vendor = vendorServer([
  http.get(`${HISTORY}/api/qt/stock/kline/get`, ({ request }) => {
    const q = new URL(request.url).searchParams;
    const a: Asked = { secid: q.get('secid') ?? '', klt: q.get('klt') ?? '', end: q.get('end') ?? '', lmt: q.get('lmt') ?? '', fields2: q.get('fields2') ?? '' };
    asked.push(a);
    const name = bodies[a.secid]?.[a.klt];
    if (name === undefined) return HttpResponse.json(fixture('eastmoney', 'replay-kline-unknown-rc100'));
    const body = fixture<Body>('eastmoney', name);
    if (a.klt === '101') {
      // As push2his answers: rows up to `end`, the newest `lmt` of them.
      const end = `${a.end.slice(0, 4)}-${a.end.slice(4, 6)}-${a.end.slice(6, 8)}`;
      const rows = body.data.klines.filter((row) => row.slice(0, 10) <= end && row.slice(0, 10) <= dailyUntil);
      body.data.klines = rows.slice(Math.max(0, rows.length - Number(a.lmt)));
    }
    return HttpResponse.json(body);
  }),
  http.get(`${QUOTE}/*`, () => {
    quoteCalls++;
    return HttpResponse.json(fixture('eastmoney', 'rc-error'));
  }),
], () => {
  asked = [];
  quoteCalls = 0;
  bodies = {};
  dailyUntil = '2050-01-01';
});

const AU = { '101': 'futures-kline-daily-au2604', '1': 'futures-kline-1m-au2604' };
const ZCM = { '101': 'replay-kline-futures-daily-zcm', '1': 'replay-kline-futures-5m-zcm-night' };

const adapter = (now: number) => createEastmoneyAdapter({ quoteHosts: [QUOTE], historyHosts: [HISTORY] }, { now: () => now, http: testHttp('eastmoney') });

// Saturday 2026-01-31 01:00 Shanghai: au's Friday night session (21:00–02:30) is trading, for Monday.
const SAT_0100 = cnTime('2026-01-31', '01:00');

describe('eastmoney futures: secids and requests', () => {
  it("each exchange's market number, the code in the exchange's own case, fields2 through f64", async () => {
    const symbols = ['au2604.SHF', 'i2605.DCE', 'SR605.ZCE', 'IF2603.CFX', 'sc2605.INE', 'si2605.GFE'];
    const quotes = await adapter(SAT_0100).getQuotes(symbols.map(ref));
    expect(asked.map((a) => a.secid).sort()).toEqual(['113.au2604', '114.i2605', '115.SR605', '142.sc2605', '220.IF2603', '225.si2605']);
    for (const a of asked) expect(a).toMatchObject({ klt: '101', lmt: '2', fields2: 'f51,f52,f53,f54,f55,f56,f57,f58,f59,f60,f61,f62,f63,f64' });
    // Every one answered "no such code": unknown, never a failure; no push2 (stock) call was made.
    expect(quotes.size).toBe(0);
    expect(quoteCalls).toBe(0);
  });

  it('the capabilities route CN_FUTURES here; a contract has no depth (absent) and no ex-factors (empty), no vendor call', async () => {
    const a = adapter(SAT_0100);
    expect(a.capabilities.markets).toContain('CN_FUTURES');
    expect((await a.getDepth([ref('au2604.SHF')])).size).toBe(0);
    // No corporate actions on a contract: an empty list (the adjusted K-lines ask for it).
    expect(a.capabilities.resourceMarkets?.exFactors).toContain('CN_FUTURES');
    expect([...(await a.getExFactors([ref('au2604.SHF')]))]).toEqual([['au2604.SHF', []]]);
    expect(asked).toEqual([]);
    expect(quoteCalls).toBe(0);
  });
});

describe('eastmoney futures: quotes from the newest daily rows', () => {
  it('Saturday 01:00, the Friday night trading: the Monday row is the quote; settlement not yet known', async () => {
    bodies = { '113.au2604': AU };
    const quote = (await adapter(SAT_0100).getQuotes([ref('au2604.SHF')])).get('au2604.SHF');
    expect(quote).toEqual({
      symbol: 'au2604.SHF', region: 'CN', last_price: 999.92, open: 1001.58, high: 1001.92, low: 998.48,
      // Friday's close; the change is against Friday's settlement (999.92 − 2.28).
      prev_close: 1000.38, volume: 209393, amount: 209484945440, timestamp: SAT_0100, session: 'regular',
      ext: {
        type: 'cn_futures', name: '沪金2604', amplitude: 0.0034, change_amount: 2.28, change_pct: 0.0023, turnover_rate: null,
        open_interest: 167968, settlement_price: null, prev_settlement_price: 997.64,
      },
    });
  });

  it('a batch of an A-share and a contract: the share goes to ulist, the contract to its kline', async () => {
    bodies = { '113.au2604': AU };
    const quotes = await adapter(SAT_0100).getQuotes([ref('600519.SH'), ref('au2604.SHF')]);
    expect(quoteCalls).toBe(1);
    expect(asked.map((a) => a.secid)).toEqual(['113.au2604']);
    expect([...quotes.keys()]).toEqual(['au2604.SHF']);
  });

  it('a row breaking the OHLC envelope is dropped and reported, the others kept', async () => {
    bodies = { '113.au2604': AU };
    const events: unknown[] = [];
    const a = createEastmoneyAdapter({ quoteHosts: [QUOTE], historyHosts: [HISTORY] }, {
      now: () => SAT_0100, http: testHttp('eastmoney'), onInvalidRows: (e) => events.push(e),
    });
    const body = fixture<Body>('eastmoney', 'futures-kline-daily-au2604');
    body.data.klines[2] = body.data.klines[2].replace(/^(2026-01-28,[^,]+,[^,]+,)([^,]+),([^,]+)/, '$1$3,$2');
    bodies = {};
    vendor.server.use(http.get(`${HISTORY}/api/qt/stock/kline/get`, () => HttpResponse.json(body)));
    const c = await a.getCandles({ symbol: ref('au2604.SHF'), period: '1d', count: 10 });
    expect(c?.timestamp).not.toContain(cnTime('2026-01-28'));
    expect(c?.timestamp).toHaveLength(5);
    expect(events).toEqual([expect.objectContaining({ adapter: 'eastmoney', resource: 'candles', symbol: 'au2604.SHF', reason: 'ohlc_envelope', dropped: 1 })]);
  });

  it("a dropped daily row's settlement (stated by the row after it) is not given to the day before it", async () => {
    const body = fixture<Body>('eastmoney', 'futures-kline-daily-au2604');
    // Wednesday 2026-01-28 with a high far below its open and close: dropped. Thursday's close − change
    // is Wednesday's settlement (998.18), not Tuesday's.
    body.data.klines[2] = body.data.klines[2].replace(/^(2026-01-28,[^,]+,[^,]+,)[^,]+/, '$1500.00');
    vendor.server.use(http.get(`${HISTORY}/api/qt/stock/kline/get`, () => HttpResponse.json(body)));
    const c = await adapter(SAT_0100).getCandles({ symbol: ref('au2604.SHF'), period: '1d', count: 10 });
    expect(c?.timestamp).toEqual(['2026-01-26', '2026-01-27', '2026-01-29', '2026-01-30', '2026-02-02'].map((d) => cnTime(d)));
    // Tuesday's settlement: its own VWAP (178309292160 ÷ (176838 × 1000) = 1008.32), as when no row states it.
    expect(c?.settlement_price?.[1]).toBe(1008.32);
    // Monday's is still stated by Tuesday's row (1004.38 + 11.18).
    expect(c?.settlement_price?.[0]).toBe(1015.56);
  });

  it("a newest daily row breaking the OHLC envelope: no quote, never the day before's row passed off as now's", async () => {
    const events: unknown[] = [];
    const a = createEastmoneyAdapter({ quoteHosts: [QUOTE], historyHosts: [HISTORY] }, {
      now: () => SAT_0100, http: testHttp('eastmoney'), onInvalidRows: (e) => events.push(e),
    });
    const body = fixture<Body>('eastmoney', 'futures-kline-daily-au2604');
    // The vendor's two newest rows (lmt=2), Monday's with a high far below its open and close.
    body.data.klines = body.data.klines.slice(-2);
    body.data.klines[1] = body.data.klines[1].replace(/^(2026-02-02,[^,]+,[^,]+,)[^,]+/, '$1500.00');
    vendor.server.use(http.get(`${HISTORY}/api/qt/stock/kline/get`, () => HttpResponse.json(body)));
    const quotes = await a.getQuotes([ref('au2604.SHF')]);
    expect(quotes.has('au2604.SHF')).toBe(false);
    expect(events).toEqual([expect.objectContaining({ adapter: 'eastmoney', resource: 'quotes', reason: 'ohlc_envelope', dropped: 1 })]);
  });

  it("Friday 16:00: Friday's day has closed, its settlement is its VWAP (amount ÷ (volume × 1000 g))", async () => {
    bodies = { '113.au2604': AU };
    dailyUntil = '2026-01-30';
    const now = cnTime('2026-01-30', '16:00');
    const quote = (await adapter(now).getQuotes([ref('au2604.SHF')])).get('au2604.SHF');
    expect(quote).toMatchObject({ last_price: 1000.38, prev_close: 997.36, timestamp: cnTime('2026-01-30', '15:00') });
    expect(quote?.ext).toMatchObject({ settlement_price: 997.64, prev_settlement_price: 996.24, open_interest: 165511 });
    expect(quote?.session).not.toBe('regular');
  });
});

describe('eastmoney futures: instruments', () => {
  it("the vendor's name and previous settlement, the contract terms of the product table", async () => {
    bodies = { '113.au2604': AU };
    const found = await adapter(SAT_0100).getInstruments([ref('au2604.SHF'), ref('au2610.SHF')]);
    expect(asked.map((a) => `${a.secid} ${a.klt} ${a.lmt}`).sort()).toEqual(['113.au2604 101 2', '113.au2610 101 2']);
    expect(found.has('au2610.SHF')).toBe(false);
    expect(found.get('au2604.SHF')).toEqual({
      code: 'au2604', exchange: 'SHF', name: '沪金2604', region: 'CN', symbol: 'au2604.SHF', type: 'futures',
      ext: {
        type: 'cn_futures', float_shares: null, total_shares: null, tick_size: 0.02,
        // Friday's settlement 997.64 ± 6 %, on the 0.02 tick.
        limit_up: 1057.5, limit_down: 937.78,
        listing_date: '2025-04-16', last_trade_date: '2026-04-15', multiplier: 1000, product: 'au', main_contract: false,
      },
    });
    expect(quoteCalls).toBe(0);
  });
});

describe('eastmoney futures: K-lines', () => {
  it('1d: dated by trading day; open_interest from f63; settlement from the next row, the newest provisional', async () => {
    bodies = { '113.au2604': AU };
    const c = await adapter(SAT_0100).getCandles({ symbol: ref('au2604.SHF'), period: '1d', count: 3 });
    // A day's settlement comes from the next row: the request reaches past the window (count + 15 rows).
    expect(asked).toEqual([expect.objectContaining({ secid: '113.au2604', klt: '101', lmt: '18', end: '20500101' })]);
    expect(c?.timestamp).toEqual([cnTime('2026-01-29'), cnTime('2026-01-30'), cnTime('2026-02-02')]);
    expect(c?.close).toEqual([997.36, 1000.38, 999.92]);
    expect(c?.prev_close).toEqual([995.26, 997.36, 1000.38]);
    expect(c?.open_interest).toEqual([163835, 165511, 167968]);
    // 996.24 and 997.64 are stated by the rows after them; Monday's is its VWAP so far, on the 0.02 tick.
    expect(c?.settlement_price).toEqual([996.24, 997.64, 1000.44]);
  });

  it('1d with an end in the past: asks 14 days past it, serves the window', async () => {
    bodies = { '113.au2604': AU };
    const c = await adapter(SAT_0100).getCandles({ symbol: ref('au2604.SHF'), period: '1d', start: cnTime('2026-01-27'), end: cnTime('2026-01-28') });
    expect(asked[0]).toMatchObject({ end: '20260211', lmt: '1000000' });
    expect(c?.timestamp).toEqual([cnTime('2026-01-27'), cnTime('2026-01-28')]);
    expect(c?.settlement_price).toEqual([1008.32, 998.18]);
  });

  it('1m: the Friday night across midnight is labelled at its instants and belongs to Monday', async () => {
    bodies = { '113.au2604': AU };
    const c = await adapter(SAT_0100).getCandles({ symbol: ref('au2604.SHF'), period: '1m', count: 1000 });
    expect(c).toBeDefined();
    const t = c!.timestamp;
    expect(t.slice(0, 4)).toEqual([cnTime('2026-01-30', '14:58'), cnTime('2026-01-30', '14:59'), cnTime('2026-01-30', '15:00'), cnTime('2026-01-30', '21:01')]);
    expect(t.at(-1)).toBe(cnTime('2026-01-31', '01:00'));
    const key = futuresContract(ref('au2604.SHF'))!.key;
    expect(new Set(t.slice(0, 3).map((x) => tradingDayOf(key, x)))).toEqual(new Set(['2026-01-30']));
    expect(new Set(t.slice(3).map((x) => tradingDayOf(key, x)))).toEqual(new Set(['2026-02-02']));
    expect(t).toContain(cnTime('2026-01-31', '00:00'));
    // prev_close: the close of the trading day before each bar's (Thursday's from the daily lookup).
    expect(c!.prev_close!.slice(0, 3)).toEqual([997.36, 997.36, 997.36]);
    expect(new Set(c!.prev_close!.slice(3))).toEqual(new Set([1000.38]));
    expect(asked.map((a) => a.klt)).toEqual(['1', '101']);
    expect(asked[1]).toMatchObject({ end: '20260129', lmt: '1' });
    // Open interest per bar (f63); settlement the running VWAP of the trading day.
    expect(c!.open_interest!.slice(3, 5)).toEqual([165495, 165527]);
    expect(c!.settlement_price![3]).toBe(1001.46);
    expect(c!.settlement_price!.at(-1)).toBe(1000.44);
  });

  it('a night row after midnight dated by its trading day (Monday 00:30) is read as the Saturday 00:30 it must be', () => {
    const au = futuresContract(ref('au2604.SHF'))!;
    const data = { klines: ['2026-02-02 00:30,1000.00,1000.10,1000.20,999.90,100,100005000.0,0.00,0.00,0.10,0.00,0,167000,0'] } as JsonRecord;
    const [row] = parseFuturesKlines(data, au, '1m', payloadReader('eastmoney'), rowCheck('eastmoney', undefined, 'candles'));
    expect(row.t).toBe(cnTime('2026-01-31', '00:30'));
    // The calendar-dated form is kept as it is.
    const [same] = parseFuturesKlines({ klines: ['2026-01-31 00:30,1000.00,1000.10,1000.20,999.90,100,100005000.0'] } as JsonRecord, au, '1m', payloadReader('eastmoney'), rowCheck('eastmoney', undefined, 'candles'));
    expect(same.t).toBe(cnTime('2026-01-31', '00:30'));
  });

  it("intraday: the newest trading day's bars (Monday's: the Friday night so far)", async () => {
    bodies = { '113.au2604': AU };
    const c = await adapter(SAT_0100).getIntraday!(ref('au2604.SHF'));
    expect(c?.timestamp[0]).toBe(cnTime('2026-01-30', '21:01'));
    expect(c?.timestamp).toHaveLength(240);
    expect(c?.volume.reduce((a, b) => a + b, 0)).toBe(209393);
    expect(new Set(c?.prev_close)).toEqual(new Set([1000.38]));
    expect(c?.open_interest?.at(-1)).toBe(167968);
  });

  it('an unknown contract: undefined, not a failure', async () => {
    expect(await adapter(SAT_0100).getCandles({ symbol: ref('au2610.SHF'), period: '1d', count: 5 })).toBeUndefined();
    expect(await adapter(SAT_0100).getIntraday!(ref('au2610.SHF'))).toBeUndefined();
  });
});

describe('eastmoney futures: the real ZCE capture (115.ZCM, served for MA201.ZCE, whose sessions are the same)', () => {
  it('daily rows: the trading day Monday 2021-08-23 exists on the Friday night; settlements from the change column', async () => {
    bodies = { '115.MA201': ZCM };
    const c = await adapter(cnTime('2021-08-20', '23:30')).getCandles({ symbol: ref('MA201.ZCE'), period: '1d', count: 10 });
    expect(c?.timestamp).toEqual(['2021-08-17', '2021-08-18', '2021-08-19', '2021-08-20', '2021-08-23'].map((d) => cnTime(d)));
    // Each day's settlement is the next row's close − change: 770.8 − (−9.8) is not one; 776.8 − 13.4 = 763.4 is the 17th's.
    expect(c?.settlement_price?.slice(0, 4)).toEqual([763.4, 777.4, 781.4, 787.2]);
    // The capture asked f51…f61 only: no open-interest column is invented.
    expect(c?.open_interest).toBeUndefined();
  });

  it('night bars: stamped with the evening, they belong to the next trading day (Thursday → Friday, Friday → Monday)', async () => {
    bodies = { '115.MA201': ZCM };
    const c = await adapter(cnTime('2021-08-20', '23:30')).getCandles({ symbol: ref('MA201.ZCE'), period: '1m', count: 100 });
    const key = futuresContract(ref('MA201.ZCE'))!.key;
    expect(c?.timestamp[0]).toBe(cnTime('2021-07-22', '21:05'));
    expect(c?.timestamp.at(-1)).toBe(cnTime('2021-08-20', '23:00'));
    expect(c?.timestamp.map((t) => tradingDayOf(key, t))).toEqual([...Array(5).fill('2021-07-23'), ...Array(5).fill('2021-08-23')]);
  });
});

describe('eastmoney futures: the settlement rule against the real capture, with ZC\'s own contract terms', () => {
  // ZC (动力煤): ZCE, tick 0.2, 100 t per contract; its sessions are those of the ZCE products with a 23:00 night.
  const zc: FuturesContract = {
    ...futuresContract(ref('MA201.ZCE'))!,
    ref: { symbol: 'ZC201.ZCE', code: 'ZC201', exchange: 'ZCE', region: 'CN' },
    product: { ...(futuresProduct('MA') as FuturesProduct), product: 'ZC', name: '动力煤', tickSize: 0.2, multiplier: 100 },
  };
  const r = payloadReader('eastmoney');
  const check = () => rowCheck('eastmoney', undefined, 'candles');
  const data = (name: string) => fixture<{ data: JsonRecord }>('eastmoney', name).data;

  it("every day's VWAP (amount ÷ (volume × 100)) equals the next row's close − change: the vendor's previous settlement", () => {
    const rows = parseFuturesKlines(data('replay-kline-futures-daily-zcm'), zc, '1d', r, check());
    const vwaps = rows.map((b) => vwap(zc, b.amount, b.volume));
    expect(vwaps).toEqual([763.4, 777.4, 781.4, 787.2, 825.8]);
    expect(rows.slice(1).map((b) => b.prevSettlement)).toEqual(vwaps.slice(0, 4));
    const settled = settleDaily(zc, rows, undefined);
    expect(settled.map((b) => b.settlement)).toEqual([763.4, 777.4, 781.4, 787.2, 825.8]);
  });

  it('minute rows: the change column is against the bar before (not a settlement), and is not used as one', () => {
    const rows = parseFuturesKlines(data('replay-kline-futures-5m-zcm-night'), zc, '1m', r, check());
    expect(rows[1].prevSettlement).toBe(rows[0].close);
    const bars = normaliseFuturesMinutes(zc, rows, 915.6);
    expect(bars.every((b) => b.prevSettlement === undefined)).toBe(true);
    expect(bars[0]).toMatchObject({ prevClose: 915.6, settlement: vwap(zc, 626957759, 6864) });
    // The first evening's bars open the day after: their previous close is the one given for the day before.
    expect(bars.slice(0, 5).map((b) => b.prevClose)).toEqual(Array(5).fill(915.6));
  });
});
