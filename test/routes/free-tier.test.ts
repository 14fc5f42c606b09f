// The free tier (issue 25, item 5): requests without a key get the keys file's `anonymous` plan,
// limited per client address (an IPv6 /64 as one, the forwarded address behind a trusted proxy);
// a wrong key stays 401; without `anonymous` a key is required. The official client's
// `TickFlow.free(base_url=…)` sends no x-api-key (tickflow-org/tickflow client.py `free()` passes
// api_key=None; _base_client.py `_build_headers` adds x-api-key only when a key is set).
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildTestApp } from '../helpers/app.ts';

const FREE_PLAN = {
  markets: ['CN', 'HK', 'US'],
  features: ['klines_daily', 'instruments', 'ex_factors', 'batch'],
  rate_limit: { max: 60, window_ms: 60000 },
  max_symbols: 500,
};

function keys(anonymous: boolean, max = 60): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: {
      free: { ...FREE_PLAN, rate_limit: { max, window_ms: 60000 } },
      paid: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'klines_daily'], rate_limit: { max: 1000, window_ms: 60000 }, max_symbols: 100 },
    },
    keys: [{ id: 'paid', plan: 'paid', sha256: sha256Hex('paid-key') }],
    ...(anonymous ? { anonymous: { plan: 'free' } } : {}),
  }));
}

/** The free client's headers: no x-api-key. */
const FREE_HEADERS = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'tickflow-python-sdk/0.1.21' };

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const free = (opts: InjectOptions) => app!.inject({ ...opts, headers: { ...FREE_HEADERS, ...(opts.headers ?? {}) } });

describe('the free tier', () => {
  it('replays TickFlow.free(): daily klines, batch, instruments (GET and the 500-name POST), exchanges, universes, ex-factors', async () => {
    ({ app } = await buildTestApp({ keys: keys(true) }));
    const ok = [
      { method: 'GET', url: '/v1/klines?symbol=600000.SH&period=1d&count=100' },
      { method: 'GET', url: '/v1/klines?symbol=AAPL.US&period=1w&count=10&adjust=forward' },
      { method: 'GET', url: '/v1/klines/batch?symbols=600000.SH,00700.HK,AAPL.US&period=1d&count=5' },
      { method: 'GET', url: '/v1/klines/ex-factors?symbols=600519.SH,00700.HK' },
      { method: 'GET', url: '/v1/instruments?symbols=600000.SH' },
      { method: 'GET', url: '/v1/exchanges' },
      { method: 'GET', url: '/v1/exchanges/SH/instruments?type=stock' },
      { method: 'GET', url: '/v1/universes' },
      { method: 'GET', url: '/v1/universes/CN_Equity_A' },
      { method: 'POST', url: '/v1/universes/batch', payload: JSON.stringify({ ids: ['CN_Stock', 'HK_Stock'] }) },
    ] as const;
    for (const request of ok) {
      const res = await free(request as InjectOptions);
      expect(res.statusCode, request.url).toBe(200);
      expect(res.headers['x-ratelimit-limit'], request.url).toBe('60');
      expect(res.json()).toHaveProperty('data');
    }
    // The DataFrame name lookup: POST /v1/instruments in chunks of 500 (the plan's cap admits it).
    const universe = (await free({ method: 'GET', url: '/v1/universes/CN_Stock' })).json().data.symbols as string[];
    const names = Array.from({ length: 500 }, (_, i) => universe[i % universe.length]);
    const lookup = await free({ method: 'POST', url: '/v1/instruments', payload: JSON.stringify({ symbols: names }) });
    expect(lookup.statusCode).toBe(200);
    // What the free tier does not have: quotes, minute bars (401: no key was sent, issue 43.2).
    const quotes = await free({ method: 'GET', url: '/v1/quotes?symbols=600000.SH' });
    expect(quotes.statusCode).toBe(401);
    expect(quotes.json()).toMatchObject({ error: 'MISSING_API_KEY', details: { missing_features: ['quotes'] } });
    const minute = await free({ method: 'GET', url: '/v1/klines?symbol=600000.SH&period=1m&count=10' });
    expect(minute.statusCode).toBe(401);
    expect(minute.json()).toMatchObject({ error: 'MISSING_API_KEY', details: { missing_features: ['klines_minute'] } });
  });

  it('limits per client address: one address spent, another still served; an IPv6 /64 is one address', async () => {
    ({ app } = await buildTestApp({ keys: keys(true, 3) }));
    const from = (remoteAddress: string) => free({ method: 'GET', url: '/v1/universes', remoteAddress });
    for (let i = 0; i < 3; i++) expect((await from('203.0.113.7')).statusCode).toBe(200);
    const spent = await from('203.0.113.7');
    expect(spent.statusCode).toBe(429);
    expect(spent.json()).toMatchObject({ error: 'RATE_LIMITED' });
    expect(Number(spent.headers['retry-after'])).toBeGreaterThan(0);
    const other = await from('198.51.100.9');
    expect(other.statusCode).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('2');
    // A key is counted on its own, never in an address's free bucket.
    const keyed = await app!.inject({ method: 'GET', url: '/v1/universes', remoteAddress: '203.0.113.7', headers: { 'x-api-key': 'paid-key' } });
    expect(keyed.statusCode).toBe(200);
    expect(keyed.headers['x-ratelimit-limit']).toBe('1000');
    // Two addresses of one IPv6 /64 share a bucket; another /64 has its own.
    for (let i = 0; i < 3; i++) expect((await from(`2001:db8:1:2::${i + 1}`)).statusCode).toBe(200);
    expect((await from('2001:db8:1:2:ffff::9')).statusCode).toBe(429);
    expect((await from('2001:db8:1:3::1')).statusCode).toBe(200);
  });

  it('behind a trusted proxy, counts the forwarded address', async () => {
    ({ app } = await buildTestApp({ keys: keys(true, 2), configure: (c) => { c.server.trustProxy = true; } }));
    const via = (forwarded: string) => free({ method: 'GET', url: '/v1/universes', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': forwarded } });
    expect((await via('192.0.2.1')).statusCode).toBe(200);
    expect((await via('192.0.2.1')).statusCode).toBe(200);
    expect((await via('192.0.2.1')).statusCode).toBe(429);
    expect((await via('192.0.2.2')).statusCode).toBe(200);
  });

  it('a wrong key stays 401, never the free tier', async () => {
    ({ app } = await buildTestApp({ keys: keys(true) }));
    const res = await free({ method: 'GET', url: '/v1/universes', headers: { 'x-api-key': 'not-a-key' } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'INVALID_API_KEY' });
    const query = await free({ method: 'GET', url: '/v1/universes?api_key=not-a-key' });
    expect(query.statusCode).toBe(401);
  });

  it('is off when the keys file names no anonymous plan: no key is 401', async () => {
    ({ app } = await buildTestApp({ keys: keys(false) }));
    const res = await free({ method: 'GET', url: '/v1/universes' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'MISSING_API_KEY' });
  });

  it('the fast path never serves a keyless request with a key\'s limits: it goes the normal way, limited per address', async () => {
    ({ app } = await buildTestApp({ keys: keys(true, 2) }));
    const url = '/v1/klines?symbol=600000.SH&period=1d&count=5';
    // A keyed request records the URL for the fast path and caches its answer.
    const keyed = await app!.inject({ method: 'GET', url, headers: { 'x-api-key': 'paid-key' } });
    expect(keyed.statusCode).toBe(200);
    const hit = await app!.inject({ method: 'GET', url, headers: { 'x-api-key': 'paid-key' } });
    expect(hit.headers['x-cache']).toBe('HIT');
    const a = await free({ method: 'GET', url, remoteAddress: '203.0.113.50' });
    const b = await free({ method: 'GET', url, remoteAddress: '203.0.113.50' });
    const c = await free({ method: 'GET', url, remoteAddress: '203.0.113.50' });
    expect([a.statusCode, b.statusCode, c.statusCode]).toEqual([200, 200, 429]);
    expect(a.headers['x-ratelimit-limit']).toBe('2');
  });

  it('the default keys file enables it for local use: plan free, demo (loopback under server.host auto)', () => {
    const file = parse(readFileSync(new URL('../../config/keys.yaml', import.meta.url), 'utf8'));
    const store = new KeyStore(parseKeysFile(file));
    const anonymous = store.anonymous!;
    expect(anonymous.plan.name).toBe('free');
    expect([...anonymous.plan.markets].sort()).toEqual(['CN', 'HK', 'US']);
    expect([...anonymous.plan.features].sort()).toEqual(['batch', 'ex_factors', 'instruments', 'klines_daily']);
    expect(anonymous.plan.rateLimit).toEqual({ max: 60, windowMs: 60000 });
    expect(anonymous.plan.maxSymbols).toBeGreaterThanOrEqual(500);
    expect(store.demoKeyIds).toContain('anonymous');
  });

  it('a keys file naming an unknown anonymous plan is refused', () => {
    expect(() => parseKeysFile({ plans: { free: FREE_PLAN }, keys: [], anonymous: { plan: 'gold' } })).toThrow(/anonymous\.plan: names unknown plan gold/);
  });
});
