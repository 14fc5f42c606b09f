// Issue 29 ("what may I call?"): GET /v1/me answers the key's id, plan, markets, features, caps,
// rate limit with what remains (the request itself counted; fleet-wide through Redis, `shared`),
// stream caps and expiry, never the key; without a key, 401, or the free tier for this address.
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { connectedClient, describeRedis, startPrivateRedis, type PrivateRedis } from '../redis/support.ts';
import type { Redis } from 'ioredis';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function app(options: Parameters<typeof buildTestApp>[0] = {}): Promise<FastifyInstance> {
  const built = (await buildTestApp(options)).app;
  apps.push(built);
  return built;
}

const me = (a: FastifyInstance, headers: Record<string, string> = {}, remoteAddress?: string) =>
  a.inject({ url: '/v1/me', headers, ...(remoteAddress ? { remoteAddress } : {}) });

const EXPIRES = '2030-01-31T00:00:00Z';

function keysWithFreeTier(): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: {
      pro: {
        markets: ['US', 'CN'], features: ['klines_daily', 'quotes', 'depth'], rate_limit: { max: 50, window_ms: 30_000 },
        max_symbols: 7, max_bars: 1234, max_connections: 3, max_subscriptions: 40,
      },
      free: { markets: ['HK'], features: ['instruments'], rate_limit: { max: 5, window_ms: 60_000 }, max_symbols: 2 },
    },
    keys: [{ id: 'pro-team', plan: 'pro', sha256: sha256Hex('pro-key'), expires: EXPIRES }],
    anonymous: { plan: 'free' },
  }), undefined, () => CN_MORNING);
}

describe('GET /v1/me', () => {
  it('the demo key: the fixed shape, the plan as the keys file says, never the key', async () => {
    const a = await app();
    const res = await me(a, { 'x-api-key': KEYS.demo });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).not.toContain(KEYS.demo);
    expect(res.body).not.toContain(sha256Hex(KEYS.demo));
    const { data } = res.json() as { data: Record<string, unknown> };
    expect(data).toEqual({
      key_id: 'demo',
      anonymous: false,
      plan: 'demo',
      markets: ['CN', 'HK', 'US', 'CN_FUTURES'],
      features: [...FEATURES],
      max_symbols: 100,
      max_bars: 500_000,
      rate_limit: { limit: 100_000, window_ms: 60_000, remaining: 99_999, reset_at: CN_MORNING + 60_000, shared: false },
      stream: { max_connections: 10, max_subscriptions: 200 },
      expires_at: null,
    });
    // The same numbers as the rate-limit headers of the same answer.
    expect(res.headers['x-ratelimit-remaining']).toBe('99999');
    expect(res.headers['x-ratelimit-limit']).toBe('100000');
  });

  it('a narrower key: its own markets (canonical order), features, caps, stream caps and expiry', async () => {
    const a = await app({ keys: keysWithFreeTier() });
    const { data } = (await me(a, { 'x-api-key': 'pro-key' })).json() as { data: Record<string, unknown> };
    expect(data).toMatchObject({
      key_id: 'pro-team', anonymous: false, plan: 'pro', markets: ['CN', 'US'], features: ['quotes', 'depth', 'klines_daily'],
      max_symbols: 7, max_bars: 1234, stream: { max_connections: 3, max_subscriptions: 40 }, expires_at: Date.parse(EXPIRES),
      rate_limit: { limit: 50, window_ms: 30_000, remaining: 49, shared: false },
    });
  });

  it('counts like any request: remaining falls with other calls and with /v1/me itself, and reaches 429', async () => {
    let now = CN_MORNING;
    const a = await app({ now: () => now });
    await a.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': KEYS.tiny } });
    now += 1000;
    const first = (await me(a, { 'x-api-key': KEYS.tiny })).json() as { data: { rate_limit: Record<string, number> } };
    // tiny: 3 a minute. One quote and this request: 1 left; the oldest admission frees a slot at +60 s.
    expect(first.data.rate_limit).toEqual({ limit: 3, window_ms: 60_000, remaining: 1, reset_at: CN_MORNING + 60_000, shared: false });
    const second = (await me(a, { 'x-api-key': KEYS.tiny })).json() as { data: { rate_limit: Record<string, number> } };
    expect(second.data.rate_limit.remaining).toBe(0);
    const third = await me(a, { 'x-api-key': KEYS.tiny });
    expect(third.statusCode).toBe(429);
    expect(third.json()).toMatchObject({ error: 'RATE_LIMITED' });
  });

  it('without a key and without a free tier: 401 as for any route; a wrong key: 401', async () => {
    const a = await app();
    const none = await me(a);
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ error: 'MISSING_API_KEY' });
    expect((await me(a, { 'x-api-key': 'nope' })).json()).toMatchObject({ error: 'INVALID_API_KEY' });
  });

  it('without a key under a free tier: anonymous, key_id null, the plan and this address\'s own budget', async () => {
    const a = await app({ keys: keysWithFreeTier() });
    const one = await me(a, {}, '198.51.100.1');
    expect(one.statusCode).toBe(200);
    expect((one.json() as { data: unknown }).data).toEqual({
      key_id: null,
      anonymous: true,
      plan: 'free',
      markets: ['HK'],
      features: ['instruments'],
      max_symbols: 2,
      max_bars: 500_000,
      rate_limit: { limit: 5, window_ms: 60_000, remaining: 4, reset_at: CN_MORNING + 60_000, shared: false },
      stream: { max_connections: 10, max_subscriptions: 200 },
      expires_at: null,
    });
    await me(a, {}, '198.51.100.1');
    const again = (await me(a, {}, '198.51.100.1')).json() as { data: { rate_limit: { remaining: number } } };
    expect(again.data.rate_limit.remaining).toBe(2);
    // Another address has its own budget.
    const other = (await me(a, {}, '198.51.100.2')).json() as { data: { rate_limit: { remaining: number } } };
    expect(other.data.rate_limit.remaining).toBe(4);
    // A wrong key is never downgraded to the free tier.
    expect((await me(a, { 'x-api-key': 'nope' }, '198.51.100.3')).statusCode).toBe(401);
  });

  it('is documented in the OpenAPI document with its shape', async () => {
    const a = await app();
    const doc = (await a.inject({ url: '/v1/openapi.json' })).json() as { paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: { properties: Record<string, { properties: Record<string, unknown> }> } }> }> }>> };
    const data = doc.paths['/v1/me'].get.responses['200'].content['application/json'].schema.properties.data;
    expect(Object.keys(data.properties).sort()).toEqual(['anonymous', 'expires_at', 'features', 'key_id', 'markets', 'max_bars', 'max_symbols', 'plan', 'rate_limit', 'stream'].sort());
    expect(Object.keys(data.properties.rate_limit as object)).toContain('properties');
  });
});

describeRedis('GET /v1/me with Redis sharing the limit', () => {
  let redis: PrivateRedis | undefined;
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await redis?.kill();
  });

  it('remaining is fleet-wide (shared: true); with Redis down, this instance\'s share (shared: false)', async () => {
    redis = await startPrivateRedis();
    const configure = (config: { redis: { instances?: number } }) => { config.redis.instances = 2; };
    const a = await app({ redis: await connectedClient(redis.url, clients), configure: configure as never });
    const b = await app({ redis: await connectedClient(redis.url, clients), configure: configure as never });
    await a.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': KEYS.tiny } });
    const seen = (await me(b, { 'x-api-key': KEYS.tiny })).json() as { data: { rate_limit: { limit: number; remaining: number; shared: boolean } } };
    // One request on instance a, this one on b: 1 of 3 left for the whole fleet.
    expect(seen.data.rate_limit).toMatchObject({ limit: 3, remaining: 1, shared: true });
    await redis.kill();
    const alone = (await me(b, { 'x-api-key': KEYS.demo })).json() as { data: { rate_limit: { limit: number; remaining: number; shared: boolean } } };
    // Redis down: each of the 2 instances admits half of the demo test plan's 100000, counted here.
    expect(alone.data.rate_limit).toMatchObject({ limit: 50_000, remaining: 49_999, shared: false });
  });
});
