// Eastmoney's "no such code" answers (issue 8.6): HTTP 200 with `rc` 100/102 and `data: null`
// on push2 (ulist, stock/get, trends2) and push2his (kline), and the datacenter's empty dividend
// table, are unknown symbols or empty results, never thrown, so never a breaker failure. And a
// failed previous-close lookup for intraday keeps the bars. Fixture sources: mocks/fixtures/README.md.
import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import type { Adapter, InvalidRowsEvent } from '../../adapters/types.ts';
import { createResilience } from '../../src/upstream/resilience.ts';
import { EASTMONEY_TEST_HOSTS as HOSTS, eastmoneyHandlers } from '../../mocks/handlers/eastmoney.ts';
import { capture, fixture, type CapturedRequest } from '../../mocks/handlers/support.ts';
import { cnTime, ref, testHttp, vendorServer } from './helpers.ts';

const NOW = cnTime('2024-06-04', '16:00');
const log: CapturedRequest[] = [];
const invalid: InvalidRowsEvent[] = [];

const { server } = vendorServer(eastmoneyHandlers(log), () => {
  log.length = 0;
  invalid.length = 0;
});

function adapter(): ReturnType<typeof createEastmoneyAdapter> {
  return createEastmoneyAdapter(
    { quoteHosts: HOSTS.quote, historyHosts: HOSTS.history, datacenterHosts: HOSTS.datacenter },
    { now: () => NOW, http: testHttp('eastmoney', { now: () => NOW }), onInvalidRows: (e) => invalid.push(e) },
  );
}

const MT = ref('600519.SH');
const PINGAN = ref('000001.SZ');
const TENCENT = ref('00700.HK');
const NOPE = ref('ZZZZZ.US');
const RC100 = async ({ request }: { request: Request }) => {
  await capture(log, request);
  return HttpResponse.json(fixture('eastmoney', 'ulist-unknown-rc100'));
};
const RC102 = async ({ request }: { request: Request }) => {
  await capture(log, request);
  return HttpResponse.json(fixture('eastmoney', 'rc-error'));
};

/** Every push2 / push2his endpoint answers "no such code" with rc ≠ 0. */
function everythingUnknown(): void {
  server.use(
    ...HOSTS.quote.flatMap((h) => [
      http.get(`${h}/api/qt/ulist.np/get`, RC100),
      http.get(`${h}/api/qt/stock/get`, RC102),
      http.get(`${h}/api/qt/stock/trends2/get`, RC102),
    ]),
    ...HOSTS.history.map((h) => http.get(`${h}/api/qt/stock/kline/get`, RC102)),
  );
}

describe('eastmoney: rc ≠ 0 with data: null is an unknown symbol on every endpoint', () => {
  it('ulist (quotes): rc 100 → no quote, no error', async () => {
    everythingUnknown();
    expect((await adapter().getQuotes([MT, TENCENT])).size).toBe(0);
    expect(log.map((r) => r.url.pathname)).toEqual(['/api/qt/ulist.np/get']);
  });

  it('ulist (US market lookup): rc 100 → the ticker stays unresolved and is never asked for', async () => {
    everythingUnknown();
    const a = adapter();
    expect((await a.getQuotes([NOPE])).size).toBe(0);
    expect(await a.getCandles({ symbol: NOPE, period: '1d' })).toBeUndefined();
    expect(await a.getIntraday(NOPE)).toBeUndefined();
    // Only the market lookups went out: no quote, kline or trends call for an unresolved ticker.
    expect(new Set(log.map((r) => r.url.searchParams.get('fields')))).toEqual(new Set(['f12,f13']));
  });

  it('stock/get (depth, instruments): rc 102 → the symbol is omitted', async () => {
    everythingUnknown();
    const a = adapter();
    expect((await a.getDepth([MT, TENCENT])).size).toBe(0);
    expect((await a.getInstruments([MT])).size).toBe(0);
    expect(log.filter((r) => r.url.pathname === '/api/qt/stock/get')).toHaveLength(3);
  });

  it('push2his kline (candles 1d and 1m): rc 102 → undefined', async () => {
    everythingUnknown();
    const a = adapter();
    expect(await a.getCandles({ symbol: MT, period: '1d', count: 5 })).toBeUndefined();
    expect(await a.getCandles({ symbol: MT, period: '1m' })).toBeUndefined();
    expect(log.map((r) => r.url.searchParams.get('klt'))).toEqual(['101', '1']);
  });

  it('trends2 (intraday): rc 102 → undefined', async () => {
    everythingUnknown();
    expect(await adapter().getIntraday(MT)).toBeUndefined();
    expect(log.map((r) => r.url.pathname)).toEqual(['/api/qt/stock/trends2/get']);
  });

  it('ex-factors: an empty dividend table is no events; with the closes lookup at rc 102 the code is unknown', async () => {
    // The handler's datacenter answers 9201 (empty) for 600519; its kline/get knows 600519.
    expect(Object.fromEntries(await adapter().getExFactors([MT]))).toEqual({ '600519.SH': [] });
    everythingUnknown();
    expect((await adapter().getExFactors([PINGAN, MT])).size).toBe(0);
  });

  it('20 unknown lookups in a row across the endpoints never throw, report no invalid rows, and leave the breaker closed', async () => {
    everythingUnknown();
    const a = adapter();
    const resilience = createResilience('eastmoney', {
      deadlineMs: 2_000, concurrency: 4, maxQueue: 100, breaker: { failureThreshold: 5, openMs: 30_000 },
    }, { now: () => NOW });
    const calls: Array<() => Promise<unknown>> = [
      () => resilience.call(a, 'quotes', (ctx) => a.getQuotes([MT], ctx)),
      () => resilience.call(a, 'depth', (ctx) => a.getDepth([MT], ctx)),
      () => resilience.call(a, 'instruments', (ctx) => a.getInstruments([TENCENT], ctx)),
      () => resilience.call(a, 'candles', (ctx) => a.getCandles({ symbol: MT, period: '1d' }, ctx)),
      () => resilience.call(a, 'intraday', (ctx) => a.getIntraday(MT, ctx)),
    ];
    const answers: unknown[] = [];
    for (let i = 0; i < 20; i++) answers.push(await calls[i % calls.length]());
    expect(answers.map((v) => (v instanceof Map ? v.size : v))).toEqual(Array.from({ length: 4 }, () => [0, 0, 0, undefined, undefined]).flat());
    expect(resilience.health().circuit).toBe('closed');
    expect(invalid).toEqual([]);
  });
});

describe('eastmoney intraday: the previous close', () => {
  const trendsWithout = async ({ request }: { request: Request }) => {
    await capture(log, request);
    return HttpResponse.json(fixture('eastmoney', 'trends-600519-no-preclose'));
  };

  it('comes from trends2 preClose: prev_close[0] is it, then the previous bar\'s close', async () => {
    const c = await adapter().getIntraday(MT);
    expect(c?.prev_close).toEqual([1681.3, 1684.1, 1683.2, 1685.6, 1686.9]);
    expect(log).toHaveLength(1);
  });

  it('without preClose, from the newest daily bar before the session', async () => {
    server.use(http.get(`${HOSTS.quote[0]}/api/qt/stock/trends2/get`, trendsWithout));
    const c = await adapter().getIntraday(MT);
    const lookup = log.find((r) => r.url.pathname === '/api/qt/stock/kline/get');
    expect(Object.fromEntries(lookup?.url.searchParams ?? [])).toMatchObject({ secid: '1.600519', klt: '101', beg: '0', end: '20240603', lmt: '1' });
    expect(c?.prev_close?.[0]).toBe(1681.3);
  });

  it('a failed lookup (5xx) keeps the bars: prev_close[0] = the first open', async () => {
    server.use(
      http.get(`${HOSTS.quote[0]}/api/qt/stock/trends2/get`, trendsWithout),
      http.get(`${HOSTS.history[0]}/api/qt/stock/kline/get`, () => new HttpResponse('bad gateway', { status: 502 })),
    );
    const c = await adapter().getIntraday(MT);
    expect(c?.timestamp).toEqual(['09:31', '09:32', '09:33', '09:34', '09:35'].map((t) => cnTime('2024-06-04', t)));
    expect(c?.open[0]).toBe(1682.0);
    expect(c?.prev_close).toEqual([1682.0, 1684.1, 1683.2, 1685.6, 1686.9]);
  });

  it('an unknown-code lookup (rc 102) keeps the bars the same way', async () => {
    server.use(
      http.get(`${HOSTS.quote[0]}/api/qt/stock/trends2/get`, trendsWithout),
      http.get(`${HOSTS.history[0]}/api/qt/stock/kline/get`, RC102),
    );
    const c = await adapter().getIntraday(MT);
    expect(c?.timestamp).toHaveLength(5);
    expect(c?.prev_close?.[0]).toBe(1682.0);
  });
});
