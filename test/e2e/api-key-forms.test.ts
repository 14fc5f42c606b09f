// Issue 43.2 over a real socket: a request without a key on a route the free plan lacks is 401
// MISSING_API_KEY saying no key was sent and what the free plan has; `Authorization: Bearer <key>`
// is the API key on /v1 (a wrong one is refused, never the free tier), on the normal path and on
// the cache-hit fast path; /metrics keeps its own token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildTestApp } from '../helpers/app.ts';

let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  const keys = new KeyStore(parseKeysFile({
    plans: {
      free: { markets: ['CN', 'HK', 'US'], features: ['klines_daily', 'instruments', 'ex_factors', 'batch'], rate_limit: { max: 60, window_ms: 60000 }, max_symbols: 500 },
      paid: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'klines_daily'], rate_limit: { max: 1000, window_ms: 60000 }, max_symbols: 100 },
    },
    keys: [{ id: 'paid', plan: 'paid', sha256: sha256Hex('paid-key') }],
    anonymous: { plan: 'free' },
  }));
  ({ app } = await buildTestApp({ keys, now: () => Date.UTC(2025, 5, 18, 2, 15, 30) }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
afterAll(() => app.close());

async function get(path: string, headers: Record<string, string> = {}) {
  const before = app.fastPathServed?.() ?? 0;
  const res = await fetch(`${base}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, fast: (app.fastPathServed?.() ?? 0) > before };
}

describe('no key on a route the free plan lacks', () => {
  it('is 401 MISSING_API_KEY saying no key was sent and what the free plan includes', async () => {
    const res = await get('/v1/quotes?symbols=600519.SH');
    expect(res.status).toBe(401);
    const body = JSON.parse(res.text);
    expect(body).toMatchObject({
      code: 401,
      error: 'MISSING_API_KEY',
      details: { plan: 'free', missing_features: ['quotes'], free_features: ['klines_daily', 'instruments', 'ex_factors', 'batch'], free_markets: ['CN', 'HK', 'US'] },
    });
    expect(body.message).toBe('no API key was sent, and the free plan (free) does not include feature quotes; '
      + 'it includes features klines_daily, instruments, ex_factors, batch on markets CN, HK, US. '
      + 'Send a key in the X-API-Key header (or Authorization: Bearer <key>, or the api_key query parameter)');
    // What the free plan includes is still served without a key.
    expect((await get('/v1/klines?symbol=600519.SH&period=1d&count=5')).status).toBe(200);
  });
});

describe('Authorization: Bearer <key>', () => {
  it('is the API key on /v1: the key\'s plan and limits, on the normal path and the fast path', async () => {
    const path = '/v1/quotes?symbols=600519.SH';
    const first = await get(path, { authorization: 'Bearer paid-key' });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(first.fast).toBe(false);
    const second = await get(path, { authorization: 'bearer paid-key' });
    expect(second.status).toBe(200);
    expect(second.fast).toBe(true);
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(Number(first.headers.get('x-ratelimit-remaining')) - 1);
    // X-API-Key wins when both are sent; /metrics reads its own token from that header, not a key.
    expect((await get(path, { 'x-api-key': 'paid-key', authorization: 'Bearer not-a-key' })).status).toBe(200);
    const metrics = await get('/metrics', { authorization: 'Bearer not-a-key' });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('# HELP');
  });

  it('a wrong Bearer key is 401 INVALID_API_KEY, never the free tier, on a route the free plan has', async () => {
    const res = await get('/v1/klines?symbol=600519.SH&period=1d&count=5', { authorization: 'Bearer not-a-key' });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text).error).toBe('INVALID_API_KEY');
  });
});
