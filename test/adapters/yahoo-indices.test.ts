// Indices on Yahoo: the gateway's index symbols asked as Yahoo's tickers (^GSPC, ^NDX, ^DJI, ^HSI,
// ^HSCE, ^HSTECH; CN indices under their exchange suffix, 000001.SS apart from 000001.SZ), and a
// real index chart (the ^SOX capture of 2026-10-05, mocks/fixtures/README.md; no ^GSPC capture was
// found, so it stands for Yahoo's index chart shape) served for SPX.US: bars as the vendor gives
// them, volume included (0 for this index), type index from meta.instrumentType.
import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createYahooAdapter } from '../../adapters/yahoo/index.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { ref, testHttp, vendorServer } from './helpers.ts';

const BASE = 'https://yahoo.index.test';
const SOX = 'replay-chart-1mo-sox-index';
let asked: string[] = [];

vendorServer([
  http.get(`${BASE}/v8/finance/chart/:ticker`, ({ params }) => {
    const ticker = String(params.ticker);
    asked.push(ticker);
    return ticker.startsWith('^') ? HttpResponse.json(fixture('yahoo', SOX)) : HttpResponse.json(fixture('yahoo', 'chart-not-found'), { status: 404 });
  }),
], () => {
  asked = [];
});

const NOW = Date.parse('2026-10-05T20:00:00Z');
const adapter = () => createYahooAdapter({ baseUrl: BASE }, { now: () => NOW, http: testHttp('yahoo') });
type ChartBody = { chart: { result: Array<{ meta: Record<string, number | string>; timestamp: number[]; indicators: { quote: Array<Record<string, number[]>> } }> } };

describe('yahoo: index tickers', () => {
  it.each([
    ['SPX.US', '^GSPC'], ['NDX.US', '^NDX'], ['DJI.US', '^DJI'], ['HSI.HK', '^HSI'], ['hscei.hk', '^HSCE'], ['HSTECH.HK', '^HSTECH'],
    ['000001.SH', '000001.SS'], ['000300.SH', '000300.SS'], ['399006.SZ', '399006.SZ'], ['000001.SZ', '000001.SZ'],
  ])('%s is asked as %s', async (symbol, ticker) => {
    await adapter().getCandles({ symbol: ref(symbol), period: '1d', count: 5 });
    expect(asked).toEqual([ticker]);
  });
});

describe('yahoo: an index chart', () => {
  const body = fixture<ChartBody>('yahoo', SOX).chart.result[0];
  const q = body.indicators.quote[0];
  const r2 = (x: number) => Math.round(x * 100) / 100;

  it('daily bars field by field (priceHint 2), prev_close from chartPreviousClose, volume as given (0)', async () => {
    const first = localMidnight('US', '2026-09-08');
    const last = localMidnight('US', '2026-10-05');
    const c = (await adapter().getCandles({ symbol: ref('SPX.US'), period: '1d', start: first, end: last }))!;
    expect(c.timestamp.length).toBe(20);
    expect(c.timestamp[0]).toBe(first);
    expect(c.timestamp[19]).toBe(last);
    expect(c.close).toEqual(q.close.map(r2));
    // The session of 2026-10-05 is the forming bar at this clock (the adapter's own rules for it);
    // every closed bar's open is the vendor's, to its two decimals.
    expect(c.open.slice(0, 19)).toEqual(q.open.slice(0, 19).map(r2));
    expect(c.volume).toEqual(q.volume);
    expect(c.prev_close![0]).toBe(body.meta.chartPreviousClose);
  });

  it('the instrument is type index (meta.instrumentType INDEX), with no shares and no limits', async () => {
    const i = (await adapter().getInstruments([ref('SPX.US')])).get('SPX.US')!;
    expect(i).toMatchObject({ symbol: 'SPX.US', code: 'SPX', exchange: 'US', type: 'index', name: 'PHLX Semiconductor' });
    expect(i.ext).toMatchObject({ total_shares: null, float_shares: null, limit_up: null, limit_down: null, tick_size: 0.01 });
    expect(asked).toEqual(['^GSPC']);
  });
});
