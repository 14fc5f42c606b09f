// The whole upstream stack behind a route: GET /v1/quotes → cache → adapter guard → an HTTP vendor
// adapter on createUpstreamHttp → msw. Retry once on 503, no retry of 429 (its Retry-After goes to
// the client), deadline → 504, unreadable body → 502; a CN vendor failure leaves HK (sim) intact.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Adapter } from '../../adapters/types.ts';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { createStandInVendor, STAND_IN_URL, vendorQuote, type StandInVendor } from '../helpers/fake-adapter.ts';

const RID = 'vendor-test-1';
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

const apps: FastifyInstance[] = [];
const vendors: StandInVendor[] = [];
afterEach(async () => {
  server.resetHandlers();
  await Promise.all(apps.splice(0).map((a) => a.close()));
  await Promise.all(vendors.splice(0).map((v) => v.client.close()));
});

/** Answers each vendor call with the next responder (the last one repeats); records the URLs. */
function vendorSequence(...responders: Array<(url: URL) => Response | Promise<Response>>) {
  const urls: URL[] = [];
  server.use(http.get(STAND_IN_URL, ({ request }) => {
    const url = new URL(request.url);
    const responder = responders[Math.min(urls.length, responders.length - 1)];
    urls.push(url);
    return responder(url);
  }));
  return urls;
}

const quotesFor = (url: URL) => HttpResponse.json({
  quotes: (url.searchParams.get('symbols') ?? '').split(',').filter((s) => s === '600519.SH').map((s) => vendorQuote(s, 1500, CN_MORNING - 3_000)),
});

async function setup(vendorOptions: Parameters<typeof createStandInVendor>[0] = {}, deadlineMs = 5_000) {
  const now = () => CN_MORNING;
  const vendor = createStandInVendor({ now, ...vendorOptions });
  vendors.push(vendor);
  const adapters = new Map<string, Adapter>([['stand-in', vendor.adapter], ['sim', createSimAdapter({}, { now })]]);
  const { app } = await buildTestApp({
    now,
    adapters,
    configure: (c) => {
      c.routing.markets.CN = ['stand-in'];
      c.upstream.deadlineMs = deadlineMs;
    },
  });
  apps.push(app);
  return app;
}

const get = (app: FastifyInstance, url: string) =>
  app.inject({ method: 'GET', url, headers: { 'x-api-key': KEYS.demo, 'x-request-id': RID } });

function expectError(res: LightMyRequestResponse, status: number, reason: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['cache-control']).toBe('no-store');
  const body = res.json();
  expect(body).toMatchObject({ code: status, error: reason, request_id: RID });
  return body as { message: string; details?: unknown };
}

describe('quotes through an HTTP vendor (msw)', () => {
  it('maps the vendor body and says which upstream answered', async () => {
    const urls = vendorSequence(quotesFor);
    const app = await setup();
    const res = await get(app, '/v1/quotes?symbols=600519.SH,600001.SH');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('stand-in');
    expect(res.headers['x-missing-symbols']).toBe('600001.SH');
    expect(res.json().data).toEqual([{
      symbol: '600519.SH', region: 'CN', last_price: 1500, open: 1499, high: 1502, low: 1498, prev_close: 1499.5,
      volume: 12_300, amount: 12_300 * 1500, timestamp: CN_MORNING - 3_000,
      ext: { type: 'cn_equity', name: 'name of 600519.SH', amplitude: (4 / 1499.5) * 100, change_amount: 0.5, change_pct: (0.5 / 1499.5) * 100, turnover_rate: null },
    }]);
    expect(urls.map((u) => u.searchParams.get('symbols'))).toEqual(['600519.SH,600001.SH']);
  });

  it('503 then 200: one retry, then 200', async () => {
    const urls = vendorSequence(() => new HttpResponse(null, { status: 503 }), quotesFor);
    const app = await setup();
    const res = await get(app, '/v1/quotes?symbols=600519.SH');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(['600519.SH']);
    expect(urls).toHaveLength(2);
  });

  it('502 twice: 502 UPSTREAM_ERROR after exactly one retry', async () => {
    const urls = vendorSequence(() => new HttpResponse('bad gateway', { status: 502 }));
    const app = await setup();
    const body = expectError(await get(app, '/v1/quotes?symbols=600519.SH'), 502, 'UPSTREAM_ERROR');
    expect(body.details).toEqual({ adapter: 'stand-in', status: 502, attempts: [{ adapter: 'stand-in', cause: 'http_status', status: 502, message: 'the vendor answered HTTP 502' }] });
    expect(body.message).not.toContain('bad gateway');
    expect(urls).toHaveLength(2);
  });

  it('vendor 429 with Retry-After: 7 → 503 with Retry-After: 7, never retried, and the next call waits too', async () => {
    const urls = vendorSequence(() => new HttpResponse(null, { status: 429, headers: { 'retry-after': '7' } }));
    const app = await setup();
    const res = await get(app, '/v1/quotes?symbols=600519.SH');
    expectError(res, 503, 'UPSTREAM_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('7');
    expect(urls).toHaveLength(1);
    const next = await get(app, '/v1/quotes?symbols=601318.SH');
    expectError(next, 503, 'UPSTREAM_UNAVAILABLE');
    expect(next.headers['retry-after']).toBe('7');
    expect(urls).toHaveLength(1);
  });

  it('a slow vendor → 504 UPSTREAM_TIMEOUT (the HTTP layer\'s deadline)', async () => {
    const urls = vendorSequence(async (url) => {
      await delay(2_000);
      return quotesFor(url);
    });
    const app = await setup({ timeoutMs: 150 });
    expectError(await get(app, '/v1/quotes?symbols=600519.SH'), 504, 'UPSTREAM_TIMEOUT');
    expect(urls).toHaveLength(1);
  });

  it('a slow vendor → 504 UPSTREAM_TIMEOUT (the service\'s deadline, shorter than the vendor\'s)', async () => {
    vendorSequence(async (url) => {
      await delay(2_000);
      return quotesFor(url);
    });
    const app = await setup({ timeoutMs: 5_000 }, 150);
    const body = expectError(await get(app, '/v1/quotes?symbols=600519.SH'), 504, 'UPSTREAM_TIMEOUT');
    expect(body.details).toMatchObject({ adapter: 'stand-in', resource: 'quotes', attempts: [{ adapter: 'stand-in', cause: 'timeout' }] });
  });

  it.each([
    ['a non-JSON body', () => HttpResponse.text('<html>maintenance</html>', { status: 200 })],
    ['JSON of the wrong shape', () => HttpResponse.json({ quotes: [{ code: '600519.SH', price: 'n/a' }] })],
  ])('%s → 502 UPSTREAM_BAD_RESPONSE', async (_name, responder) => {
    vendorSequence(responder);
    const app = await setup();
    const body = expectError(await get(app, '/v1/quotes?symbols=600519.SH'), 502, 'UPSTREAM_BAD_RESPONSE');
    expect(body.message).not.toContain('maintenance');
  });

  it('a failing CN vendor leaves the HK part of a batch intact (X-Failed-Symbols names the CN symbol)', async () => {
    vendorSequence(() => new HttpResponse(null, { status: 500 }));
    const app = await setup();
    const res = await get(app, '/v1/quotes?symbols=600519.SH,00700.HK');
    expect(res.statusCode).toBe(200);
    // Issue 8: a vendor failure is never reported as an unknown symbol.
    expect(res.headers['x-failed-symbols']).toBe('600519.SH');
    expect(res.headers['x-missing-symbols']).toBeUndefined();
    expect(res.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(['00700.HK']);
  });

  it('a symbol that failed upstream is not cached as missing: once the vendor recovers it is answered', async () => {
    const fail = () => new HttpResponse(null, { status: 500 });
    const urls = vendorSequence(fail, quotesFor);
    const app = await setup();
    const during = await get(app, '/v1/quotes?symbols=600519.SH,00700.HK');
    expect(during.headers['x-failed-symbols']).toBe('600519.SH');
    expect(during.headers['x-missing-symbols']).toBeUndefined();
    expect(urls).toHaveLength(1);
    const after = await get(app, '/v1/quotes?symbols=600519.SH,00700.HK');
    expect(after.statusCode).toBe(200);
    expect(after.headers['x-missing-symbols']).toBeUndefined();
    expect(after.headers['x-failed-symbols']).toBeUndefined();
    expect(after.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(['600519.SH', '00700.HK']);
    expect(urls).toHaveLength(2);
  });
});
