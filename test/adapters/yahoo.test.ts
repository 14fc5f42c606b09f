import { describe, expect, it } from 'vitest';
import { delay, http, HttpResponse } from 'msw';
import { createYahooAdapter, type YahooOptions } from '../../adapters/yahoo/index.ts';
import { yahooSymbol } from '../../adapters/yahoo/requests.ts';
import type { Adapter } from '../../adapters/types.ts';
import { YAHOO_TEST_BASE as BASE, cutChart, yahooHandlers } from '../../mocks/handlers/yahoo.ts';
import { fixture, type CapturedRequest } from '../../mocks/handlers/support.ts';
import { cnTime, failure, nyTime, ref, testHttp, vendorServer } from './helpers.ts';
import { runAdapterContract } from './contract.ts';

const NOW = nyTime('2024-06-04', '04:00');
const NOW_S = NOW / 1000;
const DAY_S = 86_400;
const log: CapturedRequest[] = [];

const { server } = vendorServer(yahooHandlers(log), () => {
  log.length = 0;
});

function adapter(options: Partial<YahooOptions> = {}, timeoutMs?: number): ReturnType<typeof createYahooAdapter> {
  return createYahooAdapter({ baseUrl: BASE, ...options }, { now: () => NOW, http: testHttp('yahoo', { timeoutMs }) });
}

const AAPL = ref('AAPL.US');
const TENCENT = ref('00700.HK');
const UNKNOWN = ref('ZZZZ.US');
const days = (...d: string[]) => d.map((x) => nyTime(x));
const q = (i: number) => Object.fromEntries(log[i].url.searchParams);

describe('yahoo adapter: requests and normalised results', () => {
  it('maps symbols: .SS, four-digit HK, hyphenated class shares', () => {
    expect(['600519.SH', '000001.SZ', '430047.BJ', '00700.HK', '09992.HK', 'AAPL.US', 'BRK.B.US'].map((s) => yahooSymbol(ref(s))))
      .toEqual(['600519.SS', '000001.SZ', '430047.BJ', '0700.HK', '9992.HK', 'AAPL', 'BRK-B']);
  });

  it('daily candles: one request reaching to now with events; restamped to New York midnight; splits undone', async () => {
    const start = nyTime('2024-05-24');
    const c = await adapter().getCandles({ symbol: AAPL, period: '1d', start, end: nyTime('2024-05-31') });
    expect(log).toHaveLength(1);
    expect(log[0].url.pathname).toBe('/v8/finance/chart/AAPL');
    expect(q(0)).toEqual({
      period1: String(start / 1000), period2: String(NOW_S + DAY_S), interval: '1d', events: 'div,splits', includePrePost: 'false',
    });
    expect(log[0].headers.get('user-agent')).toContain('Mozilla/5.0');
    // The 2-for-1 split of 2024-05-30 is undone on the bars before it.
    expect(c).toEqual({
      timestamp: days('2024-05-24', '2024-05-28', '2024-05-29', '2024-05-30', '2024-05-31'),
      open: [377.64, 383.02, 379.22, 190.76, 191.44],
      high: [381.16, 386.0, 384.5, 192.18, 192.57],
      low: [376.08, 378.2, 379.02, 190.63, 189.91],
      close: [379.96, 379.98, 380.58, 191.29, 192.25],
      volume: [18_147_300, 26_140_050, 26_534_000, 49_947_900, 75_158_300],
      amount: [0, 0, 0, 0, 0],
      // The vendor's previous closes: meta.chartPreviousClose for the answer's first bar (the
      // fixture's 192.25, ×2 with the split undone), then the close before each bar in Yahoo's
      // scale (on the split's ex-date the split-adjusted 190.29: the reference price).
      prev_close: [384.5, 379.96, 379.98, 190.29, 191.29],
    });
  });

  it('daily candles with count and no start reach back two calendar days per bar', async () => {
    const c = await adapter().getCandles({ symbol: AAPL, period: '1d', count: 2 });
    expect(q(0).period1).toBe(String(NOW_S - 34 * DAY_S));
    expect(c?.timestamp).toEqual(days('2024-05-31', '2024-06-03'));
  });

  it('1m candles: ≤ 7-day chunks, newest first, start labels + 60 s, closing print folded, later splits fetched', async () => {
    const start = nyTime('2024-05-20', '09:30');
    const end = nyTime('2024-06-03', '16:00');
    const c = await adapter().getCandles({ symbol: AAPL, period: '1m', start, end });
    const chunks = log.filter((r) => r.url.searchParams.get('interval') === '1m').map((r) => [Number(r.url.searchParams.get('period1')), Number(r.url.searchParams.get('period2'))]);
    const endS = end / 1000;
    const lastS = endS + 60; // the 16:00 closing print is stamped at 16:00 and belongs to the 16:00 bar
    const firstS = start / 1000 - 60;
    expect(chunks).toEqual([[lastS - 7 * DAY_S, lastS], [lastS - 14 * DAY_S, lastS - 7 * DAY_S], [firstS, lastS - 14 * DAY_S]]);
    for (const [p1, p2] of chunks) expect(p2 - p1).toBeLessThanOrEqual(7 * DAY_S);
    // The window ends before today, so one daily request asks for splits since then.
    const later = log.filter((r) => r.url.searchParams.get('interval') === '1d');
    expect(later.map((r) => [r.url.searchParams.get('period1'), r.url.searchParams.get('events')])).toEqual([[String(endS), 'div,splits']]);
    expect(c).toEqual({
      timestamp: ['09:31', '09:32', '09:34', '09:35', '15:59', '16:00'].map((t) => nyTime('2024-06-03', t)),
      open: [192.9, 193.31, 193.05, 193.62, 193.7, 193.88],
      high: [193.5, 193.4, 193.7, 193.8, 193.95, 194.1],
      low: [192.6, 192.95, 193.0, 193.41, 193.66, 193.85],
      close: [193.31, 193.05, 193.62, 193.55, 193.88, 194.03],
      volume: [2_262_123, 701_234, 655_432, 455_012, 980_111, 2_100_456],
      amount: [0, 0, 0, 0, 0, 0],
    });
  });

  it('1m candles: a split after the window (found by the extra request) is undone', async () => {
    const split = nyTime('2024-06-04', '09:30') / 1000;
    server.use(http.get(`${BASE}/v8/finance/chart/AAPL`, ({ request }) => {
      const url = new URL(request.url);
      log.push({ method: 'GET', url, headers: request.headers, body: '' });
      const name = url.searchParams.get('interval') === '1m' ? 'chart-minute-aapl' : 'chart-daily-aapl';
      const body = cutChart(fixture('yahoo', name), Number(url.searchParams.get('period1')), Number(url.searchParams.get('period2')));
      if (name === 'chart-daily-aapl') body.chart.result[0].events = { splits: { [split]: { date: split, numerator: 3, denominator: 1, splitRatio: '3:1' } as never } };
      return HttpResponse.json(body);
    }));
    const c = await adapter().getCandles({ symbol: AAPL, period: '1m', start: nyTime('2024-06-03', '09:31'), end: nyTime('2024-06-03', '09:32') });
    // Scaled, then rounded to the stated decimals again (priceHint 2): no float noise served.
    expect(c?.close).toEqual([579.93, 579.15]);
    expect(c?.volume).toEqual([Math.round(2_262_123 / 3), Math.round(701_234 / 3)]);
  });

  it('1m candles older than the lookback are empty without a request', async () => {
    const c = await adapter().getCandles({ symbol: AAPL, period: '1m', start: nyTime('2024-03-01'), end: nyTime('2024-03-05') });
    expect(c?.timestamp).toEqual([]);
    expect(log).toHaveLength(0);
  });

  it('intraday: range=1d interval=1m, bar ends', async () => {
    const c = await adapter().getIntraday(AAPL);
    expect(q(0)).toEqual({ range: '1d', interval: '1m', includePrePost: 'false' });
    expect(c?.timestamp).toEqual(['09:31', '09:32', '09:34', '09:35', '15:59', '16:00'].map((t) => nyTime('2024-06-03', t)));
  });

  it('ex-factors: splits as ratios, dividends as P_prev / (P_prev − D), at New York midnight', async () => {
    const f = await adapter().getExFactors([AAPL, TENCENT, UNKNOWN]);
    expect(log.map((r) => r.url.pathname)).toEqual(['/v8/finance/chart/AAPL', '/v8/finance/chart/0700.HK', '/v8/finance/chart/ZZZZ']);
    expect(q(0)).toEqual({ period1: '0', period2: String(NOW_S + DAY_S), interval: '1d', events: 'div,splits', includePrePost: 'false' });
    expect(Object.fromEntries(f)).toEqual({
      'AAPL.US': [
        { timestamp: nyTime('2024-05-30'), ex_factor: 2, cash_dividend: 0, bonus_ratio: 1, rights_ratio: 0, rights_price: 0, parts_known: true },
        { timestamp: nyTime('2024-05-31'), ex_factor: 191.29 / (191.29 - 0.25), cash_dividend: 0.25, bonus_ratio: 0, rights_ratio: 0, rights_price: 0, parts_known: true },
      ],
    });
  });

  it('quotes from chart meta: amount 0, ratios derived as fractions', async () => {
    const quotes = await adapter().getQuotes([AAPL, TENCENT, UNKNOWN]);
    expect(q(0)).toEqual({ range: '1d', interval: '1d', includePrePost: 'false' });
    expect(log[1].url.pathname).toBe('/v8/finance/chart/0700.HK');
    expect([...quotes.keys()]).toEqual(['AAPL.US', '00700.HK']);
    expect(quotes.get('AAPL.US')).toEqual({
      symbol: 'AAPL.US', region: 'US', last_price: 194.03, open: 192.9, high: 194.99, low: 192.52, prev_close: 192.25,
      volume: 50_080_539, amount: 0, timestamp: nyTime('2024-06-03', '16:00'),
      ext: { type: 'us_equity', name: 'Apple Inc.', amplitude: 0.0128478544, change_amount: 1.78, change_pct: 0.0092587776, turnover_rate: null },
    });
    expect(quotes.get('00700.HK')).toMatchObject({ last_price: 388.2, prev_close: 390.4, timestamp: cnTime('2024-06-04', '16:08') + 15000 });
    expect(quotes.get('00700.HK')?.ext.name).toBe('TENCENT');
  });

  it('instruments from chart meta', async () => {
    const found = await adapter().getInstruments([AAPL, TENCENT]);
    expect(found.get('AAPL.US')).toEqual({
      code: 'AAPL', exchange: 'US', name: 'Apple Inc.', region: 'US', symbol: 'AAPL.US', type: 'stock',
      ext: { type: 'us_equity', float_shares: null, limit_down: null, limit_up: null, listing_date: '1980-12-12', tick_size: 0.01, total_shares: null },
    });
    expect(found.get('00700.HK')?.ext.tick_size).toBe(0.001);
    expect(found.get('00700.HK')?.ext.listing_date).toBe('2004-06-16');
  });

  it('depth and pools are declared false, and the adapter has neither method (never a stub)', async () => {
    const a = adapter() as ReturnType<typeof adapter> & { getDepth?: unknown; listPool?: unknown };
    expect(a.capabilities.resources.depth).toBe(false);
    expect(a.capabilities.amount).toBe(false);
    expect(a.capabilities.resources.pools).toBe(false);
    expect(a.getDepth).toBeUndefined();
    expect(a.listPool).toBeUndefined();
    expect(log).toHaveLength(0);
  });

  it('an unknown ticker (404 Not Found) is undefined', async () => {
    expect(await adapter().getCandles({ symbol: UNKNOWN, period: '1d' })).toBeUndefined();
    expect(await adapter().getIntraday(UNKNOWN)).toBeUndefined();
  });
});

describe('yahoo adapter: failures', () => {
  const chartUrl = `${BASE}/v8/finance/chart/AAPL`;

  it('429: UPSTREAM_UNAVAILABLE', async () => {
    server.use(http.get(chartUrl, () => new HttpResponse('Too Many Requests', { status: 429, headers: { 'retry-after': '7' } })));
    const e = await failure(adapter().getQuotes([AAPL]));
    expect(e.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(e.retryAfterSeconds).toBe(7);
  });

  it('5xx: UPSTREAM_ERROR', async () => {
    server.use(http.get(chartUrl, () => new HttpResponse('oops', { status: 503 })));
    expect((await failure(adapter().getCandles({ symbol: AAPL, period: '1d' }))).reason).toBe('UPSTREAM_ERROR');
  });

  it('a refused request (400 chart.error) and a chart.error inside a 200 are errors', async () => {
    server.use(http.get(chartUrl, () => HttpResponse.json(fixture('yahoo', 'chart-bad-request'), { status: 400 })));
    const e = await failure(adapter().getIntraday(AAPL));
    expect(e.reason).toBe('UPSTREAM_ERROR');
    expect(e.details).toEqual({ adapter: 'yahoo', status: 400, vendor_code: 'Bad Request' });
    server.use(http.get(chartUrl, () => HttpResponse.json(fixture('yahoo', 'chart-bad-request'))));
    expect((await failure(adapter().getIntraday(AAPL))).reason).toBe('UPSTREAM_ERROR');
  });

  it('malformed bodies → UPSTREAM_BAD_RESPONSE', async () => {
    const bodies: Array<() => Response> = [
      () => HttpResponse.json(fixture('yahoo', 'chart-malformed')),
      () => new HttpResponse('<html>consent</html>', { status: 200 }),
      () => HttpResponse.json({ chart: { result: null, error: null } }),
      () => HttpResponse.json({ chart: { result: [{ meta: { regularMarketPrice: '194.03' } }], error: null } }),
    ];
    for (const body of bodies) {
      server.use(http.get(chartUrl, body));
      expect((await failure(adapter().getQuotes([AAPL]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    }
  });

  it('empty: a known ticker with no rows gives empty candles', async () => {
    server.use(http.get(chartUrl, () => HttpResponse.json(fixture('yahoo', 'chart-empty'))));
    expect(await adapter().getIntraday(AAPL)).toEqual({ timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] });
  });

  it('a slow response hits the deadline: UPSTREAM_TIMEOUT', async () => {
    server.use(http.get(chartUrl, async () => {
      await delay(1_000);
      return HttpResponse.json(fixture('yahoo', 'chart-latest-aapl'));
    }));
    expect((await failure(adapter({}, 50).getQuotes([AAPL]))).reason).toBe('UPSTREAM_TIMEOUT');
  });
});

runAdapterContract('yahoo', () => adapter(), {
  batch: [AAPL, TENCENT],
  candles: [AAPL],
  exFactors: [AAPL],
  unknown: UNKNOWN,
});
