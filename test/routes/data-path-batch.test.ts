// The one partial-failure policy through the real app, for every batch route: unknown symbols are
// answers (X-Missing-Symbols, cached); symbols whose upstream failed are X-Failed-Symbols, never
// cached, and the response is never stored nor served as HIT; every symbol failed → 502/503/504.
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import type { AdapterMethod as Method } from '../../adapters/types.ts';
import { appWith, CN_MORNING, symbolsOf, vendor, type TestApp, type Vendor } from '../data/vendor-app.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';

const OK = '600519.SH';
const UNKNOWN = '600001.SH';
const FAILS = '000001.SZ';
const ALSO_FAILS = '601318.SH';
const HK = '00700.HK';

interface BatchRoute {
  name: string;
  url: (symbols: string) => string;
  method: Method;
}

const ROUTES: BatchRoute[] = [
  { name: '/v1/quotes', url: (s) => `/v1/quotes?symbols=${s}`, method: 'getQuotes' },
  { name: '/v1/depth/batch', url: (s) => `/v1/depth/batch?symbols=${s}`, method: 'getDepth' },
  { name: '/v1/klines/batch', url: (s) => `/v1/klines/batch?symbols=${s}&period=1d&count=5`, method: 'getCandles' },
  { name: '/v1/klines/intraday/batch', url: (s) => `/v1/klines/intraday/batch?symbols=${s}&count=5`, method: 'getIntraday' },
  { name: '/v1/klines/ex-factors', url: (s) => `/v1/klines/ex-factors?symbols=${s}`, method: 'getExFactors' },
  { name: '/v1/instruments', url: (s) => `/v1/instruments?symbols=${s}`, method: 'getInstruments' },
];

const apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((t) => t.app.close()));
});

/** CN on a vendor (one symbol per native call, so one failing symbol fails only itself), HK/US on sim. */
async function setup(): Promise<{ t: TestApp; v: Vendor }> {
  const now = () => CN_MORNING;
  const v = vendor('vendor', now, { maxBatch: 1 });
  const t = await appWith({
    markets: { CN: ['vendor'], HK: ['sim'], US: ['sim'] },
    adapters: [v, createSimAdapter({}, { now })],
    breaker: { failureThreshold: 100, openMs: 30_000 },
  });
  apps.push(t);
  return { t, v };
}

const count = (v: Vendor, method: Method, symbol: string) => v.symbolsOf(method).filter((s) => s === symbol).length;

describe.each(ROUTES)('$name: unknown vs failed symbols', (route) => {
  const mixed = route.url([OK, UNKNOWN, FAILS, HK].join(','));

  it('200 partial: found data, X-Missing-Symbols for the unknown, X-Failed-Symbols for the failed', async () => {
    const { t, v } = await setup();
    v.failing.set(FAILS, new AppError('UPSTREAM_ERROR', 'vendor down'));
    const res = await t.get(mixed);
    expect(res.statusCode).toBe(200);
    expect(symbolsOf(res.json())).toEqual([OK, HK]);
    expect(res.headers['x-missing-symbols']).toBe(UNKNOWN);
    expect(res.headers['x-failed-symbols']).toBe(FAILS);
    expect(res.headers['x-cache']).toBe('MISS');
    expect(res.headers['x-upstream']).toBe('vendor,sim');
  });

  it('nothing of a partial answer is stored: the same request asks the vendor again for the failed symbol', async () => {
    const { t, v } = await setup();
    v.failing.set(FAILS, new AppError('UPSTREAM_ERROR', 'vendor down'));
    await t.get(mixed);
    expect(count(v, route.method, FAILS)).toBe(1);
    const again = await t.get(mixed);
    expect(again.statusCode).toBe(200);
    expect(again.headers['x-failed-symbols']).toBe(FAILS);
    expect(symbolsOf(again.json())).toEqual([OK, HK]);
    expect(count(v, route.method, FAILS)).toBe(2);
    // The unknown symbol is an answer: cached, not asked again.
    expect(count(v, route.method, UNKNOWN)).toBe(1);
    // Once the vendor recovers the failed symbol is answered, and that response is stored.
    v.failing.clear();
    const recovered = await t.get(mixed);
    expect(recovered.headers['x-failed-symbols']).toBeUndefined();
    expect(recovered.headers['x-missing-symbols']).toBe(UNKNOWN);
    expect(symbolsOf(recovered.json())).toEqual([OK, FAILS, HK]);
    const stored = await t.get(mixed);
    expect(stored.headers['x-cache']).toBe('HIT');
    expect(count(v, route.method, FAILS)).toBe(3);
  });

  // The vendor was asked again for the failed symbol: a partial answer is never a HIT.
  it('a partial answer is never served as HIT, even when its other symbols come from the data cache', async () => {
    const { t, v } = await setup();
    v.failing.set(FAILS, new AppError('UPSTREAM_ERROR', 'vendor down'));
    await t.get(mixed);
    const again = await t.get(mixed);
    expect(again.headers['x-failed-symbols']).toBe(FAILS);
    expect(again.headers['x-cache']).not.toBe('HIT');
  });

  it.each([
    ['UPSTREAM_ERROR', 502],
    ['UPSTREAM_UNAVAILABLE', 503],
    ['UPSTREAM_TIMEOUT', 504],
  ] as const)('every symbol failed with %s → %i, and nothing is cached', async (reason, status) => {
    const { t, v } = await setup();
    const error = new AppError(reason, 'vendor failed', { retryAfterSeconds: reason === 'UPSTREAM_UNAVAILABLE' ? 9 : undefined });
    v.failing.set(FAILS, error);
    v.failing.set(ALSO_FAILS, error);
    const url = route.url(`${FAILS},${ALSO_FAILS}`);
    const res = await t.get(url);
    expect(res.statusCode).toBe(status);
    expect(res.json()).toMatchObject({ code: status, error: reason });
    if (status === 503) expect(res.headers['retry-after']).toBe('9');
    const before = count(v, route.method, FAILS);
    const again = await t.get(url);
    expect(again.statusCode).toBe(status);
    expect(count(v, route.method, FAILS)).toBe(before + 1);
  });
});

describe('all failed: the most telling error answers', () => {
  it('a vendor 429 (503) wins over a 502 in the same batch', async () => {
    const { t, v } = await setup();
    v.failing.set(FAILS, new AppError('UPSTREAM_ERROR', 'down'));
    v.failing.set(ALSO_FAILS, new AppError('UPSTREAM_UNAVAILABLE', 'slow down', { retryAfterSeconds: 4 }));
    const res = await t.get(`/v1/quotes?symbols=${FAILS},${ALSO_FAILS}`);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('4');
  });

  it('unknown plus failed is not "every symbol failed": 200 with both headers and empty data', async () => {
    const { t, v } = await setup();
    v.failing.set(FAILS, new AppError('UPSTREAM_ERROR', 'down'));
    const res = await t.get(`/v1/quotes?symbols=${UNKNOWN},${FAILS}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [] });
    expect(res.headers['x-missing-symbols']).toBe(UNKNOWN);
    expect(res.headers['x-failed-symbols']).toBe(FAILS);
  });
});
