// The partial-failure policy with an HTTP vendor behind msw (the stand-in of test/helpers/fake-adapter.ts
// on the real upstream HTTP layer): a vendor outage is X-Failed-Symbols, never "missing", never
// cached; an unknown code is X-Missing-Symbols and cached; unknown-code answers and vendor 429s never
// open the circuit; the vendor's budget and circuit show in /readyz.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Adapter } from '../../adapters/types.ts';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { createStandInVendor, STAND_IN_URL, vendorQuote } from '../helpers/fake-adapter.ts';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

// Closing an app closes the vendor clients it was given (buildApp's onClose).
const apps: FastifyInstance[] = [];
afterEach(async () => {
  server.resetHandlers();
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const KNOWN = new Set(['600519.SH', '601318.SH']);

/** Each vendor call gets the next responder (the last repeats); returns the requested symbol lists. */
function vendorSequence(...responders: Array<(symbols: string[]) => Response>): string[][] {
  const calls: string[][] = [];
  server.use(http.get(STAND_IN_URL, ({ request }) => {
    const symbols = (new URL(request.url).searchParams.get('symbols') ?? '').split(',');
    const responder = responders[Math.min(calls.length, responders.length - 1)];
    calls.push(symbols);
    return responder(symbols);
  }));
  return calls;
}

const answer = (symbols: string[]) => HttpResponse.json({
  quotes: symbols.filter((s) => KNOWN.has(s)).map((s) => vendorQuote(s, 1500, CN_MORNING - 3_000)),
});
const status = (code: number, headers: Record<string, string> = {}) => () => new HttpResponse(null, { status: code, headers });

async function setup(deadlineMs = 5_000) {
  const now = () => CN_MORNING;
  const vendor = createStandInVendor({ now, retry: { maxRetries: 0, baseDelayMs: 5 } });
  const adapters = new Map<string, Adapter>([['stand-in', vendor.adapter], ['sim', createSimAdapter({}, { now })]]);
  const { app } = await buildTestApp({
    now,
    adapters,
    upstreamClients: new Map([['stand-in', vendor.client]]),
    configure: (c) => {
      c.routing.markets = { CN: ['stand-in'], HK: ['sim'], US: ['sim'] };
      c.upstream.deadlineMs = deadlineMs;
      c.upstream.breaker = { failureThreshold: 3, openMs: 30_000 };
    },
  });
  apps.push(app);
  const get = (url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
  const standIn = async () => (await app.inject({ url: '/readyz' })).json().adapters['stand-in'];
  return { app, get, standIn };
}

const symbols = (res: { json(): { data: Array<{ symbol: string }> } }) => res.json().data.map((q) => q.symbol);

describe('an HTTP vendor behind msw: unknown vs failed', () => {
  it('vendor 500 for the CN part: 200 partial with X-Failed-Symbols, not X-Missing-Symbols; not stored', async () => {
    const calls = vendorSequence(status(500), status(500), answer);
    const { get } = await setup();
    const url = '/v1/quotes?symbols=600519.SH,00700.HK';
    const res = await get(url);
    expect(res.statusCode).toBe(200);
    expect(symbols(res)).toEqual(['00700.HK']);
    expect(res.headers['x-failed-symbols']).toBe('600519.SH');
    expect(res.headers['x-missing-symbols']).toBeUndefined();
    const again = await get(url);
    expect(again.headers['x-failed-symbols']).toBe('600519.SH');
    expect(calls).toHaveLength(2);
    const recovered = await get(url);
    expect(recovered.headers['x-failed-symbols']).toBeUndefined();
    expect(symbols(recovered)).toEqual(['600519.SH', '00700.HK']);
    expect(calls).toHaveLength(3);
  });

  it('an unknown code is X-Missing-Symbols, and the answer is cached (HIT, no second vendor call)', async () => {
    const calls = vendorSequence(answer);
    const { get } = await setup();
    const url = '/v1/quotes?symbols=600519.SH,600001.SH';
    const res = await get(url);
    expect(res.statusCode).toBe(200);
    expect(symbols(res)).toEqual(['600519.SH']);
    expect(res.headers['x-missing-symbols']).toBe('600001.SH');
    expect(res.headers['x-failed-symbols']).toBeUndefined();
    const again = await get(url);
    expect(again.headers['x-cache']).toBe('HIT');
    expect(again.headers['x-missing-symbols']).toBe('600001.SH');
    expect(calls).toEqual([['600519.SH', '600001.SH']]);
  });

  it.each([
    ['vendor 500', 502, 'UPSTREAM_ERROR', [status(500)]],
    ['vendor 429', 503, 'UPSTREAM_UNAVAILABLE', [status(429, { 'retry-after': '5' })]],
    ['unreadable body', 502, 'UPSTREAM_BAD_RESPONSE', [() => HttpResponse.text('<html>maintenance</html>')]],
  ] as const)('every symbol failed (%s) → %i %s', async (_name, code, reason, responders) => {
    vendorSequence(...responders);
    const { get } = await setup();
    const res = await get('/v1/quotes?symbols=600519.SH,601318.SH');
    expect(res.statusCode).toBe(code);
    expect(res.json()).toMatchObject({ code, error: reason });
  });

  it('a vendor that does not answer within the deadline → 504 UPSTREAM_TIMEOUT', async () => {
    server.use(http.get(STAND_IN_URL, () => new Promise<Response>(() => undefined)));
    const { get } = await setup(100);
    const res = await get('/v1/quotes?symbols=600519.SH');
    expect(res.statusCode).toBe(504);
    expect(res.json()).toMatchObject({ code: 504, error: 'UPSTREAM_TIMEOUT' });
  });
});

describe('an HTTP vendor behind msw: the breaker and /readyz', () => {
  it('20 unknown-code answers leave the circuit closed; the budget spent shows in /readyz', async () => {
    const calls = vendorSequence(answer);
    const { get, standIn } = await setup();
    for (let i = 0; i < 20; i += 1) {
      const res = await get(`/v1/quotes?symbols=6000${String(i + 10)}.SH`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-missing-symbols']).toBe(`6000${String(i + 10)}.SH`);
    }
    expect(calls).toHaveLength(20);
    expect(await standIn()).toEqual({ ready: true, circuit: 'closed', in_flight: 0, queued: 0, budget_remaining: 980 });
  });

  it('vendor 429s give no breaker verdict: the circuit stays closed', async () => {
    vendorSequence(status(429, { 'retry-after': '1' }));
    const { get, standIn } = await setup();
    for (let i = 0; i < 5; i += 1) expect((await get(`/v1/quotes?symbols=6000${String(i + 10)}.SH`)).statusCode).toBe(503);
    expect((await standIn()).circuit).toBe('closed');
  });

  it('three vendor 500s open the circuit: /readyz says CN is degraded (still 200: a shared fault), the next request fails fast without a vendor call', async () => {
    const calls = vendorSequence(status(500));
    const { app, get, standIn } = await setup();
    for (let i = 0; i < 3; i += 1) expect((await get(`/v1/quotes?symbols=6000${String(i + 10)}.SH`)).statusCode).toBe(502);
    expect((await standIn()).circuit).toBe('open');
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().status).toBe('degraded');
    expect(ready.json().markets.CN).toEqual({ ready: false, adapters: [] });
    expect(ready.json().degraded.map((d: { name: string }) => d.name)).toEqual(['adapter:stand-in', 'market:CN']);
    const fast = await get('/v1/quotes?symbols=600519.SH');
    expect(fast.statusCode).toBe(503);
    expect(fast.json()).toMatchObject({ error: 'UPSTREAM_UNAVAILABLE' });
    expect(fast.headers['retry-after']).toBe('30');
    expect(calls).toHaveLength(3);
  });
});
