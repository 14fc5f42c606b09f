// A symbol the vendor answered only with invalid rows is a vendor failure for that symbol, never
// an unknown symbol (issue 8 item 2, issue 14 item 4): tickflow (msw) sends a negative price for
// 00700.HK next to valid quotes; the answer lists it in X-Failed-Symbols, not X-Missing-Symbols,
// and nothing is cached for it, so the next request asks the vendor again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { TICKFLOW_TEST_BASE } from '../../mocks/handlers/tickflow.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

let calls = 0;
const server = setupServer(
  http.get(`${TICKFLOW_TEST_BASE}/v1/quotes`, () => {
    calls += 1;
    const { data } = fixture<{ data: Array<{ symbol: string; last_price: number }> }>('tickflow', 'quotes-ok');
    return HttpResponse.json({ data: data.map((q) => (q.symbol === '00700.HK' ? { ...q, last_price: -10.5 } : q)) });
  }),
  // Depth: every level of 00700.HK negative (nothing usable left), 600519.SH intact.
  http.get(`${TICKFLOW_TEST_BASE}/v1/depth/batch`, () => {
    const { data } = fixture<{ data: Record<string, { bid_prices: number[]; ask_prices: number[] }> }>('tickflow', 'depth-ok');
    const hk = data['00700.HK'];
    return HttpResponse.json({ data: { ...data, '00700.HK': { ...hk, bid_prices: hk.bid_prices.map((p) => -p), ask_prices: hk.ask_prices.map((p) => -p) } } });
  }),
);
const NOW = Date.UTC(2024, 5, 4, 8, 0, 0);
let app: FastifyInstance;

beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' });
  const routing = { markets: { CN: ['tickflow'], HK: ['tickflow'], US: ['tickflow'] }, overrides: {}, allowSimFallback: false, strict: false };
  const adapters = { tickflow: { baseUrl: TICKFLOW_TEST_BASE, apiKey: 'vendor-secret', http: { retry: { maxRetries: 0 } } } };
  const deps = productionDeps(() => NOW);
  ({ app } = await buildTestApp({
    now: () => NOW,
    adapters: createAdapters(routing, adapters, deps),
    upstreamClients: deps.clients,
    configure: (c) => Object.assign(c, { routing, adapters }),
  }));
});
afterAll(async () => {
  await app.close();
  server.close();
});

describe('a symbol with only invalid vendor rows', () => {
  it('is failed (X-Failed-Symbols), not unknown, and is asked again next time', async () => {
    const get = () => app.inject({ url: '/v1/quotes?symbols=600519.SH,00700.HK', headers: { 'x-api-key': KEYS.demo } });
    const first = await get();
    expect(first.statusCode).toBe(200);
    expect(first.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(['600519.SH']);
    expect(first.headers['x-failed-symbols']).toBe('00700.HK');
    expect(first.headers['x-missing-symbols']).toBeUndefined();
    const second = await get();
    expect(second.headers['x-failed-symbols']).toBe('00700.HK');
    expect(second.headers['x-cache']).not.toBe('HIT');
    // One call per market on the first request (CN, HK); the second asks again for HK only.
    expect(calls).toBe(3);
  });

  it('alone, it is the vendor\'s 502, never a 404', async () => {
    const res = await app.inject({ url: '/v1/quotes?symbols=00700.HK', headers: { 'x-api-key': KEYS.demo } });
    expect(res.statusCode).toBe(502);
    expect(res.json().error).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('the same for depth: the broken book is failed, not unknown', async () => {
    const res = await app.inject({ url: '/v1/depth/batch?symbols=600519.SH,00700.HK', headers: { 'x-api-key': KEYS.demo } });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json().data)).toEqual(['600519.SH']);
    expect(res.headers['x-failed-symbols']).toBe('00700.HK');
    expect(res.headers['x-missing-symbols']).toBeUndefined();
  });
});
