// Boundary validation of Yahoo chart payloads (issue 14.4) and Yahoo's "no data" answers
// (issue 8.6): exactly which rows survive, what onInvalidRows heard, 502 when nothing is left.
// Fixture sources: mocks/fixtures/README.md.
import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createYahooAdapter } from '../../adapters/yahoo/index.ts';
import type { Adapter } from '../../adapters/types.ts';
import { YAHOO_TEST_BASE as BASE, cutChart, yahooHandlers } from '../../mocks/handlers/yahoo.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { failure, nyTime, ref, testHttp, vendorServer } from './helpers.ts';

const NOW = nyTime('2024-06-04', '04:00');
const { server, events } = vendorServer(yahooHandlers());

function adapter(): ReturnType<typeof createYahooAdapter> {
  return createYahooAdapter({ baseUrl: BASE }, { now: () => NOW, http: testHttp('yahoo'), onInvalidRows: (e) => events.push(e) });
}

const AAPL = ref('AAPL.US');
const TENCENT = ref('00700.HK');
const chartUrl = `${BASE}/v8/finance/chart/AAPL`;
const ev = (resource: string, reason: string, dropped: number, symbol?: string) => ({ adapter: 'yahoo', resource, dropped, reason, ...(symbol ? { symbol } : {}) });

interface Result {
  meta: Record<string, unknown>;
  timestamp: number[];
  events: Record<string, Record<string, Record<string, unknown>>>;
  indicators: { quote: Array<Record<string, Array<number | null>>> };
}
type Body = { chart: { result: Result[]; error: null } };
const dailyBody = () => fixture<Body>('yahoo', 'chart-daily-aapl');
/** Serves `body` as Yahoo would (rows cut to period1/period2); `raw` replaces text after JSON. */
function serve(body: Body, raw: (text: string) => string = (t) => t): void {
  server.use(http.get(chartUrl, ({ request }) => {
    const url = new URL(request.url);
    const cut = cutChart(body as never, Number(url.searchParams.get('period1')), Number(url.searchParams.get('period2')));
    return new HttpResponse(raw(JSON.stringify(cut)), { headers: { 'content-type': 'application/json' } });
  }));
}

describe('yahoo: chart rows', () => {
  it('drops a negative close, a negative volume and an overflowing (Infinity) high; splits still undone', async () => {
    const body = dailyBody();
    const quote = body.chart.result[0].indicators.quote[0];
    quote.close[1] = -189.99;
    quote.volume[2] = -1;
    quote.high[3] = 424242;
    serve(body, (t) => t.replace('424242', '1e999'));
    const c = await adapter().getCandles({ symbol: AAPL, period: '1d' });
    expect(c?.timestamp).toEqual(['2024-05-24', '2024-05-31', '2024-06-03'].map((d) => nyTime(d)));
    expect(c?.close).toEqual([189.98 * 2, 192.25, 194.03]);
    expect(events).toEqual([
      ev('candles', 'non_positive_price', 1, 'AAPL.US'),
      ev('candles', 'negative_volume', 1, 'AAPL.US'),
      ev('candles', 'non_finite', 1, 'AAPL.US'),
    ]);
  });

  it('a repeated stamp keeps the later row', async () => {
    const body = dailyBody();
    const r = body.chart.result[0];
    r.timestamp.push(r.timestamp[5]);
    for (const [k, col] of Object.entries(r.indicators.quote[0])) col.push(k === 'close' ? 194.5 : col[5]);
    serve(body);
    const c = await adapter().getCandles({ symbol: AAPL, period: '1d', count: 2 });
    expect(c?.close).toEqual([192.25, 194.5]);
    expect(events).toEqual([ev('candles', 'duplicate_timestamp', 1, 'AAPL.US')]);
  });

  it('unequal columns → UPSTREAM_BAD_RESPONSE; every row invalid → UPSTREAM_BAD_RESPONSE', async () => {
    const body = dailyBody();
    body.chart.result[0].indicators.quote[0].low.pop();
    // Served whole: cutting by period would pad the short column back to length.
    server.use(http.get(chartUrl, () => HttpResponse.json(body)));
    expect((await failure(adapter().getCandles({ symbol: AAPL, period: '1d' }))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([ev('candles', 'unequal_columns', 6, 'AAPL.US')]);

    events.length = 0;
    const negative = dailyBody();
    negative.chart.result[0].indicators.quote[0].open = negative.chart.result[0].indicators.quote[0].open.map((v) => -(v as number));
    serve(negative);
    expect((await failure(adapter().getCandles({ symbol: AAPL, period: '1d' }))).reason).toBe('UPSTREAM_BAD_RESPONSE');
    expect(events).toEqual([ev('candles', 'non_positive_price', 6, 'AAPL.US')]);
  });

  it('a dividend and a split repeated under a second stamp of the same date are applied once', async () => {
    const body = dailyBody();
    const e = body.chart.result[0].events;
    e.dividends['1717163000'] = { amount: 0.25, date: 1717163000 };
    e.splits['1717076000'] = { date: 1717076000, numerator: 2, denominator: 1, splitRatio: '2:1' };
    serve(body);
    const f = await adapter().getExFactors([AAPL]);
    expect(f.get('AAPL.US')?.map((x) => [x.timestamp, x.ex_factor, x.cash_dividend, x.bonus_ratio])).toEqual([
      [nyTime('2024-05-30'), 2, 0, 1],
      [nyTime('2024-05-31'), 191.29 / (191.29 - 0.25), 0.25, 0],
    ]);
    expect(events).toEqual([ev('exFactors', 'duplicate_ex_factor', 2, 'AAPL.US')]);
  });
});

describe('yahoo: quotes, intraday, no-data answers', () => {
  it('a quote with a negative price is dropped; none left → UPSTREAM_BAD_RESPONSE', async () => {
    const body = fixture<Body>('yahoo', 'chart-latest-aapl');
    body.chart.result[0].meta.regularMarketPrice = -194.03;
    server.use(http.get(chartUrl, () => HttpResponse.json(body)));
    expect([...(await adapter().getQuotes([AAPL, TENCENT])).keys()]).toEqual(['00700.HK']);
    expect(events).toEqual([ev('quotes', 'non_positive_price', 1, 'AAPL.US')]);
    expect((await failure(adapter().getQuotes([AAPL]))).reason).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('intraday carries prev_close: meta.chartPreviousClose first, then the previous bar\'s close', async () => {
    const c = await adapter().getIntraday(AAPL);
    expect(c?.prev_close?.slice(0, 3)).toEqual([192.25, c?.close[0], c?.close[1]]);
    expect(c?.prev_close).toHaveLength(c?.timestamp.length ?? -1);
  });

  it('400 "Data doesn\'t exist for startDate" is an empty window of a known ticker, not an error', async () => {
    server.use(http.get(chartUrl, () => HttpResponse.json(fixture('yahoo', 'chart-no-data-range'), { status: 400 })));
    expect(await adapter().getCandles({ symbol: AAPL, period: '1d', start: nyTime('1970-01-02'), end: nyTime('1970-02-02') }))
      .toEqual({ timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] });
    expect(await adapter().getExFactors([AAPL])).toEqual(new Map([['AAPL.US', []]]));
  });
});
