// Boundary validation of Eastmoney payloads (issue 14.4, docs/contract.md#shapes-and-units): kline/trends text rows,
// ulist quotes, stock/get depth and the dividend table, each a good fixture with one thing
// spoiled; exactly which rows survive, what onInvalidRows heard, and 502 when nothing is left.
import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import type { Adapter } from '../../adapters/types.ts';
import { EASTMONEY_TEST_HOSTS as HOSTS, eastmoneyHandlers } from '../../mocks/handlers/eastmoney.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { cnTime, failure, ref, testHttp, vendorServer } from './helpers.ts';

const { server, events } = vendorServer(eastmoneyHandlers());

function adapter(): ReturnType<typeof createEastmoneyAdapter> {
  const now = () => cnTime('2024-06-04', '16:00');
  return createEastmoneyAdapter(
    { quoteHosts: HOSTS.quote, historyHosts: HOSTS.history, datacenterHosts: HOSTS.datacenter, usMarkets: { AAPL: 105 } },
    { now, http: testHttp('eastmoney', { now }), onInvalidRows: (e) => events.push(e) },
  );
}

const MT = ref('600519.SH');
const PINGAN = ref('000001.SZ');
const TENCENT = ref('00700.HK');
const AAPL = ref('AAPL.US');
const DAYS = ['2024-05-28', '2024-05-29', '2024-05-30', '2024-05-31', '2024-06-03', '2024-06-04'].map((d) => cnTime(d));
const ev = (resource: string, reason: string, dropped: number, symbol?: string) => ({ adapter: 'eastmoney', resource, dropped, reason, ...(symbol ? { symbol } : {}) });

type KlineBody = { data: { klines: string[] } } & Record<string, unknown>;
const klineBody = () => fixture<KlineBody>('eastmoney', 'kline-daily-600519');
/** Replaces column `col` of kline row `row` (0 date, 1 open, 2 close, 3 high, 4 low, 5 volume). */
function setCell(body: KlineBody, row: number, col: number, value: string): void {
  const cells = body.data.klines[row].split(',');
  cells[col] = value;
  body.data.klines[row] = cells.join(',');
}
const serveKlines = (body: KlineBody) => server.use(http.get(`${HOSTS.history[0]}/api/qt/stock/kline/get`, () => HttpResponse.json(body)));

describe('eastmoney: kline and trends rows', () => {
  it('drops a negative close, a negative volume and a NaN / Infinity cell; keeps the rest', async () => {
    const body = klineBody();
    setCell(body, 1, 2, '-4.00');
    setCell(body, 2, 5, '-10000');
    setCell(body, 3, 3, 'NaN');
    setCell(body, 4, 6, 'Infinity');
    serveKlines(body);
    const c = await adapter().getCandles({ symbol: MT, period: '1d' });
    expect(c?.timestamp).toEqual([DAYS[0], DAYS[5]]);
    expect(c?.close).toEqual([1688.0, 1688.5]);
    expect(events).toEqual([
      ev('candles', 'non_positive_price', 1, '600519.SH'),
      ev('candles', 'negative_volume', 1, '600519.SH'),
      ev('candles', 'non_finite', 2, '600519.SH'),
    ]);
  });

  it('a repeated date keeps the later row; unsorted rows are sorted', async () => {
    const body = klineBody();
    const rows = body.data.klines;
    const again = rows[2].replace(',1681.30,', ',1683.00,');
    body.data.klines = [rows[1], rows[0], rows[2], again, rows[3], rows[4], rows[5]];
    serveKlines(body);
    const c = await adapter().getCandles({ symbol: MT, period: '1d' });
    expect(c?.timestamp).toEqual(DAYS);
    expect(c?.close).toEqual([1688.0, 1676.5, 1683.0, 1690.2, 1681.3, 1688.5]);
    expect(events).toEqual([ev('candles', 'unsorted_timestamps', 0, '600519.SH'), ev('candles', 'duplicate_timestamp', 1, '600519.SH')]);
  });

  it('text that is not a number at all is still a broken payload, not a row to drop', async () => {
    const body = klineBody();
    setCell(body, 1, 2, 'abc');
    serveKlines(body);
    expect((await failure(adapter().getCandles({ symbol: MT, period: '1d' }))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([]);
  });

  it('nothing usable left → UPSTREAM_BAD_RESPONSE', async () => {
    const body = klineBody();
    for (let i = 0; i < body.data.klines.length; i++) setCell(body, i, 5, '-1');
    serveKlines(body);
    expect((await failure(adapter().getCandles({ symbol: MT, period: '1d' }))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([ev('candles', 'negative_volume', 6, '600519.SH')]);
  });

  it('trends2 rows: a negative price is dropped; the open-0 quirk of a first row is not a bad row', async () => {
    const body = fixture<{ data: { trends: string[] } }>('eastmoney', 'trends-600519');
    body.data.trends[0] = body.data.trends[0].replace('09:30,1682.00,', '09:30,0.00,');
    body.data.trends[3] = body.data.trends[3].replace(',1683.00,', ',-1683.00,');
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/stock/trends2/get`, () => HttpResponse.json(body)));
    const c = await adapter().getIntraday(MT);
    expect(c?.timestamp).toEqual(['09:31', '09:32', '09:34', '09:35'].map((t) => cnTime('2024-06-04', t)));
    expect(c?.open[0]).toBe(1682.0);
    expect(events).toEqual([ev('intraday', 'non_positive_price', 1, '600519.SH')]);
  });
});

describe('eastmoney: quotes, depth, dividends', () => {
  type Row = Record<string, unknown>;
  const ulist = () => fixture<{ data: { diff: Row[] } }>('eastmoney', 'ulist-quotes-ok');
  const serveUlist = (diff: Row[]) => server.use(http.get(`${HOSTS.quote[0]}/api/qt/ulist.np/get`, () => HttpResponse.json({ rc: 0, data: { total: diff.length, diff } })));

  it('a secid repeated in the batch keeps the newest quote; a negative price drops that quote only', async () => {
    const [mt, hk, us] = ulist().data.diff;
    serveUlist([{ ...mt, f2: 1690.0, f124: (mt.f124 as number) + 60 }, { ...hk, f2: -10.5 }, mt, us]);
    const q = await adapter().getQuotes([MT, TENCENT, AAPL]);
    expect([...q.keys()]).toEqual(['600519.SH', 'AAPL.US']);
    expect(q.get('600519.SH')?.last_price).toBe(1690.0);
    expect(events).toEqual([ev('quotes', 'non_positive_price', 1), ev('quotes', 'duplicate_symbol', 1)]);
  });

  it('every quote invalid → UPSTREAM_BAD_RESPONSE', async () => {
    serveUlist(ulist().data.diff.slice(0, 3).map((row) => ({ ...row, f5: -100 })));
    expect((await failure(adapter().getQuotes([MT, TENCENT, AAPL]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([ev('quotes', 'negative_volume', 3)]);
  });

  it('depth: a negative level is dropped; a book with only invalid levels is refused', async () => {
    const body = fixture<{ data: Row }>('eastmoney', 'stock-depth-600519');
    body.data.f17 = -1688.4;
    body.data.f40 = -5;
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/stock/get`, () => HttpResponse.json(body)));
    const d = (await adapter().getDepth([MT])).get('600519.SH');
    expect(d?.bid_prices).toEqual([1688.49, 1688.3, 1688.1, 1688.0]);
    expect(d?.ask_prices).toEqual([1688.6, 1688.8, 1689.0, 1689.5]);
    expect(events).toEqual([ev('depth', 'non_positive_price', 1, '600519.SH'), ev('depth', 'negative_volume', 1, '600519.SH')]);

    events.length = 0;
    const bad: Row = { f57: '600519', f86: 1717484397 };
    for (const k of ['f19', 'f17', 'f15', 'f13', 'f11', 'f39', 'f37', 'f35', 'f33', 'f31']) bad[k] = -1;
    for (const k of ['f20', 'f18', 'f16', 'f14', 'f12', 'f40', 'f38', 'f36', 'f34', 'f32']) bad[k] = 1;
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/stock/get`, () => HttpResponse.json({ rc: 0, data: bad })));
    expect((await failure(adapter().getDepth([MT]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([ev('depth', 'non_positive_price', 10, '600519.SH')]);
  });

  it('a dividend row repeated verbatim is applied once (the worked case stays 1.05 and 2)', async () => {
    const body = fixture<{ result: { data: Row[] } }>('eastmoney', 'dividends-000001');
    body.result.data.push({ ...body.result.data[2] });
    server.use(http.get(`${HOSTS.datacenter[0]}/api/data/v1/get`, ({ request }) => (new URL(request.url).searchParams.get('reportName') === 'RPT_SHAREBONUS_DET'
      ? HttpResponse.json(body) : HttpResponse.json(fixture('eastmoney', 'dividends-empty')))));
    const f = await adapter().getExFactors([PINGAN]);
    expect(f.get('000001.SZ')?.map((e) => [e.timestamp, e.ex_factor])).toEqual([[cnTime('2024-05-29'), 1.05], [cnTime('2024-05-31'), 2]]);
    expect(events).toEqual([ev('exFactors', 'duplicate_ex_factor', 1, '000001.SZ')]);
  });
});
