import { describe, expect, it } from 'vitest';
import { delay, http, HttpResponse } from 'msw';
import { createTickflowAdapter, type TickflowOptions } from '../../adapters/tickflow/index.ts';
import { retryHintSeconds } from '../../adapters/tickflow/errors.ts';
import { tickflowDayLabel } from '../../adapters/tickflow/parse.ts';
import type { Adapter } from '../../adapters/types.ts';
import { TICKFLOW_TEST_BASE as BASE, tickflowHandlers } from '../../mocks/handlers/tickflow.ts';
import { fixture, type CapturedRequest } from '../../mocks/handlers/support.ts';
import { cnTime, failure, nyTime, ref, testHttp, vendorServer } from './helpers.ts';
import { runAdapterContract } from './contract.ts';

const NOW = cnTime('2024-06-04', '16:00');
const log: CapturedRequest[] = [];

const { server } = vendorServer(tickflowHandlers(log), () => {
  log.length = 0;
});

function adapter(options: Partial<TickflowOptions> = {}, timeoutMs?: number): ReturnType<typeof createTickflowAdapter> {
  return createTickflowAdapter({ baseUrl: BASE, apiKey: 'test-key', ...options }, { now: () => NOW, http: testHttp('tickflow', { timeoutMs }) });
}

const MT = ref('600519.SH');
const TENCENT = ref('00700.HK');
const AAPL = ref('AAPL.US');
const UNKNOWN = ref('999999.SH');
const DAYS = ['2024-05-28', '2024-05-29', '2024-05-30', '2024-05-31', '2024-06-03', '2024-06-04'].map((d) => cnTime(d));

describe('tickflow adapter: requests and normalised results', () => {
  it('quotes: GET with a comma list and x-api-key; CN lots become shares; ext filled when null', async () => {
    const quotes = await adapter().getQuotes([MT, TENCENT, AAPL, UNKNOWN]);

    expect(log).toHaveLength(1);
    const [req] = log;
    expect(req.method).toBe('GET');
    expect(req.url.pathname).toBe('/v1/quotes');
    expect(req.url.searchParams.get('symbols')).toBe('600519.SH,00700.HK,AAPL.US,999999.SH');
    expect(req.headers.get('x-api-key')).toBe('test-key');
    expect(req.headers.get('accept')).toBe('application/json');

    expect([...quotes.keys()]).toEqual(['600519.SH', '00700.HK', 'AAPL.US']);
    expect(quotes.get('600519.SH')).toEqual({
      symbol: '600519.SH', region: 'CN', last_price: 1688.5, open: 1682.0, high: 1699.0, low: 1680.1, prev_close: 1681.3,
      volume: 2_678_900, amount: 4521987654.0, timestamp: cnTime('2024-06-04', '15:00') + 2000, session: 'closed',
      ext: { type: 'cn_equity', name: '贵州茅台', amplitude: 0.011235, change_amount: 7.2, change_pct: 0.004282, turnover_rate: 0.002131 },
    });
    expect(quotes.get('00700.HK')?.volume).toBe(15_234_567);
    expect(quotes.get('00700.HK')?.ext.turnover_rate).toBeNull();
    const aapl = quotes.get('AAPL.US');
    expect(aapl?.session).toBeUndefined();
    expect(aapl?.ext).toEqual({
      type: 'us_equity', name: '', amplitude: 0.0128478544, change_amount: 1.78, change_pct: 0.0092587776, turnover_rate: null,
    });
  });

  it('quotes: POST with a JSON body above 20 symbols', async () => {
    const many = [MT, ...Array.from({ length: 20 }, (_, i) => ref(`6000${String(i).padStart(2, '0')}.SH`))];
    const quotes = await adapter().getQuotes(many);
    expect(log[0].method).toBe('POST');
    expect(log[0].url.search).toBe('');
    expect(log[0].headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(log[0].body)).toEqual({ symbols: many.map((s) => s.symbol) });
    expect([...quotes.keys()]).toEqual(['600519.SH']);
  });

  it('quotes: the keyless free tier sends no x-api-key', async () => {
    await adapter({ apiKey: undefined }).getQuotes([MT]);
    expect(log[0].headers.has('x-api-key')).toBe(false);
  });

  it('depth: /v1/depth/batch; empty (zero) levels omitted; CN lots become shares', async () => {
    const depth = await adapter().getDepth([MT, TENCENT]);
    expect(log[0].url.pathname).toBe('/v1/depth/batch');
    expect(log[0].url.searchParams.get('symbols')).toBe('600519.SH,00700.HK');
    expect(depth.get('600519.SH')).toEqual({
      symbol: '600519.SH', region: 'CN', timestamp: cnTime('2024-06-04', '14:59') + 57000,
      bid_prices: [1688.49, 1688.4, 1688.3, 1688.1, 1688.0], bid_volumes: [1200, 300, 700, 200, 4000],
      ask_prices: [1688.5, 1688.6, 1688.8, 1689.0, 1689.5], ask_volumes: [500, 100, 900, 1500, 400],
    });
    const hk = depth.get('00700.HK');
    expect(hk?.bid_prices).toEqual([388.2, 388.0, 387.8]);
    expect(hk?.bid_volumes).toEqual([12000, 30500, 8100]);
    expect(hk?.ask_volumes).toEqual([4400, 21000, 9900, 15000, 7300]);
  });

  it('daily klines: adjust=none, bounds and count forwarded; bars stamped at Beijing midnight', async () => {
    const candles = await adapter().getCandles({ symbol: MT, period: '1d', start: DAYS[1], end: DAYS[4], count: 3 });
    const q = log[0].url.searchParams;
    expect(log[0].url.pathname).toBe('/v1/klines');
    expect(Object.fromEntries(q)).toEqual({
      symbol: '600519.SH', period: '1d', count: '3', start_time: String(DAYS[1]), end_time: String(DAYS[4]), adjust: 'none',
    });
    expect(candles).toEqual({
      timestamp: DAYS.slice(2, 5),
      open: [1676.0, 1681.3, 1690.0], high: [1688.8, 1695.5, 1695.0], low: [1672.0, 1679.0, 1676.2], close: [1681.3, 1690.2, 1681.3],
      volume: [2_441_000, 3_011_800, 2_345_600],
      amount: [4_097_584_650, 5_077_141_850, 3_953_860_640],
      prev_close: [1676.5, 1681.3, 1690.2],
    });
  });

  it('minute klines: end-labelled stamps kept; minuteLabels=start shifts them to bar ends', async () => {
    const end = await adapter().getCandles({ symbol: MT, period: '1m', count: 3 });
    expect(log[0].url.searchParams.get('period')).toBe('1m');
    expect(end?.timestamp).toEqual(['09:38', '09:39', '09:40'].map((t) => cnTime('2024-06-04', t)));
    expect(end?.volume).toEqual([19_800, 17_600, 20_500]);
    const start = await adapter({ minuteLabels: 'start' }).getCandles({ symbol: MT, period: '1m', count: 2 });
    expect(start?.timestamp).toEqual(['09:40', '09:41'].map((t) => cnTime('2024-06-04', t)));
  });

  it('klines page backwards past 10 000 bars with end_time = oldest − 1', async () => {
    const DAY = 86_400_000;
    const first = cnTime('1990-01-01');
    server.use(http.get(`${BASE}/v1/klines`, ({ request }) => {
      const url = new URL(request.url);
      log.push({ method: 'GET', url, headers: request.headers, body: '' });
      const end = Number(url.searchParams.get('end_time') ?? first + 12_000 * DAY);
      const count = Number(url.searchParams.get('count'));
      const ts: number[] = [];
      for (let t = first; t <= end && ts.length < 12_000; t += DAY) ts.push(t);
      const kept = ts.slice(-count);
      const col = (v: number) => kept.map(() => v);
      return HttpResponse.json({ data: { timestamp: kept, open: col(10), high: col(11), low: col(9), close: col(10), volume: col(7), amount: col(7000) } });
    }));
    const candles = await adapter().getCandles({ symbol: MT, period: '1d', count: 10_500 });
    expect(log.map((r) => r.url.searchParams.get('count'))).toEqual(['10000', '500']);
    expect(log[0].url.searchParams.has('end_time')).toBe(false);
    const oldestOfFirstPage = first + 2_000 * DAY; // 12 000 bars, the newest 10 000 start at day 2000
    expect(log[1].url.searchParams.get('end_time')).toBe(String(oldestOfFirstPage - 1));
    expect(candles?.timestamp).toHaveLength(10_500);
    expect(candles?.timestamp[0]).toBe(first + 1_500 * DAY);
    expect(candles?.volume[0]).toBe(700);
  });

  it('intraday: /v1/klines/intraday, 1m, no count', async () => {
    const c = await adapter().getIntraday(MT);
    expect(log[0].url.pathname).toBe('/v1/klines/intraday');
    expect(Object.fromEntries(log[0].url.searchParams)).toEqual({ symbol: '600519.SH', period: '1m' });
    expect(c?.timestamp).toEqual(['09:31', '09:32', '09:33', '09:34', '09:35'].map((t) => cnTime('2024-06-04', t)));
    expect(c?.close).toEqual([1684.1, 1683.2, 1685.6, 1686.9, 1686.0]);
  });

  it('ex-factors: a comma list; per-symbol events ascending at local midnight', async () => {
    const f = await adapter().getExFactors([MT, TENCENT, UNKNOWN]);
    expect(log[0].url.pathname).toBe('/v1/klines/ex-factors');
    expect(log[0].url.searchParams.get('symbols')).toBe('600519.SH,00700.HK,999999.SH');
    // TickFlow's records carry the ratio only: parts_known false (the ex-rights methods use the ratio).
    expect(Object.fromEntries(f)).toEqual({
      '600519.SH': [
        { timestamp: cnTime('2023-06-30'), ex_factor: 1.015221, parts_known: false },
        { timestamp: cnTime('2023-12-20'), ex_factor: 1.011734, parts_known: false },
      ],
      '00700.HK': [{ timestamp: cnTime('2024-05-17'), ex_factor: 1.009125, parts_known: false }],
    });
  });

  it('ex-factors: parts the vendor sends pass through (parts_known: true, missing parts 0)', async () => {
    server.use(http.get(`${BASE}/v1/klines/ex-factors`, () => HttpResponse.json({
      data: { '600519.SH': [{ timestamp: 1688054400000, ex_factor: 1.015221, cash_dividend: 25.911 }] },
    })));
    const f = await adapter().getExFactors([MT]);
    expect(f.get('600519.SH')).toEqual([
      { timestamp: cnTime('2023-06-30'), ex_factor: 1.015221, cash_dividend: 25.911, bonus_ratio: 0, rights_ratio: 0, rights_price: 0, parts_known: true },
    ]);
  });

  it('instruments: POST {symbols}; optional ext fields filled', async () => {
    const found = await adapter().getInstruments([MT, TENCENT, AAPL]);
    expect(log[0].method).toBe('POST');
    expect(log[0].url.pathname).toBe('/v1/instruments');
    expect(JSON.parse(log[0].body)).toEqual({ symbols: ['600519.SH', '00700.HK', 'AAPL.US'] });
    expect(found.get('600519.SH')).toEqual({
      code: '600519', exchange: 'SH', name: '贵州茅台', region: 'CN', symbol: '600519.SH', type: 'stock',
      ext: { type: 'cn_equity', float_shares: 1256197800, limit_down: 1513.17, limit_up: 1849.43, listing_date: '2001-08-27', tick_size: 0.01, total_shares: 1256197800 },
    });
    expect(found.get('00700.HK')?.ext).toEqual({
      type: 'hk_equity', float_shares: 9391212345, limit_down: null, limit_up: null, listing_date: null, tick_size: 0.001, total_shares: 9391212345, lot_size: 100,
    });
    expect(found.get('AAPL.US')?.ext.tick_size).toBe(0.01);
  });

  it('pools map to TickFlow universes; an unknown universe is undefined', async () => {
    const pool = await adapter().listPool('CN_Stock');
    expect(log[0].url.pathname).toBe('/v1/universes/CN_Equity_A');
    expect(pool).toEqual({
      id: 'CN_Stock', name: '沪深京A股', region: 'CN', category: 'equity', symbol_count: 3, symbols: ['600519.SH', '000001.SZ', '430047.BJ'],
    });
    expect(await adapter().listPool('HK_Stock')).toBeUndefined();
    expect(log[1].url.pathname).toBe('/v1/universes/HK_Equity');
  });

  it('an unknown symbol (404 SYMBOL_NOT_FOUND) is undefined, not an error', async () => {
    expect(await adapter().getCandles({ symbol: UNKNOWN, period: '1d' })).toBeUndefined();
    expect(await adapter().getIntraday(UNKNOWN)).toBeUndefined();
  });

  it('US quote timestamps are instants, not New York wall times', async () => {
    const quotes = await adapter().getQuotes([AAPL]);
    expect(quotes.get('AAPL.US')?.timestamp).toBe(nyTime('2024-06-03', '16:00'));
  });

  it('daily stamps: the exchange-local date, except an exact UTC midnight, read as that UTC date', () => {
    expect(tickflowDayLabel('CN', cnTime('2024-06-04'))).toBe(cnTime('2024-06-04'));
    expect(tickflowDayLabel('US', nyTime('2024-06-03'))).toBe(nyTime('2024-06-03'));
    expect(tickflowDayLabel('US', Date.UTC(2024, 5, 3))).toBe(nyTime('2024-06-03'));
    expect(tickflowDayLabel('US', nyTime('2024-06-03', '09:30'))).toBe(nyTime('2024-06-03'));
  });

  it('volume multipliers are configurable per market', async () => {
    const quotes = await adapter({ volumeMultiplier: { CN: 1 } }).getQuotes([MT]);
    expect(quotes.get('600519.SH')?.volume).toBe(26_789);
  });
});

describe('tickflow adapter: failures', () => {
  it('429: UPSTREAM_UNAVAILABLE with the vendor Retry-After', async () => {
    server.use(http.get(`${BASE}/v1/quotes`, () => HttpResponse.json(fixture('tickflow', 'error-rate-limited'), { status: 429, headers: { 'retry-after': '3' } })));
    const e = await failure(adapter().getQuotes([MT]));
    expect(e.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(e.status).toBe(503);
    expect(e.retryAfterSeconds).toBe(3);
  });

  it('a rate-limit notice inside a 200 is an error, waiting ceil(N ms)', async () => {
    server.use(http.get(`${BASE}/v1/quotes`, () => HttpResponse.json(fixture('tickflow', 'error-rate-limited'))));
    const e = await failure(adapter().getQuotes([MT]));
    expect(e.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(e.retryAfterSeconds).toBe(2);
    expect(retryHintSeconds('请求频率超限，请 200ms 后重试')).toBe(1);
  });

  it('a vendor 403 means our plan or key is wrong: UPSTREAM_ERROR, not retryable, vendor code only in details', async () => {
    server.use(http.get(`${BASE}/v1/depth/batch`, () => HttpResponse.json(fixture('tickflow', 'error-permission'), { status: 403 })));
    const e = await failure(adapter().getDepth([MT]));
    expect(e.reason).toBe('UPSTREAM_ERROR');
    expect(e.status).toBe(502);
    expect(e.retryable).toBe(false);
    expect(e.details).toEqual({ adapter: 'tickflow', status: 403, vendor_code: 'NO_DEPTH_PERMISSION' });
    expect(e.message).not.toContain('权限');
  });

  it('a plain-text 400 maps by status', async () => {
    server.use(http.get(`${BASE}/v1/klines`, () => new HttpResponse('Failed to deserialize query string', { status: 400 })));
    const e = await failure(adapter().getCandles({ symbol: MT, period: '1d' }));
    expect(e.reason).toBe('UPSTREAM_ERROR');
    expect(e.details).toEqual({ adapter: 'tickflow', status: 400, vendor_code: undefined });
  });

  it('5xx: UPSTREAM_ERROR', async () => {
    server.use(http.get(`${BASE}/v1/quotes`, () => HttpResponse.json({ code: 'INTERNAL', message: 'boom' }, { status: 500 })));
    const e = await failure(adapter().getQuotes([MT]));
    expect(e.reason).toBe('UPSTREAM_ERROR');
    expect(e.status).toBe(502);
  });

  it('malformed bodies: unequal columns, NaN, wrong types, non-JSON, no data → UPSTREAM_BAD_RESPONSE', async () => {
    const cases: Array<[string, () => Response]> = [
      ['/v1/klines', () => HttpResponse.json(fixture('tickflow', 'klines-daily-malformed'))],
      ['/v1/klines', () => HttpResponse.json(fixture('tickflow', 'klines-daily-nan'))],
      ['/v1/klines', () => new HttpResponse('<html>gateway</html>', { status: 200 })],
      ['/v1/klines', () => new HttpResponse('{"data":{"timestamp":[1],"open":[NaN]}}', { status: 200 })],
      ['/v1/klines', () => HttpResponse.json({ result: [] })],
    ];
    for (const [path, respond] of cases) {
      server.use(http.get(`${BASE}${path}`, respond));
      const e = await failure(adapter().getCandles({ symbol: MT, period: '1d' }));
      expect(e.reason).toBe('UPSTREAM_BAD_RESPONSE');
    }
    server.use(http.get(`${BASE}/v1/quotes`, () => HttpResponse.json({ data: [{ ...fixture<{ data: object[] }>('tickflow', 'quotes-ok').data[0], last_price: 'abc' }] })));
    expect((await failure(adapter().getQuotes([MT]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    server.use(http.get(`${BASE}/v1/quotes`, () => HttpResponse.json({ data: { '600519.SH': {} } })));
    expect((await failure(adapter().getQuotes([MT]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('empty results: no quotes, no bars', async () => {
    server.use(
      http.get(`${BASE}/v1/quotes`, () => HttpResponse.json(fixture('tickflow', 'quotes-empty'))),
      http.get(`${BASE}/v1/klines`, () => HttpResponse.json({ data: { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] } })),
    );
    expect((await adapter().getQuotes([MT])).size).toBe(0);
    expect(await adapter().getCandles({ symbol: MT, period: '1d' })).toEqual({
      timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [],
    });
  });

  it('a slow vendor hits the deadline: UPSTREAM_TIMEOUT', async () => {
    server.use(http.get(`${BASE}/v1/quotes`, async () => {
      await delay(1_000);
      return HttpResponse.json(fixture('tickflow', 'quotes-ok'));
    }));
    const e = await failure(adapter({}, 50).getQuotes([MT]));
    expect(e.reason).toBe('UPSTREAM_TIMEOUT');
  });

  it('an empty batch makes no request', async () => {
    expect((await adapter().getQuotes([])).size).toBe(0);
    expect(log).toHaveLength(0);
  });
});

runAdapterContract('tickflow', () => adapter(), {
  batch: [MT, TENCENT, AAPL],
  financials: [ref('02367.HK')],
  candles: [MT],
  unknown: UNKNOWN,
  pools: ['CN_Stock', 'HK_Stock'],
});
