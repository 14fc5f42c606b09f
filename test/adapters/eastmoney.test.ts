import { describe, expect, it } from 'vitest';
import { delay, http, HttpResponse } from 'msw';
import { createEastmoneyAdapter, type EastmoneyOptions } from '../../adapters/eastmoney/index.ts';
import { deriveExFactors } from '../../adapters/eastmoney/exfactors.ts';
import type { Adapter } from '../../adapters/types.ts';
import { EASTMONEY_TEST_HOSTS as HOSTS, eastmoneyHandlers } from '../../mocks/handlers/eastmoney.ts';
import { fixture, type CapturedRequest } from '../../mocks/handlers/support.ts';
import { cnTime, failure, nyTime, ref, testHttp, vendorServer } from './helpers.ts';
import { runAdapterContract } from './contract.ts';

const START = cnTime('2024-06-04', '16:00');
let clock = START;
const log: CapturedRequest[] = [];

const { server } = vendorServer(eastmoneyHandlers(log), () => {
  log.length = 0;
  clock = START;
});

function adapter(options: Partial<EastmoneyOptions> = {}, timeoutMs?: number): ReturnType<typeof createEastmoneyAdapter> {
  const now = () => clock;
  return createEastmoneyAdapter({
    quoteHosts: HOSTS.quote, historyHosts: HOSTS.history, datacenterHosts: HOSTS.datacenter, f10Hosts: HOSTS.f10, ...options,
  }, { now, http: testHttp('eastmoney', { timeoutMs, now }) });
}

const MT = ref('600519.SH');
const PINGAN = ref('000001.SZ');
const TENCENT = ref('00700.HK');
const AAPL = ref('AAPL.US');
const UNKNOWN = ref('999999.SH');
const QUOTE_FIELDS = 'f2,f3,f4,f5,f6,f7,f8,f12,f13,f14,f15,f16,f17,f18,f124';

describe('eastmoney adapter: requests and normalised results', () => {
  it('quotes: one ulist call after resolving the US market once; lots → shares, percent → fraction', async () => {
    const a = adapter();
    const quotes = await a.getQuotes([MT, TENCENT, AAPL, PINGAN, UNKNOWN]);

    expect(log.map((r) => `${r.url.origin}${r.url.pathname}`)).toEqual([
      'https://push2.em.test/api/qt/ulist.np/get', 'https://push2.em.test/api/qt/ulist.np/get',
    ]);
    expect(log[0].url.searchParams.get('fields')).toBe('f12,f13');
    expect(log[0].url.searchParams.get('secids')).toBe('105.AAPL,106.AAPL,107.AAPL');
    expect(Object.fromEntries(log[1].url.searchParams)).toEqual({
      fltt: '2', invt: '2', fields: QUOTE_FIELDS, secids: '1.600519,116.00700,105.AAPL,0.000001,1.999999',
      ut: 'fa5fd1943c7b386f172d6893dbfba10b',
    });
    expect(log[1].headers.get('referer')).toBe('https://quote.eastmoney.com/');

    expect([...quotes.keys()]).toEqual(['600519.SH', '00700.HK', 'AAPL.US', '000001.SZ']);
    expect(quotes.get('600519.SH')).toEqual({
      symbol: '600519.SH', region: 'CN', last_price: 1688.5, open: 1682.0, high: 1699.0, low: 1680.1, prev_close: 1681.3,
      volume: 2_678_900, amount: 4521987654.0, timestamp: cnTime('2024-06-04', '15:00') + 3000,
      ext: { type: 'cn_equity', name: '贵州茅台', amplitude: 0.0112, change_amount: 7.2, change_pct: 0.0043, turnover_rate: 0.0021 },
    });
    expect(quotes.get('00700.HK')?.volume).toBe(15_234_567);
    expect(quotes.get('AAPL.US')?.timestamp).toBe(nyTime('2024-06-03', '16:00'));
    // A suspension: '-' for every field of the day; the quote stands at the previous close,
    // labelled halted (the session had opened).
    expect(quotes.get('000001.SZ')).toEqual({
      symbol: '000001.SZ', region: 'CN', last_price: 10.39, open: 10.39, high: 10.39, low: 10.39, prev_close: 10.39,
      volume: 0, amount: 0, timestamp: cnTime('2024-06-04', '15:00'), session: 'halted',
      ext: { type: 'cn_equity', name: '平安银行', amplitude: 0, change_amount: 0, change_pct: 0, turnover_rate: null },
    });

    log.length = 0;
    await a.getQuotes([AAPL]);
    expect(log).toHaveLength(1);
    expect(log[0].url.searchParams.get('secids')).toBe('105.AAPL');
  });

  it('a configured US market number skips the lookup', async () => {
    await adapter({ usMarkets: { AAPL: 105 } }).getQuotes([AAPL]);
    expect(log).toHaveLength(1);
    expect(log[0].url.searchParams.get('secids')).toBe('105.AAPL');
  });

  it('depth: stock/get f11–f40 per symbol; A-share lots → shares; "-" levels omitted', async () => {
    const depth = await adapter().getDepth([MT, TENCENT, UNKNOWN]);
    expect(log.map((r) => r.url.searchParams.get('secid'))).toEqual(['1.600519', '116.00700', '1.999999']);
    expect(log[0].url.pathname).toBe('/api/qt/stock/get');
    expect(log[0].url.searchParams.get('fields')).toBe(
      'f11,f12,f13,f14,f15,f16,f17,f18,f19,f20,f31,f32,f33,f34,f35,f36,f37,f38,f39,f40,f57,f86');
    expect(depth.get('600519.SH')).toEqual({
      symbol: '600519.SH', region: 'CN', timestamp: cnTime('2024-06-04', '14:59') + 57000,
      bid_prices: [1688.49, 1688.4, 1688.3, 1688.1, 1688.0], bid_volumes: [1200, 300, 700, 200, 4000],
      ask_prices: [1688.5, 1688.6, 1688.8, 1689.0, 1689.5], ask_volumes: [500, 100, 900, 1500, 400],
    });
    expect(depth.get('00700.HK')?.bid_prices).toEqual([388.2, 388.0, 387.8]);
    expect(depth.get('00700.HK')?.bid_volumes).toEqual([12000, 30500, 8100]);
    expect(depth.has('999999.SH')).toBe(false);
  });

  it('instruments: from stock/get; listing date, limits (CN only), tick size', async () => {
    const found = await adapter().getInstruments([MT, TENCENT, UNKNOWN]);
    expect(log[0].url.searchParams.get('fields')).toBe('f43,f51,f52,f57,f58,f59,f84,f85,f189');
    expect(found.get('600519.SH')).toEqual({
      code: '600519', exchange: 'SH', name: '贵州茅台', region: 'CN', symbol: '600519.SH', type: 'stock',
      ext: { type: 'cn_equity', float_shares: 1256197800, limit_down: 1513.17, limit_up: 1849.43, listing_date: '2001-08-27', tick_size: 0.01, total_shares: 1256197800 },
    });
    expect(found.get('00700.HK')?.ext).toEqual({
      type: 'hk_equity', float_shares: 9391212345, limit_down: null, limit_up: null, listing_date: '2004-06-16', tick_size: 0.001, total_shares: 9391212345,
    });
    expect(found.has('999999.SH')).toBe(false);
  });

  it('daily candles: push2his kline/get klt=101 fqt=0 with beg/end dates; prev_close = close − change', async () => {
    const c = await adapter().getCandles({ symbol: MT, period: '1d', start: cnTime('2024-05-29'), end: cnTime('2024-06-03') });
    expect(log[0].url.origin).toBe('https://push2his.em.test');
    expect(Object.fromEntries(log[0].url.searchParams)).toEqual({
      secid: '1.600519', ut: 'fa5fd1943c7b386f172d6893dbfba10b', fields1: 'f1,f2,f3,f4,f5,f6',
      fields2: 'f51,f52,f53,f54,f55,f56,f57,f58,f59,f60,f61', klt: '101', fqt: '0', beg: '20240529', end: '20240603', lmt: '1000000',
    });
    expect(c).toEqual({
      timestamp: ['2024-05-29', '2024-05-30', '2024-05-31', '2024-06-03'].map((d) => cnTime(d)),
      open: [1688.0, 1676.0, 1681.3, 1690.0], high: [1690.0, 1688.8, 1695.5, 1695.0], low: [1670.1, 1672.0, 1679.0, 1676.2],
      close: [1676.5, 1681.3, 1690.2, 1681.3], volume: [2_887_700, 2_441_000, 3_011_800, 2_345_600],
      amount: [4_857_833_325, 4_097_584_650, 5_077_141_850, 3_953_860_640], prev_close: [1688.0, 1676.5, 1681.3, 1690.2],
    });
  });

  it('daily candles with count and no start ask for the newest lmt bars', async () => {
    const c = await adapter().getCandles({ symbol: MT, period: '1d', count: 2 });
    expect(log[0].url.searchParams.get('lmt')).toBe('2');
    expect(log[0].url.searchParams.get('beg')).toBe('0');
    expect(log[0].url.searchParams.get('end')).toBe('20500101');
    expect(c?.timestamp).toEqual([cnTime('2024-06-03'), cnTime('2024-06-04')]);
  });

  it('minute candles: klt=1, Beijing end labels', async () => {
    const c = await adapter().getCandles({ symbol: MT, period: '1m', start: cnTime('2024-06-04', '09:33'), end: cnTime('2024-06-04', '09:35') });
    expect(log[0].url.searchParams.get('klt')).toBe('1');
    expect(c?.timestamp).toEqual(['09:33', '09:34', '09:35'].map((t) => cnTime('2024-06-04', t)));
    expect(c?.volume).toEqual([37_700, 29_000, 25_100]);
    expect(c?.prev_close).toBeUndefined();
  });

  it('intraday (trends2): the 09:30 auction row folds into the 09:31 bar', async () => {
    const c = await adapter().getIntraday(MT);
    expect(log[0].url.pathname).toBe('/api/qt/stock/trends2/get');
    expect(Object.fromEntries(log[0].url.searchParams)).toMatchObject({ secid: '1.600519', ndays: '1', iscr: '0' });
    expect(c?.timestamp).toEqual(['09:31', '09:32', '09:33', '09:34', '09:35'].map((t) => cnTime('2024-06-04', t)));
    expect(c?.open[0]).toBe(1682.0);
    expect(c?.close[0]).toBe(1684.1);
    expect(c?.high[0]).toBe(1685.0);
    expect(c?.volume[0]).toBe((120 + 812) * 100);
    expect(c?.amount[0]).toBe(20_184_000 + 136_663_660);
  });

  it('intraday of a US stock: Beijing-time rows become New York end labels', async () => {
    const c = await adapter().getIntraday(AAPL);
    expect(log.map((r) => r.url.pathname)).toEqual(['/api/qt/ulist.np/get', '/api/qt/stock/trends2/get']);
    expect(log[1].url.searchParams.get('secid')).toBe('105.AAPL');
    expect(c?.timestamp).toEqual(['09:31', '09:32', '09:33', '16:00'].map((t) => nyTime('2024-06-03', t)));
    expect(c?.volume).toEqual([812_000 + 1_450_123, 701_234, 655_432, 2_100_456]);
  });

  it('ex-factors: the worked case (10派5 then 10送10) from the dividend table and raw closes', async () => {
    const f = await adapter().getExFactors([PINGAN, MT, UNKNOWN]);
    const dc = log.filter((r) => r.url.origin === 'https://datacenter.em.test');
    // Per code: the dividend table, then the rights-issue table (配股); codes run concurrently.
    expect(dc.map((r) => `${r.url.searchParams.get('reportName')} ${r.url.searchParams.get('filter')}`).sort()).toEqual([
      'RPT_IPO_ALLOTMENT (SECURITY_CODE="000001")', 'RPT_IPO_ALLOTMENT (SECURITY_CODE="600519")', 'RPT_IPO_ALLOTMENT (SECURITY_CODE="999999")',
      'RPT_SHAREBONUS_DET (SECURITY_CODE="000001")', 'RPT_SHAREBONUS_DET (SECURITY_CODE="600519")', 'RPT_SHAREBONUS_DET (SECURITY_CODE="999999")',
    ]);
    expect(dc.findIndex((r) => r.url.searchParams.get('filter') === '(SECURITY_CODE="000001")' && r.url.searchParams.get('reportName') === 'RPT_SHAREBONUS_DET'))
      .toBeLessThan(dc.findIndex((r) => r.url.searchParams.get('filter') === '(SECURITY_CODE="000001")' && r.url.searchParams.get('reportName') === 'RPT_IPO_ALLOTMENT'));
    expect(Object.fromEntries(dc[0].url.searchParams)).toMatchObject({
      reportName: 'RPT_SHAREBONUS_DET', columns: 'ALL', sortColumns: 'EX_DIVIDEND_DATE', sortTypes: '-1', pageSize: '500',
    });
    const rightsCall = dc.find((r) => r.url.searchParams.get('reportName') === 'RPT_IPO_ALLOTMENT')!;
    expect(Object.fromEntries(rightsCall.url.searchParams)).toMatchObject({ reportName: 'RPT_IPO_ALLOTMENT', columns: 'ALL', sortColumns: 'EQUITY_RECORD_DATE' });
    const closes = log.filter((r) => r.url.pathname === '/api/qt/stock/kline/get');
    expect(closes.map((r) => [r.url.searchParams.get('secid'), r.url.searchParams.get('beg'), r.url.searchParams.get('lmt')])).toEqual([
      ['0.000001', '20240419', '1000000'], ['1.600519', '0', '1'], ['1.999999', '0', '1'],
    ]);
    expect(Object.fromEntries(f)).toEqual({
      '000001.SZ': [
        { timestamp: cnTime('2024-05-29'), ex_factor: 1.05, cash_dividend: 0.5, bonus_ratio: 0, rights_ratio: 0, rights_price: 0, parts_known: true },
        { timestamp: cnTime('2024-05-31'), ex_factor: 2, cash_dividend: 0, bonus_ratio: 1, rights_ratio: 0, rights_price: 0, parts_known: true },
      ],
      '600519.SH': [],
    });
  });

  it('ex-factor derivation skips events not yet ex and events with no earlier close', () => {
    const bars = [{ t: cnTime('2024-05-28'), open: 10, high: 10, low: 10, close: 10.5, volume: 1, amount: 1 }];
    expect(deriveExFactors('CN', [
      { exDate: '2024-05-20', cash: 0.5, shares: 0 },
      { exDate: '2024-05-29', cash: 0.5, shares: 0 },
      { exDate: '2024-05-29', cash: 0, shares: 1 },
      { exDate: '2024-06-20', cash: 0.5, shares: 0 },
    ], bars, cnTime('2024-06-04'))).toEqual([
      { timestamp: cnTime('2024-05-29'), ex_factor: 2.1, cash_dividend: 0.5, bonus_ratio: 1, rights_ratio: 0, rights_price: 0, parts_known: true },
    ]);
  });

  // Issue 24: HK ex-factors come from the F10 dividend table; US stays out of scope as data, and a
  // call that still asks is answered without it instead of throwing (a breaker failure).
  it('ex-factors: declared for CN and HK (and futures: an empty list, eastmoney-futures.test.ts); US symbols are left out without a request or an error', async () => {
    const a = adapter();
    expect(a.capabilities.resourceMarkets?.exFactors).toEqual(['CN', 'HK', 'CN_FUTURES']);
    expect((await a.getExFactors([AAPL])).size).toBe(0);
    expect(log).toHaveLength(0);
  });

  it('ex-factors for HK ask the F10 table RPT_HKF10_MAIN_DIVBASIC (IS_BFP="0") on the F10 host', async () => {
    await adapter().getExFactors([ref('00883.HK')]);
    const f10 = log.find((r) => r.url.origin === 'https://f10.em.test')!;
    expect(f10.url.pathname).toBe('/securities/api/data/v1/get');
    expect(Object.fromEntries(f10.url.searchParams)).toMatchObject({
      reportName: 'RPT_HKF10_MAIN_DIVBASIC', filter: '(SECURITY_CODE="00883")(IS_BFP="0")', source: 'F10', client: 'PC',
    });
    // P_prev comes from raw daily closes of 116.00883, from 40 days before the 2025-06-12 ex-date.
    const closes = log.find((r) => r.url.pathname === '/api/qt/stock/kline/get')!;
    expect([closes.url.searchParams.get('secid'), closes.url.searchParams.get('beg')]).toEqual(['116.00883', '20250503']);
  });

  it('pools are not served: declared false, and the adapter has no listPool (never a stub)', async () => {
    expect(adapter().capabilities.resources.pools).toBe(false);
    expect((adapter() as { listPool?: unknown }).listPool).toBeUndefined();
  });
});

describe('eastmoney adapter: failures and host rotation', () => {
  it('429 cools the host: the next call goes to the next mirror, and back after the cooldown', async () => {
    let first = 0;
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/ulist.np/get`, () => {
      first++;
      return first === 1 ? new HttpResponse('Too Many Requests', { status: 429 }) : HttpResponse.json(fixture('eastmoney', 'ulist-quotes-ok'));
    }));
    const a = adapter();
    const e = await failure(a.getQuotes([MT]));
    expect(e.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(e.retryAfterSeconds).toBe(1);
    clock += 2_000; // past the http layer's budget pause
    expect((await a.getQuotes([MT])).has('600519.SH')).toBe(true);
    expect(log.map((r) => r.url.origin)).toEqual(['https://82.push2.em.test']);
    clock += 60_000;
    await a.getQuotes([MT]);
    expect(first).toBe(2);
  });

  it('a connection reset (Eastmoney throttling) cools the host too', async () => {
    server.use(http.get(`${HOSTS.history[0]}/api/qt/stock/kline/get`, () => HttpResponse.error()));
    const a = adapter();
    expect((await failure(a.getCandles({ symbol: MT, period: '1d' }))).reason).toBe('UPSTREAM_ERROR');
    const c = await a.getCandles({ symbol: MT, period: '1d' });
    expect(c?.timestamp).toHaveLength(6);
    expect(log.map((r) => r.url.origin)).toEqual(['https://82.push2his.em.test']);
  });

  it('5xx: UPSTREAM_ERROR (the host stays in rotation)', async () => {
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/stock/get`, () => new HttpResponse('bad gateway', { status: 502 })));
    const a = adapter();
    const e = await failure(a.getDepth([MT]));
    expect(e.reason).toBe('UPSTREAM_ERROR');
    expect(e.details).toEqual({ adapter: 'eastmoney', status: 502 });
    await failure(a.getDepth([MT]));
  });

  // Behaviour change (issue 8.6): rc ≠ 0 with data: null is Eastmoney's "no such code", an
  // answer (see eastmoney-unknown.test.ts); rc ≠ 0 WITH data is still an error.
  it('a 200 with rc ≠ 0 and data is an error; datacenter codes other than 9201 are errors', async () => {
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/ulist.np/get`, () => HttpResponse.json({ ...fixture<object>('eastmoney', 'rc-error'), data: { total: 0, diff: [] } })));
    const e = await failure(adapter().getQuotes([MT]));
    expect(e.reason).toBe('UPSTREAM_ERROR');
    expect(e.details).toEqual({ adapter: 'eastmoney', rc: 102 });
    server.use(http.get(`${HOSTS.datacenter[0]}/api/data/v1/get`, () => HttpResponse.json(fixture('eastmoney', 'dividends-bad-report'))));
    expect((await failure(adapter().getExFactors([MT]))).details).toEqual({ adapter: 'eastmoney', code: 9501 });
  });

  it('malformed bodies → UPSTREAM_BAD_RESPONSE', async () => {
    server.use(http.get(`${HOSTS.history[0]}/api/qt/stock/kline/get`, () => HttpResponse.json(fixture('eastmoney', 'kline-malformed'))));
    expect((await failure(adapter().getCandles({ symbol: MT, period: '1d' }))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/ulist.np/get`, () => new HttpResponse('jQuery123({"rc":0})', { status: 200 })));
    expect((await failure(adapter().getQuotes([MT]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/ulist.np/get`, () => HttpResponse.json({ rc: 0, data: { total: 1, diff: [{ f2: 'abc', f12: '600519', f13: 1, f18: 1 }] } })));
    expect((await failure(adapter().getQuotes([MT]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/ulist.np/get`, () => HttpResponse.json({ rc: '0', data: null })));
    expect((await failure(adapter().getQuotes([MT]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('empty results: no quotes, no bars', async () => {
    server.use(
      http.get(`${HOSTS.quote[0]}/api/qt/ulist.np/get`, () => HttpResponse.json(fixture('eastmoney', 'ulist-empty'))),
      http.get(`${HOSTS.history[0]}/api/qt/stock/kline/get`, () => HttpResponse.json({ rc: 0, data: { code: '600519', market: 1, name: '贵州茅台', decimal: 2, dktotal: 0, klines: [] } })),
    );
    expect((await adapter().getQuotes([MT])).size).toBe(0);
    expect(await adapter().getCandles({ symbol: MT, period: '1d' })).toEqual({
      timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [],
    });
  });

  it('a slow host hits the deadline: UPSTREAM_TIMEOUT (not a throttle, the host is kept)', async () => {
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/stock/trends2/get`, async () => {
      await delay(1_000);
      return HttpResponse.json(fixture('eastmoney', 'trends-600519'));
    }));
    const a = adapter({}, 50);
    expect((await failure(a.getIntraday(MT))).reason).toBe('UPSTREAM_TIMEOUT');
    await failure(a.getIntraday(MT));
  });
});

runAdapterContract('eastmoney', () => adapter(), {
  batch: [MT, TENCENT, AAPL],
  candles: [MT],
  exFactors: [PINGAN, MT],
  financials: [ref('02367.HK'), TENCENT, ref('601088.SH')],
  unknown: UNKNOWN,
});
