// Unknown symbols from a real vendor's wire format (tickflow, msw over mocks/handlers/tickflow.ts)
// through the real app's batch routes: the vendor's 404 SYMBOL_NOT_FOUND on a single-symbol
// endpoint is an unknown symbol of the batch (X-Missing-Symbols), not a 404 for the whole batch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { setupServer } from 'msw/node';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { tickflowHandlers, TICKFLOW_TEST_BASE } from '../../mocks/handlers/tickflow.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const server = setupServer(...tickflowHandlers());
// Tuesday 2024-06-04 16:00 Shanghai: CN closed, answers from the last session.
const NOW = Date.UTC(2024, 5, 4, 8, 0, 0);
let app: FastifyInstance;

beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' });
  const routing = { markets: { CN: ['tickflow'], HK: ['tickflow'], US: ['tickflow'] }, overrides: {}, allowSimFallback: false, strict: false };
  const adapters = { tickflow: { baseUrl: TICKFLOW_TEST_BASE, apiKey: 'vendor-secret', http: { retry: { maxRetries: 0 } } } };
  const now = () => NOW;
  const deps = productionDeps(now);
  ({ app } = await buildTestApp({
    now,
    adapters: createAdapters(routing, adapters, deps),
    upstreamClients: deps.clients,
    configure: (c) => Object.assign(c, { routing, adapters }),
  }));
});
afterAll(async () => {
  await app.close();
  server.close();
});

const get = (url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });

describe('tickflow unknown symbols in batch routes', () => {
  it.each([
    ['/v1/klines/batch', '/v1/klines/batch?symbols=600519.SH,000001.SZ&period=1d&count=3&adjust=none'],
    ['/v1/klines/intraday/batch', '/v1/klines/intraday/batch?symbols=600519.SH,000001.SZ&count=3'],
  ])('%s: the known symbol answered, the unknown one in X-Missing-Symbols', async (_name, url) => {
    const res = await get(url);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json().data)).toEqual(['600519.SH']);
    expect(res.headers['x-missing-symbols']).toBe('000001.SZ');
    expect(res.headers['x-failed-symbols']).toBeUndefined();
  });

  it('the single-symbol route answers 404 SYMBOL_NOT_FOUND, and the circuit stays closed', async () => {
    for (let i = 0; i < 6; i += 1) {
      const res = await get(`/v1/klines?symbol=6000${String(i + 10)}.SH&period=1d&count=3&adjust=none`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: 'SYMBOL_NOT_FOUND' });
    }
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.json().adapters.tickflow).toMatchObject({ circuit: 'closed' });
  });
});
