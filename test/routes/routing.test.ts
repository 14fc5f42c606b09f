// Routing per market through the real app: config maps each market to an ordered adapter chain
// (with per-resource overrides); the next adapter is tried on failure or a missing capability.
// Vendors are mocked with msw from their real wire formats (mocks/handlers).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import type { FastifyInstance } from 'fastify';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { tickflowHandlers, TICKFLOW_TEST_BASE } from '../../mocks/handlers/tickflow.ts';
import { yahooHandlers, YAHOO_TEST_BASE } from '../../mocks/handlers/yahoo.ts';
import type { CapturedRequest } from '../../mocks/handlers/support.ts';
import { createMetrics, upstreamSink } from '../../src/metrics.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { loadDefaultConfig } from '../../config/load.ts';

const log: CapturedRequest[] = [];
const server = setupServer(...tickflowHandlers(log), ...yahooHandlers(log));
// Tuesday 2024-06-04 04:00 New York: markets closed, so answers come from the last session.
const NOW = Date.UTC(2024, 5, 4, 8, 0, 0);

let app: FastifyInstance;

beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' });
  const config = loadDefaultConfig();
  config.routing.markets = { CN: ['tickflow', 'sim'], HK: ['tickflow', 'sim'], US: ['yahoo', 'sim'] };
  config.routing.overrides = { depth: { US: ['yahoo', 'sim'] } };
  // Issue 8: sim may follow a real vendor only when the config says so.
  config.routing.allowSimFallback = true;
  config.adapters = {
    sim: {},
    tickflow: { baseUrl: TICKFLOW_TEST_BASE, apiKey: 'vendor-secret', http: { retry: { maxRetries: 0 } } },
    yahoo: { baseUrl: YAHOO_TEST_BASE },
  };
  const metrics = createMetrics();
  const now = () => NOW;
  const deps = productionDeps(now, upstreamSink(metrics));
  const adapters = createAdapters(config.routing, config.adapters, deps);
  ({ app } = await buildTestApp({ now, adapters, metrics, upstreamClients: deps.clients, configure: (c) => Object.assign(c, { routing: config.routing, adapters: config.adapters }) }));
});
afterEach(() => {
  server.resetHandlers();
  log.length = 0;
});
afterAll(async () => {
  await app.close();
  server.close();
});

const get = (url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });

describe('routing per market', () => {
  it('each market is served by the head of its chain, with our key never sent upstream', async () => {
    const res = await get('/v1/quotes?symbols=600519.SH,AAPL.US');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('tickflow,yahoo');
    const data = res.json().data as Array<{ symbol: string }>;
    expect(data.map((q) => q.symbol)).toEqual(['600519.SH', 'AAPL.US']);
    const tickflowCall = log.find((r) => r.url.origin === TICKFLOW_TEST_BASE);
    expect(tickflowCall?.headers.get('x-api-key')).toBe('vendor-secret');
    expect(log.every((r) => !r.url.href.includes(KEYS.demo) && r.headers.get('x-api-key') !== KEYS.demo)).toBe(true);
  });

  it('a missing capability moves to the next adapter: yahoo has no depth', async () => {
    const res = await get('/v1/depth?symbol=AAPL.US');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    expect(log.some((r) => r.url.origin === YAHOO_TEST_BASE)).toBe(false);
  });

  it('a failing vendor moves to the next adapter in the chain', async () => {
    let vendorCalls = 0;
    server.use(http.get(`${TICKFLOW_TEST_BASE}/v1/depth/batch`, () => {
      vendorCalls += 1;
      return HttpResponse.json({ code: 'INTERNAL', message: 'boom' }, { status: 500 });
    }));
    const res = await get('/v1/depth?symbol=000001.SZ');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    expect(vendorCalls).toBe(1);
  });

  it('/readyz and /metrics report each adapter', async () => {
    await get('/v1/quotes?symbols=00700.HK');
    const ready = (await app.inject({ url: '/readyz' })).json();
    expect(Object.keys(ready.adapters).sort()).toEqual(['sim', 'tickflow', 'yahoo']);
    // Issue 8: breaker and budget state per adapter (tickflow's budget is 600 a minute; this file spent some).
    expect(ready.adapters.tickflow).toEqual({
      ready: true, circuit: 'closed', in_flight: 0, queued: 0, budget_remaining: expect.any(Number),
      // Issue 27.2: the vendor budget's use (per process here: no Redis).
      budget: { max: 600, window_ms: 60_000, scope: 'local', remaining: expect.any(Number), taken: expect.any(Number), waits: 0, refused: 0 },
    });
    expect(ready.adapters.tickflow.budget_remaining).toBeLessThan(600);
    expect(ready.adapters.tickflow.budget_remaining).toBeGreaterThan(590);
    expect(ready.adapters.sim.budget_remaining).toBeNull();
    expect(ready.markets.CN).toEqual({ ready: true, adapters: ['tickflow', 'sim'] });
    const metrics = (await app.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/mdqs_upstream_requests_total\{adapter="tickflow",resource="quotes",outcome="ok"\} \d+/);
    expect(metrics).toMatch(/mdqs_circuit_state\{adapter="yahoo"\} 0/);
  });
});
