// Boundary validation of TickFlow payloads (issue 14.4, docs/contract.md#shapes-and-units): each malformed body is a
// good fixture with a cell spoiled; the test names exactly which rows survive and what
// onInvalidRows heard, and that an answer with nothing usable left is UPSTREAM_BAD_RESPONSE.
import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createTickflowAdapter, type TickflowOptions } from '../../adapters/tickflow/index.ts';
import type { Adapter } from '../../adapters/types.ts';
import { TICKFLOW_TEST_BASE as BASE, tickflowHandlers } from '../../mocks/handlers/tickflow.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { cnTime, failure, ref, testHttp, vendorServer } from './helpers.ts';
import { runAdapterContract } from './contract.ts';

const { server, events } = vendorServer(tickflowHandlers());

function adapter(options: Partial<TickflowOptions> = {}): ReturnType<typeof createTickflowAdapter> {
  return createTickflowAdapter({ baseUrl: BASE, ...options }, {
    now: () => cnTime('2024-06-04', '16:00'), http: testHttp('tickflow'), onInvalidRows: (e) => events.push(e),
  });
}

const MT = ref('600519.SH');
const TENCENT = ref('00700.HK');
const AAPL = ref('AAPL.US');
const DAYS = ['2024-05-28', '2024-05-29', '2024-05-30', '2024-05-31', '2024-06-03', '2024-06-04'].map((d) => cnTime(d));

type Columns = Record<string, number[]>;
const daily = (): Columns => fixture<{ data: Columns }>('tickflow', 'klines-daily-ok').data;
/** Serves `text` as the body of /v1/klines (raw text, so a literal like 1e999 survives). */
const klinesText = (text: string) => server.use(http.get(`${BASE}/v1/klines`, () => new HttpResponse(text, { headers: { 'content-type': 'application/json' } })));
const klines = (data: Columns) => klinesText(JSON.stringify({ data }));
const ev = (resource: string, reason: string, dropped: number, symbol?: string) => ({ adapter: 'tickflow', resource, dropped, reason, ...(symbol ? { symbol } : {}) });

describe('tickflow: candle rows', () => {
  it('drops a negative price, a negative volume and an overflowing (Infinity) high; keeps the rest', async () => {
    const d = daily();
    d.close[1] = -4;
    d.volume[2] = -10_000;
    d.high[3] = 424242;
    klinesText(JSON.stringify({ data: d }).replace('424242', '1e999'));
    const c = await adapter().getCandles({ symbol: MT, period: '1d' });
    expect(c?.timestamp).toEqual([DAYS[0], DAYS[4], DAYS[5]]);
    expect(c?.close).toEqual([1688, 1681.3, 1688.5]);
    expect(events).toEqual([
      ev('candles', 'non_positive_price', 1, '600519.SH'),
      ev('candles', 'negative_volume', 1, '600519.SH'),
      ev('candles', 'non_finite', 1, '600519.SH'),
    ]);
  });

  it('drops a row whose close lies far outside its high/low', async () => {
    const d = daily();
    d.close[0] = 1800; // high 1709.99
    klines(d);
    const c = await adapter().getCandles({ symbol: MT, period: '1d' });
    expect(c?.timestamp).toEqual(DAYS.slice(1));
    expect(events).toEqual([ev('candles', 'ohlc_envelope', 1, '600519.SH')]);
  });

  it('sorts unsorted rows and keeps the later copy of a repeated stamp', async () => {
    const d = daily();
    const order = [0, 2, 1, 3, 4, 5];
    const data: Columns = Object.fromEntries(Object.entries(d).map(([k, v]) => [k, order.map((i) => v[i])]));
    // Append a second copy of 05-31 with another close: the vendor's later row wins.
    for (const [k, v] of Object.entries(data)) v.push(k === 'close' ? 1691.0 : d[k][3]);
    klines(data);
    const c = await adapter().getCandles({ symbol: MT, period: '1d' });
    expect(c?.timestamp).toEqual(DAYS);
    expect(c?.close).toEqual([1688, 1676.5, 1681.3, 1691.0, 1681.3, 1688.5]);
    expect(events).toEqual([ev('candles', 'unsorted_timestamps', 0, '600519.SH'), ev('candles', 'duplicate_timestamp', 1, '600519.SH')]);
  });

  it('unequal columns: no row can be lined up → UPSTREAM_BAD_RESPONSE, every row reported', async () => {
    const d = daily();
    d.close.pop();
    klines(d);
    expect((await failure(adapter().getCandles({ symbol: MT, period: '1d' }))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([ev('candles', 'unequal_columns', 6, '600519.SH')]);
  });

  it('nothing usable left → UPSTREAM_BAD_RESPONSE (and not an empty 200)', async () => {
    const d = daily();
    d.low = d.low.map((v) => -v);
    klines(d);
    expect((await failure(adapter().getCandles({ symbol: MT, period: '1d' }))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([ev('candles', 'non_positive_price', 6, '600519.SH')]);
  });

  it('intraday rows go through the same checks', async () => {
    const body = fixture<{ data: Columns }>('tickflow', 'intraday-ok');
    body.data.volume[4] = -1;
    server.use(http.get(`${BASE}/v1/klines/intraday`, () => HttpResponse.json(body)));
    const c = await adapter().getIntraday(MT);
    expect(c?.timestamp).toEqual(['09:31', '09:32', '09:33', '09:34'].map((t) => cnTime('2024-06-04', t)));
    expect(events).toEqual([ev('intraday', 'negative_volume', 1, '600519.SH')]);
  });
});

describe('tickflow: batch resources', () => {
  type Q = Record<string, unknown> & { symbol: string };
  const quotes = () => fixture<{ data: Q[] }>('tickflow', 'quotes-ok').data;

  it('quotes: a repeated symbol keeps the newest quote; a negative price drops that quote only', async () => {
    const [mt, hk, us] = quotes();
    const older = { ...mt, last_price: 1685, timestamp: (mt.timestamp as number) - 60_000 };
    server.use(http.get(`${BASE}/v1/quotes`, () => HttpResponse.json({ data: [mt, { ...hk, last_price: -10.5 }, older, us] })));
    const q = await adapter().getQuotes([MT, TENCENT, AAPL]);
    expect([...q.keys()]).toEqual(['600519.SH', 'AAPL.US']);
    expect(q.get('600519.SH')?.last_price).toBe(1688.5);
    expect(events).toEqual([ev('quotes', 'non_positive_price', 1), ev('quotes', 'duplicate_symbol', 1)]);
  });

  it('quotes: the newer copy wins whichever comes first', async () => {
    const [mt] = quotes();
    const newer = { ...mt, last_price: 1690, timestamp: (mt.timestamp as number) + 60_000, high: 1699 };
    server.use(http.get(`${BASE}/v1/quotes`, () => HttpResponse.json({ data: [mt, newer] })));
    expect((await adapter().getQuotes([MT])).get('600519.SH')?.last_price).toBe(1690);
  });

  it('quotes: every quote invalid → UPSTREAM_BAD_RESPONSE', async () => {
    server.use(http.get(`${BASE}/v1/quotes`, () => HttpResponse.json({ data: quotes().map((q) => ({ ...q, volume: -10_000 })) })));
    expect((await failure(adapter().getQuotes([MT, TENCENT, AAPL]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([ev('quotes', 'negative_volume', 3)]);
  });

  it('ex-factors: a repeated row is applied once; a conflicting or negative factor leaves the symbol out', async () => {
    const { data } = fixture<{ data: Record<string, Array<{ timestamp: number; ex_factor: number }>> }>('tickflow', 'ex-factors-ok');
    data['600519.SH'].push({ ...data['600519.SH'][1] });
    data['00700.HK'].push({ ...data['00700.HK'][0], ex_factor: 1.5 });
    server.use(http.get(`${BASE}/v1/klines/ex-factors`, () => HttpResponse.json({ data })));
    const f = await adapter().getExFactors([MT, TENCENT]);
    expect(Object.fromEntries(f)).toEqual({
      '600519.SH': [{ timestamp: cnTime('2023-06-30'), ex_factor: 1.015221, parts_known: false }, { timestamp: cnTime('2023-12-20'), ex_factor: 1.011734, parts_known: false }],
    });
    expect(events).toEqual([ev('exFactors', 'duplicate_ex_factor', 1, '600519.SH'), ev('exFactors', 'conflicting_ex_factor', 2, '00700.HK')]);

    events.length = 0;
    data['600519.SH'][0].ex_factor = -1.2;
    delete (data as Record<string, unknown>)['00700.HK'];
    server.use(http.get(`${BASE}/v1/klines/ex-factors`, () => HttpResponse.json({ data })));
    expect((await failure(adapter().getExFactors([MT]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([ev('exFactors', 'invalid_ex_factor', 3, '600519.SH')]);
  });

  it('depth: a negative price or volume level is dropped and reported; the rest of the book stays', async () => {
    const body = fixture<{ data: Record<string, Record<string, number[]>> }>('tickflow', 'depth-ok');
    body.data['600519.SH'].bid_prices[1] = -1688.4;
    body.data['600519.SH'].ask_volumes[0] = -5;
    server.use(http.get(`${BASE}/v1/depth/batch`, () => HttpResponse.json(body)));
    const d = (await adapter().getDepth([MT])).get('600519.SH');
    expect(d?.bid_prices).toEqual([1688.49, 1688.3, 1688.1, 1688]);
    expect(d?.ask_prices).toEqual([1688.6, 1688.8, 1689, 1689.5]);
    expect(events).toEqual([ev('depth', 'non_positive_price', 1, '600519.SH'), ev('depth', 'negative_volume', 1, '600519.SH')]);
  });

  it('instruments: a non-positive tick or lot size drops that instrument; none left → UPSTREAM_BAD_RESPONSE', async () => {
    const body = fixture<{ data: Array<{ ext: Record<string, unknown> }> }>('tickflow', 'instruments-ok');
    body.data[0].ext.tick_size = -0.01;
    body.data[1].ext.lot_size = 0;
    server.use(http.post(`${BASE}/v1/instruments`, () => HttpResponse.json(body)));
    expect([...(await adapter().getInstruments([MT, TENCENT, AAPL])).keys()]).toEqual(['AAPL.US']);
    expect(events).toEqual([ev('instruments', 'non_positive_tick_size', 1), ev('instruments', 'non_positive_lot_size', 1)]);
    events.length = 0;
    server.use(http.post(`${BASE}/v1/instruments`, () => HttpResponse.json({ data: [body.data[0]] })));
    expect((await failure(adapter().getInstruments([MT]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
  });
});

describe('tickflow: unknown symbols are answers, never errors', () => {
  it('404 SYMBOL_NOT_FOUND, `data: null` and an empty batch are unknown / empty, with nothing reported', async () => {
    server.use(
      http.get(`${BASE}/v1/quotes`, () => HttpResponse.json({ data: null })),
      http.get(`${BASE}/v1/klines/ex-factors`, () => HttpResponse.json({ data: {} })),
      http.post(`${BASE}/v1/instruments`, () => HttpResponse.json({ data: [] })),
    );
    const a = adapter();
    expect((await a.getQuotes([MT])).size).toBe(0);
    expect((await a.getExFactors([MT])).size).toBe(0);
    expect((await a.getInstruments([MT])).size).toBe(0);
    expect(await a.getCandles({ symbol: ref('999999.SH'), period: '1d' })).toBeUndefined();
    expect(await a.getIntraday(ref('999999.SH'))).toBeUndefined();
    expect(events).toEqual([]);
  });
});

describe('tickflow: capabilities true to the tier', () => {
  it('the keyless free tier declares no quotes, depth, intraday or 1m (it has none); the paid tier all', async () => {
    const free = createTickflowAdapter({ baseUrl: 'https://free-api.tickflow.org' }, { now: () => 0, http: testHttp('tickflow') }).capabilities;
    expect(free.resources).toEqual({
      quotes: false, depth: false, candles: true, intraday: false, exFactors: true, instruments: true, pools: true,
      // Financial statements are not in the free tier either.
      financialsIncome: false, financialsBalanceSheet: false, financialsCashFlow: false, financialsMetrics: false, financialsShares: false,
    });
    expect(free.periods).toEqual({ '1m': false, '1d': true });
    expect(adapter().capabilities.resources.quotes).toBe(true);
    expect(adapter({ tier: 'free' }).capabilities.periods['1m']).toBe(false);
  });
});

runAdapterContract('tickflow free tier', () => adapter({ tier: 'free' }), {
  batch: [MT, TENCENT, AAPL],
  candles: [MT],
  unknown: ref('999999.SH'),
  pools: ['CN_Stock'],
});
