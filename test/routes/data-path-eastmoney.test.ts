// Eastmoney's "no such code" answers through the real app (issue 8.6) with msw over its real
// envelopes: rc ≠ 0 with data:null are unknown symbols (X-Missing-Symbols / 404), never
// UPSTREAM_ERROR, and 20 of them leave the eastmoney circuit closed and /readyz ready.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { EASTMONEY_TEST_HOSTS as HOSTS, eastmoneyHandlers } from '../../mocks/handlers/eastmoney.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const server = setupServer(...eastmoneyHandlers());
// Tuesday 2024-06-04 16:00 Shanghai: CN closed, answers from the last session.
const NOW = Date.UTC(2024, 5, 4, 8, 0, 0);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

let app: FastifyInstance;
afterEach(async () => {
  server.resetHandlers();
  await app.close();
});

async function setup() {
  const routing = { markets: { CN: ['eastmoney'], HK: ['eastmoney'], US: ['sim'] }, overrides: {}, allowSimFallback: false, strict: false };
  const adapters = {
    sim: {},
    eastmoney: {
      quoteHosts: HOSTS.quote, historyHosts: HOSTS.history, datacenterHosts: HOSTS.datacenter,
      http: { retry: { maxRetries: 0 }, breaker: { failureThreshold: 5, openMs: 30_000 } },
    },
  };
  const now = () => NOW;
  const deps = productionDeps(now);
  const built = createAdapters(routing, adapters, deps);
  ({ app } = await buildTestApp({
    now,
    adapters: built,
    upstreamClients: deps.clients,
    configure: (c) => Object.assign(c, { routing, adapters }),
  }));
  return (url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
}

const rc = (name: string) => () => HttpResponse.json(fixture('eastmoney', name));

/** Every push2 / push2his endpoint answers "no such code" (rc 100 / 102, data: null). */
function everythingUnknown(): void {
  server.use(
    ...HOSTS.quote.flatMap((h) => [
      http.get(`${h}/api/qt/ulist.np/get`, rc('ulist-unknown-rc100')),
      http.get(`${h}/api/qt/stock/get`, rc('rc-error')),
      http.get(`${h}/api/qt/stock/trends2/get`, rc('rc-error')),
    ]),
    ...HOSTS.history.map((h) => http.get(`${h}/api/qt/stock/kline/get`, rc('rc-error'))),
  );
}

describe('eastmoney rc answers through the app', () => {
  it('a known and an unknown code in one batch: 200, X-Missing-Symbols names the unknown, nothing failed', async () => {
    const get = await setup();
    const res = await get('/v1/quotes?symbols=600519.SH,600001.SH');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(['600519.SH']);
    expect(res.headers['x-missing-symbols']).toBe('600001.SH');
    expect(res.headers['x-failed-symbols']).toBeUndefined();
  });

  it('20 unknown-code lookups across routes: answers (200 / 404), and the circuit stays closed', async () => {
    everythingUnknown();
    const get = await setup();
    const routes: Array<(code: string) => [string, number]> = [
      (code) => [`/v1/quotes?symbols=${code}`, 200],
      (code) => [`/v1/depth?symbol=${code}`, 404],
      (code) => [`/v1/instruments?symbols=${code}`, 200],
      (code) => [`/v1/klines?symbol=${code}&adjust=none`, 404],
      (code) => [`/v1/klines/intraday?symbol=${code}`, 404],
    ];
    for (let i = 0; i < 20; i += 1) {
      const code = `6000${String(i + 10)}.SH`;
      const [url, expected] = routes[i % routes.length](code);
      const res = await get(url);
      expect(res.statusCode).toBe(expected);
      if (expected === 200) expect(res.headers['x-missing-symbols']).toBe(code);
      else expect(res.json().error).toBe('SYMBOL_NOT_FOUND');
    }
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().adapters.eastmoney).toMatchObject({ ready: true, circuit: 'closed' });
    const metrics = (await app.inject({ url: '/metrics' })).body;
    expect(metrics).toContain('mdqs_circuit_state{adapter="eastmoney"} 0');
  });
});
